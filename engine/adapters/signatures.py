"""Signature models: in the symbolic form, one compiled model per (version, element type, rank)
holding a node for every valid attribute signature of that rank (``spec.VersionSpec.signatures``:
720 at ArgMin-12 and -13 over ranks 1 to 8, 132 at ArgMin-1), reused for every case of that rank
whatever its shape: each call feeds the cases into the nodes of their signatures and a small input
(all ones in shape, zeros in value) into the others.

A runtime that compiles (TVM, IREE, OpenVINO) pays per node, so a packed model of the cases of
one batch costs about as much as the nodes it holds, and is never asked again; a signature model
costs its signatures once. Which is cheaper depends on how many cases a rank gets: at the standard
profile the high ranks get a few dozen cases against 99 to 153 signatures, at certify hundreds.
So a rank's cases go through packs until as many of them have been asked as the rank has
signatures, then through its signature model (the rent-or-buy rule: never more than twice what
the cheaper choice would have cost); a model already compiled (in this process, or in the compile
cache by another) is used at once.

A signature model that does not compile, or does not answer its small inputs, is split in halves
(a half that compiles serves its signatures; a failing half is split again while its sibling
compiles), so that a runtime refusing one attribute value (IREE's select_last_index at rank 3) or
a whole rank (IREE's symbolic rank 4) costs a few attempts, and the cases it cannot serve go
through packs, as they would without this module. A call that fails raises, as a pack does: the
caller (engine.asking.worker.answers) splits the cases in halves, which run on the same compiled
models."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

import spec
from engine.contract.adapters import Schedule

from .models import Declared, packed_model

Key = tuple[int, str, int]  # (version, dtype, rank)
Signature = tuple[tuple[str, int], ...]


def signature(attributes: Mapping[str, int]) -> Signature:
    return tuple(sorted(attributes.items()))


@functools.cache
def _codes(opset: int, rank: int) -> dict[Signature, int]:
    """Each signature's index among ``spec``'s signatures of ``rank``: how a Layout names a dummy's."""
    return {signature(s): index for index, s in enumerate(spec.load(opset).signatures(rank))}


@dataclass(frozen=True)
class Part:
    """A compiled model serving some signatures of one rank: ``slots`` maps each to its node."""

    run: Callable[..., Sequence[Any]]
    declared: Sequence[Declared] | None
    slots: Mapping[Signature, int]
    dummy: np.ndarray  # what a node without a case is fed
    dummies: tuple[int, ...]  # its Layout with every node fed the dummy (engine.asking.worker.Layout)

    @property
    def nodes(self) -> int:
        return len(self.slots)


@dataclass(frozen=True)
class Served:
    """One case's answer from a signature model."""

    value: Any
    declared: Declared
    nodes: int
    layout: tuple[int, ...]  # the model's nodes as the call fed them (engine.asking.worker.Layout)
    position: int  # the case's node


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
        self._schedules: dict[tuple[Key, tuple[Signature, ...]], list[Part]] = {}  # a schedule's models, by rank

    def serve(self, datas: Sequence[np.ndarray], opset: int, attributes: Sequence[Mapping[str, int]],
              schedule: Schedule | None = None) -> dict[int, Served]:
        """The answers of the cases a signature model serves, by index; the others are left to
        the caller (packs). With a ``schedule`` (the signatures a test draws its cases within), a
        rank's model holds the schedule's signatures of that rank, compiled at once: the test's
        every case of that rank is one of them. Raises what running a model raises."""
        served: dict[int, Served] = {}
        by_rank: dict[Key, list[int]] = {}
        for index, data in enumerate(datas):
            by_rank.setdefault((opset, data.dtype.str, data.ndim), []).append(index)
        for (version, dtype, rank), indices in by_rank.items():
            # Only cases of valid signatures count towards a rank's model (census inputs with an
            # attribute outside its list are asked through packs whatever it holds).
            cases = [(i, datas[i], signature(attributes[i])) for i in indices]
            cases = [case for case in cases if case[2] in _codes(version, rank)]
            if not cases:
                continue
            if schedule:
                parts = self._scheduled((version, dtype, rank), datas[indices[0]].dtype,
                                        tuple(s for r, s in schedule if r == rank and s in _codes(version, rank)))
            else:
                parts = self._parts_for((version, dtype, rank), datas[indices[0]].dtype, len(cases))
            if parts:
                self._run(parts, cases, served)
        return served

    def _scheduled(self, key: Key, dtype: np.dtype, signatures: tuple[Signature, ...]) -> list[Part]:
        """The compiled parts of the model of a schedule's ``signatures`` of one rank."""
        if not signatures:
            return []
        opset, _, rank = key
        found = self._schedules.get((key, signatures))
        if found is None:
            found = self._schedules[key, signatures] = self._split(opset, dtype, rank, list(signatures))
        return found

    def _parts_for(self, key: Key, dtype: np.dtype, count: int) -> list[Part]:
        """The compiled parts of ``key``'s signature model, where it is worth using now."""
        if key in self._parts:
            return self._parts[key]
        opset, _, rank = key
        if rank == 0:
            return []
        signatures = [signature(s) for s in spec.load(opset).signatures(rank)]
        if key not in self._models:
            self._models[key] = self._model(opset, dtype, rank, signatures)
        model = self._models[key]
        if self._asked[key] < len(signatures) and not self._cached(model):
            self._asked[key] += count
            return []
        self._parts[key] = self._split(opset, dtype, rank, signatures, model)
        del self._models[key]
        return self._parts[key]

    @staticmethod
    def _model(opset: int, dtype: np.dtype, rank: int, signatures: Sequence[Signature]) -> onnx.ModelProto:
        dummy = np.zeros((1,) * rank, dtype)
        return packed_model("symbolic", [dummy] * len(signatures), opset, [dict(s) for s in signatures])

    def _split(self, opset: int, dtype: np.dtype, rank: int, signatures: list[Signature],
               model: onnx.ModelProto | None = None) -> list[Part]:
        """Parts covering what compiles of ``signatures``: all of them in one, else halves; a
        failing half is split again only where its sibling compiled."""
        try:
            part = self._part(opset, dtype, rank, signatures, model)
        except NotImplementedError:
            return []  # the runtime does not support the type (or the rank): packs say so case by case
        if part is not None:
            return [part]
        if len(signatures) == 1:
            return []
        half = len(signatures) // 2
        first, second = (self._tried(opset, dtype, rank, chunk) for chunk in (signatures[:half], signatures[half:]))
        if first is None and second is None:
            return []  # the rank (or something every half holds) does not compile: packs instead
        parts = []
        for found, chunk in ((first, signatures[:half]), (second, signatures[half:])):
            parts += [found] if found is not None else self._split(opset, dtype, rank, chunk)
        return parts

    def _tried(self, opset: int, dtype: np.dtype, rank: int, signatures: Sequence[Signature]) -> Part | None:
        try:
            return self._part(opset, dtype, rank, signatures)
        except NotImplementedError:
            return None

    def _part(self, opset: int, dtype: np.dtype, rank: int, signatures: Sequence[Signature],
              model: onnx.ModelProto | None = None) -> Part | None:
        """The compiled model of ``signatures``, checked on its small inputs; None where it fails,
        NotImplementedError where the runtime says it does not support it."""
        model = model or self._model(opset, dtype, rank, signatures)
        dummy = np.zeros((1,) * rank, dtype)
        try:
            compiled = self._compile(model)
            outputs = compiled.run(*[self._feed(dummy)] * len(signatures))
        except NotImplementedError:
            raise
        except Exception:
            return None
        if not isinstance(outputs, (list, tuple)) or len(outputs) != len(signatures):
            return None  # a runtime (or model: plug-in) that gives one output only
        codes = _codes(opset, rank)
        return Part(compiled.run, compiled.declared, {s: node for node, s in enumerate(signatures)}, dummy,
                    tuple(-1 - codes[s] for s in signatures))

    def _run(self, parts: list[Part], cases: list[tuple[int, np.ndarray, Signature]],
             served: dict[int, Served]) -> None:
        """Answer ``cases`` (index, input, signature) through ``parts``: in rounds, each round
        one case per node (a signature asked twice takes two rounds)."""
        owner = {s: part for part in parts for s in part.slots}
        pending = [case for case in cases if case[2] in owner]
        while pending:
            taken: dict[Signature, tuple[int, np.ndarray, Signature]] = {}
            for case in pending:
                taken.setdefault(case[2], case)
            for part in parts:
                mine = {s: case for s, case in taken.items() if owner[s] is part}
                if mine:
                    self._ask(part, mine, served)
            pending = [case for case in pending if case[0] not in served]

    def _ask(self, part: Part, cases: Mapping[Signature, tuple[int, np.ndarray, Signature]],
             served: dict[int, Served]) -> None:
        inputs, layout = [part.dummy] * part.nodes, list(part.dummies)
        for s, (index, data, _) in cases.items():
            inputs[part.slots[s]], layout[part.slots[s]] = data, index
        outputs = part.run(*[self._feed(data) for data in inputs])
        if not isinstance(outputs, (list, tuple)) or len(outputs) != part.nodes:
            raise RuntimeError(f"a signature model of {part.nodes} nodes gave {type(outputs).__name__} outputs")
        fed = tuple(layout)
        for s, (index, _, _) in cases.items():
            node = part.slots[s]
            served[index] = Served(outputs[node], part.declared[node] if part.declared else None, part.nodes, fed,
                                   node)
