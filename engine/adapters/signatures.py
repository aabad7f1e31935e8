"""Signature models: in the symbolic form, one compiled model holding a node for each of a set of
valid attribute signatures (a node's input rank and attributes), reused for every case of those
signatures whatever its shape: each call feeds the cases into the nodes of their signatures and a
small input (all ones in shape, zeros in value) into the others.

Which signatures a model holds:

- Drawing freely: every signature of one rank (``spec.VersionSpec.signatures``: 720 at
  ArgMin-12 and -13 over ranks 1 to 8, 132 at ArgMin-1), one model per (version, element type,
  rank). A runtime that compiles (TVM, IREE, OpenVINO) pays per node, so a packed model of the
  cases of one batch costs about as much as the nodes it holds, and is never asked again; a
  signature model costs its signatures once. Which is cheaper depends on how many cases a rank
  gets: at the standard profile the high ranks get a few dozen cases against 99 to 153
  signatures, at certify hundreds. So a rank's cases go through packs until as many of them have
  been asked as the rank has signatures, then through its signature model (the rent-or-buy rule:
  never more than twice what the cheaper choice would have cost); a model already compiled (in
  this process, or in the compile cache by another) is used at once.
- Within a schedule (generators.schedule): the schedule's signatures, every rank in one model per
  (version, element type), compiled at once: every case of the test is one of them.

A signature model that does not compile, or does not answer its small inputs, is split in halves
(a half that compiles serves its signatures; a failing half is split again while its sibling
compiles), so that a runtime refusing one attribute value (IREE's select_last_index at rank 3) or
a whole rank (IREE's symbolic rank 4) costs a few attempts, and the cases it cannot serve go
through packs, as they would without this module. A call that fails raises, as a pack does: the
caller (engine.asking.worker.answers) splits the cases in halves, which run on the same compiled
models. A schedule's model that does not compile is split by rank first (its ranks are mixed, so
both halves failing would say nothing of either), each rank's model as above; what does not
compile alone, or a rank both of whose halves fail, is kept (``refuses``): a pack holding one of
those signatures would fail to compile too, so it is not compiled (the adapter raises at once and
the pack is split as if it had been). A worker compiles a schedule's models before it asks the
schedule's first cases (``prepare``), so that their compiles are not charged to one case's time."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

import spec
from engine.contract.adapters import Schedule, dummy_codes
from engine.contract.replies import Reply
from results.outcomes import OK

from .models import Declared, packed_model

Key = tuple[int, str, int]  # (version, dtype, rank)
Signature = tuple[tuple[str, int], ...]
Slot = tuple[int, Signature]  # a node's (input rank, attributes)


def signature(attributes: Mapping[str, int]) -> Signature:
    return tuple(sorted(attributes.items()))


def _valid(opset: int, schedule: Schedule) -> tuple[Slot, ...]:
    """The schedule's signatures valid at ``opset`` (those a signature model holds)."""
    codes = dummy_codes(opset)
    return tuple(slot for slot in schedule if slot in codes)


def _dummy(rank: int, dtype: np.dtype) -> np.ndarray:
    return np.zeros((1,) * rank, dtype)


@dataclass(frozen=True)
class Part:
    """A compiled model serving some signatures: ``slots`` maps each to its node."""

    run: Callable[..., Sequence[Any]]
    declared: Sequence[Declared] | None
    slots: Mapping[Slot, int]
    dummies: tuple[np.ndarray, ...]  # what each node is fed when no case takes it
    codes: tuple[int, ...]  # its Layout with every node fed its dummy (engine.contract.adapters.Layout)

    @property
    def nodes(self) -> int:
        return len(self.slots)


class SignatureModels:
    """The signature models of one adapter (see the module docstring). ``compile`` compiles a
    model (cached by the adapter), ``cached`` says whether a model is compiled already (in this
    process or the compile cache), ``feed`` turns an array into the runtime's input."""

    def __init__(self, compile: Callable[[onnx.ModelProto], Any], cached: Callable[[onnx.ModelProto], bool],
                 feed: Callable[[np.ndarray], Any]) -> None:
        self._compile, self._cached, self._feed = compile, cached, feed
        self._parts: dict[Key, list[Part]] = {}
        self._asked: Counter[Key] = Counter()  # cases of each rank asked through packs so far
        # Each rank's whole signature model, built once: building one of 99 to 153 nodes takes
        # tens of milliseconds, and until a rank is worth its model every batch asks whether the
        # compile cache holds it.
        self._models: dict[Key, onnx.ModelProto] = {}
        self._schedules: dict[tuple, list[Part]] = {}  # a schedule's models, by version, type and slots
        self._refused: set[tuple[int, str, Slot]] = set()  # (version, type, slot) taken as not compiling alone

    def serve(self, datas: Sequence[np.ndarray], opset: int, attributes: Sequence[Mapping[str, int]],
              schedule: Schedule | None = None) -> dict[int, Reply]:
        """The answers of the cases a signature model serves, by index; the others are left to
        the caller (packs). With a ``schedule`` (the signatures a test draws its cases within),
        one model of the schedule's signatures, compiled at once, serves them. Raises what
        running a model raises."""
        served: dict[int, Reply] = {}
        codes = dummy_codes(opset)
        groups: dict[tuple, list[int]] = {}
        for index, data in enumerate(datas):
            rank = None if schedule else data.ndim
            groups.setdefault((data.dtype.str, rank), []).append(index)
        for (_, rank), indices in groups.items():
            # Only cases of valid signatures count towards a model (census inputs with an
            # attribute outside its list are asked through packs whatever it holds).
            cases = [(i, datas[i], (datas[i].ndim, signature(attributes[i]))) for i in indices]
            cases = [case for case in cases if case[2] in codes]
            if not cases:
                continue
            dtype = datas[indices[0]].dtype
            if schedule:
                parts = self._scheduled(opset, dtype, _valid(opset, schedule))
            else:
                parts = self._parts_for((opset, dtype.str, rank), dtype, len(cases))
            if parts:
                self._run(parts, cases, served)
        return served

    def prepare(self, opset: int, dtype: np.dtype, schedule: Schedule) -> None:
        """Compile the models of a schedule's signatures of this version and type, ahead of its cases."""
        self._scheduled(opset, dtype, _valid(opset, schedule))

    def _scheduled(self, opset: int, dtype: np.dtype, slots: tuple[Slot, ...]) -> list[Part]:
        """The compiled parts of the model of a schedule's ``slots``: all of them in one, else
        each rank's split (``_split``, what does not compile taken as refused)."""
        key = (opset, dtype.str, slots)
        if key not in self._schedules:
            self._schedules[key] = self._by_rank(opset, dtype, slots) if slots else []
        return self._schedules[key]

    def _by_rank(self, opset: int, dtype: np.dtype, slots: tuple[Slot, ...]) -> list[Part]:
        try:
            whole = self._part(opset, dtype, slots)
        except NotImplementedError:
            return []  # the runtime does not support the type: packs say so case by case
        if whole is not None:
            return [whole]
        ranks = dict.fromkeys(rank for rank, _ in slots)
        return [part for rank in ranks for part in self._split(
            opset, dtype, [slot for slot in slots if slot[0] == rank], refuse=True, failed=len(ranks) == 1)]

    def refuses(self, data: np.ndarray, opset: int, attributes: Mapping[str, int]) -> bool:
        """Whether a schedule's split found that this case's signature does not compile alone
        (or its rank's does not, both halves of it failing)."""
        return (opset, data.dtype.str, (data.ndim, signature(attributes))) in self._refused

    def _parts_for(self, key: Key, dtype: np.dtype, count: int) -> list[Part]:
        """The compiled parts of ``key``'s signature model, where it is worth using now."""
        if key in self._parts:
            return self._parts[key]
        opset, _, rank = key
        if rank == 0:
            return []
        slots = [(rank, signature(s)) for s in spec.load(opset).signatures(rank)]
        if key not in self._models:
            self._models[key] = self._model(opset, dtype, slots)
        model = self._models[key]
        if self._asked[key] < len(slots) and not self._cached(model):
            self._asked[key] += count
            return []
        self._parts[key] = self._split(opset, dtype, slots, model)
        del self._models[key]
        return self._parts[key]

    @staticmethod
    def _model(opset: int, dtype: np.dtype, slots: Sequence[Slot]) -> onnx.ModelProto:
        return packed_model("symbolic", [_dummy(rank, dtype) for rank, _ in slots], opset,
                            [dict(s) for _, s in slots])

    def _split(self, opset: int, dtype: np.dtype, slots: list[Slot], model: onnx.ModelProto | None = None,
               refuse: bool = False, failed: bool = False) -> list[Part]:
        """Parts covering what compiles of ``slots``: all of them in one (unless that ``failed``
        already), else halves; a failing half is split again only where its sibling compiled.
        ``refuse``: where both halves fail, every slot is taken as refused."""
        if not failed:
            try:
                part = self._part(opset, dtype, slots, model)
            except NotImplementedError:
                return []  # the runtime does not support the type (or the rank): packs say so case by case
            if part is not None:
                return [part]
        if len(slots) == 1:
            return []
        half = len(slots) // 2
        first, second = (self._tried(opset, dtype, chunk) for chunk in (slots[:half], slots[half:]))
        if first is None and second is None:
            if refuse:
                self._refused.update((opset, dtype.str, slot) for slot in slots)
            return []  # the rank (or something every half holds) does not compile: packs instead
        parts = []
        for found, chunk in ((first, slots[:half]), (second, slots[half:])):
            parts += [found] if found is not None else self._split(opset, dtype, chunk, refuse=refuse, failed=True)
        return parts

    def _tried(self, opset: int, dtype: np.dtype, slots: Sequence[Slot]) -> Part | None:
        try:
            return self._part(opset, dtype, slots)
        except NotImplementedError:
            return None

    def _part(self, opset: int, dtype: np.dtype, slots: Sequence[Slot],
              model: onnx.ModelProto | None = None) -> Part | None:
        """The compiled model of ``slots``, checked on its small inputs; None where it fails,
        NotImplementedError where the runtime says it does not support it."""
        model = model or self._model(opset, dtype, slots)
        dummies = tuple(_dummy(rank, dtype) for rank, _ in slots)
        try:
            compiled = self._compile(model)
        except NotImplementedError:
            raise
        except Exception:
            if len(slots) == 1:
                self._refused.add((opset, dtype.str, slots[0]))
            return None
        try:
            outputs = compiled.run(*[self._feed(dummy) for dummy in dummies])
        except Exception:
            return None
        if not isinstance(outputs, (list, tuple)) or len(outputs) != len(slots):
            return None  # a runtime (or model: plug-in) that gives one output only
        codes = dummy_codes(opset)
        return Part(compiled.run, compiled.declared, {slot: node for node, slot in enumerate(slots)}, dummies,
                    tuple(-1 - codes[slot] for slot in slots))

    def _run(self, parts: list[Part], cases: list[tuple[int, np.ndarray, Slot]], served: dict[int, Reply]) -> None:
        """Answer ``cases`` (index, input, slot) through ``parts``: in rounds, each round one case
        per node (a signature asked twice takes two rounds)."""
        owner = {slot: part for part in parts for slot in part.slots}
        pending = [case for case in cases if case[2] in owner]
        while pending:
            taken: dict[Slot, tuple[int, np.ndarray, Slot]] = {}
            for case in pending:
                taken.setdefault(case[2], case)
            for part in parts:
                mine = {slot: case for slot, case in taken.items() if owner[slot] is part}
                if mine:
                    self._ask(part, mine, served)
            pending = [case for case in pending if case[0] not in served]

    def _ask(self, part: Part, cases: Mapping[Slot, tuple[int, np.ndarray, Slot]], served: dict[int, Reply]) -> None:
        inputs, layout = list(part.dummies), list(part.codes)
        for slot, (index, data, _) in cases.items():
            inputs[part.slots[slot]], layout[part.slots[slot]] = data, index
        outputs = part.run(*[self._feed(data) for data in inputs])
        if not isinstance(outputs, (list, tuple)) or len(outputs) != part.nodes:
            raise RuntimeError(f"a signature model of {part.nodes} nodes gave {type(outputs).__name__} outputs")
        fed = tuple(layout)
        for slot, (index, _, _) in cases.items():
            node = part.slots[slot]
            served[index] = Reply(OK, outputs[node], declared=part.declared[node] if part.declared else None,
                                  nodes=part.nodes, layout=fed, position=node)
