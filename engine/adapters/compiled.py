"""What every model-based adapter shares: the compile cache, and the path from a case in a model
form to a compiled model's answer and declared output shape.

A runtime adapter says only how to compile one model (``compile``) and how to read its own
errors (``translate``); this base builds the model of the case's form, caches what compiled
(and what failed to: a failure is raised again on every call with that key, never mistaken for a
usable model), runs it, and answers the plug-in contract ``fn(data, *, opset, **attributes)``
in the symbolic form."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from engine.contract.adapters import NotPackable, Schedule
from engine.contract.forms import FORMS, INITIALIZER, STATIC, SYMBOLIC
from engine.contract.replies import Reply
from results.outcomes import OK

from . import compile_cache
from .models import Declared, form_key, form_model, pack_key, packed_model
from .signatures import SignatureModels

# Compiled models kept per form: one per (version, type, attributes, rank) in the symbolic form
# serves many cases; a static one serves one shape, so fewer are worth keeping.
CACHE_SIZES = {SYMBOLIC: 512, STATIC: 64}
# Compiled packs kept: a pack is asked again only by the pack of its cases' state twins, right after it.
PACK_CACHE_SIZE = 4


@dataclass(frozen=True)
class Compiled:
    """One compiled model: ``run(*inputs)`` (the input arrays in the model's order, or nothing
    in the initializer form) returns its outputs, a sequence in the model's output order (one
    for a one-node model, one per node for a packed one); ``declared`` holds the output shape
    the runtime declares for each, or is None where it declares none."""

    run: Callable[..., Sequence[Any]]
    declared: Sequence[Declared] | None = None


class PackRefused(Exception):
    """A pack not compiled: it holds a case whose signature does not compile alone
    (engine.adapters.signatures). Raised as the failing compile would be: the pack is split."""


class Cache:
    """LRU of compiled models (or compile failures) per key."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[Hashable, tuple[Any, BaseException | None]] = OrderedDict()

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        if key in self._entries:
            self._entries.move_to_end(key)
            built, error = self._entries[key]
        else:
            try:
                built, error = build(), None
            except Exception as exc:
                built, error = None, exc
            self._entries[key] = (built, error)
            if len(self._entries) > self.size:
                self._entries.popitem(last=False)
        if error is not None:
            raise error.with_traceback(None)
        return built


class ModelArgMin(ABC):
    """ArgMin through a runtime that compiles ONNX models; subclasses implement ``compile``."""

    forms = FORMS
    # Whether symbolic cases may go through signature models (engine.adapters.signatures): a
    # runtime whose cost is running nodes rather than compiling them (tinygrad schedules every
    # node of a model on every call) is better served by packs alone.
    signature_models = True
    # The file suffix of a compiled model saved by ``export``, for a runtime that can save one
    # (engine.adapters.compile_cache); None where it cannot.
    suffix: str | None = None

    def __init__(self) -> None:
        self._caches = {form: Cache(size) for form, size in CACHE_SIZES.items()}
        self._packs = Cache(PACK_CACHE_SIZE)
        self._signatures = SignatureModels(self._compile, self._saved, self.feed)
        self.store = compile_cache.from_environment() if self.suffix else None
        self.compiles = 0  # models compiled so far, in every form (a benchmark and test figure)
        self.compiled_nodes = 0  # the nodes those models held
        self.loaded = 0  # models loaded from the compile cache instead
        self.model_seconds = 0.0  # the time compiling and loading them took

    @abstractmethod
    def compile(self, model: onnx.ModelProto) -> Compiled:
        """The runtime's compiled form of ``model``; raises what the runtime raises."""

    def export(self, model: onnx.ModelProto, path: Path) -> Compiled:
        """``compile``, also writing the compiled model to ``path`` (runtimes with a ``suffix``)."""
        raise NotImplementedError(f"{type(self).__name__} cannot save a compiled model")

    def restore(self, path: Path, model: onnx.ModelProto) -> Compiled:
        """The compiled ``model`` that ``export`` wrote to ``path``."""
        raise NotImplementedError(f"{type(self).__name__} cannot load a compiled model")

    def translate(self, exc: Exception) -> Exception:
        """The runtime's exception as the plug-in contract's categories: NotImplementedError
        where the runtime says it does not support something, anything else a rejection."""
        return exc

    def feed(self, data: np.ndarray) -> Any:
        """The input array as the runtime takes it."""
        return data

    def _compile(self, model: onnx.ModelProto) -> Compiled:
        """The compiled ``model``: loaded from the compile cache where it holds it (an entry that
        does not load is compiled again), else compiled (and saved there, where there is one)."""
        start = time.perf_counter()
        try:
            return self._compiled(model)
        finally:
            self.model_seconds += time.perf_counter() - start

    def _compiled(self, model: onnx.ModelProto) -> Compiled:
        store, key = self.store, None
        if store is not None:
            key = store.key(model.SerializeToString())
            found = store.find(key, self.suffix)
            if found is not None:
                try:
                    compiled = self.restore(found, model)
                    self.loaded += 1
                    return compiled
                except Exception:
                    store.drop(key, self.suffix)
        self.compiles += 1
        self.compiled_nodes += len(model.graph.node)
        try:
            if store is None:
                return self.compile(model)
            made: list[Compiled] = []
            try:
                store.put(key, self.suffix, lambda path: made.append(self.export(model, path)))
            except OSError:
                if not made:
                    raise
            return made[0]  # compiled, and saved where the disk allowed
        except Exception as exc:
            raise self.translate(exc) from None

    def _saved(self, model: onnx.ModelProto) -> bool:
        """Whether the compile cache holds ``model`` compiled."""
        store = self.store
        return store is not None and store.find(store.key(model.SerializeToString()), self.suffix) is not None

    def _run(self, compiled: Compiled, inputs: Sequence[Any]) -> Sequence[Any]:
        try:
            return compiled.run(*inputs)
        except Exception as exc:
            raise self.translate(exc) from None

    def answer(self, form: str, data: np.ndarray, opset: int, attributes: Mapping[str, int]) -> Reply:
        """Run ``data`` through the one-node model of ``form`` (compiled once per form_key): the
        reply holds what the runtime returned, which the worker reads (engine.asking.worker)."""
        data = np.asarray(data)
        build = lambda: self._compile(form_model(form, data, opset, attributes))  # noqa: E731
        # The initializer form compiles one model per input: nothing to reuse.
        compiled = build() if form == INITIALIZER else self._caches[form].get(
            form_key(form, data, opset, attributes), build)
        outputs = self._run(compiled, () if form == INITIALIZER else (self.feed(data),))
        return Reply(OK, outputs[0], declared=compiled.declared[0] if compiled.declared else None)

    def answer_pack(self, form: str, datas: Sequence[np.ndarray], opset: int,
                    attributes: Sequence[Mapping[str, int]], schedule: Schedule | None = None) -> list[Reply]:
        """One answer per input, in order: in the symbolic form from signature models where they
        serve (``signatures``: with a ``schedule``, one model a rank of its signatures), the rest
        from one packed model (``_pack``). Raises what compiling or running a model raises (the
        caller then bisects the pack), and NotPackable where the runtime does not give one
        output per node."""
        datas = [np.asarray(data) for data in datas]
        served = self._signatures.serve(datas, opset, attributes, schedule) \
            if form == SYMBOLIC and self.signature_models else {}
        rest = [index for index in range(len(datas)) if index not in served]
        if len(rest) > 1 and any(self._signatures.refuses(datas[i], opset, attributes[i]) for i in rest):
            raise PackRefused(f"a case's signature does not compile alone: a pack of {len(rest)} would not either")
        answers = dict(served)
        if len(rest) == 1:
            answers[rest[0]] = self.answer(form, datas[rest[0]], opset, attributes[rest[0]])
        elif rest:
            packed = self._pack(form, [datas[i] for i in rest], opset, [attributes[i] for i in rest])
            layout = tuple(rest)
            answers.update((index, replace(answer, layout=layout)) for index, answer in zip(rest, packed, strict=True))
        return [answers[index] for index in range(len(datas))]

    def prepare(self, opset: int, dtype: np.dtype, schedule: Schedule) -> None:
        """Compile the signature models of a schedule (``signatures``) before its cases are asked."""
        if self.signature_models:
            self._signatures.prepare(opset, dtype, schedule)

    def answer_model(self, form: str, datas: Sequence[np.ndarray], opset: int,
                     attributes: Sequence[Mapping[str, int]]) -> list[Reply]:
        """One answer per node of exactly the packed model of these nodes, in this order
        (``models.packed_model``): no signature model, no other pack. How a recorded pack is asked
        again (in a fresh worker, by the pack minimizer, by the replay snippets): the model a
        packed-only failure showed in, rebuilt from its record, whatever answered it first."""
        datas = [np.asarray(data) for data in datas]
        layout = tuple(range(len(datas)))
        return [replace(answer, layout=layout) for answer in self._pack(form, datas, opset, attributes)]

    def _pack(self, form: str, datas: Sequence[np.ndarray], opset: int,
              attributes: Sequence[Mapping[str, int]]) -> list[Reply]:
        """Run every input through one packed model of ``form`` (``models.packed_model``): one
        answer per node, in order, each with its node's position. A pack of the same signature
        (``pack_key``) runs the model already compiled."""
        build = lambda: self._compile(packed_model(form, datas, opset, attributes))  # noqa: E731
        key = pack_key(form, datas, opset, attributes)
        compiled = build() if key is None else self._packs.get((form, key), build)
        outputs = self._run(compiled, () if form == INITIALIZER else [self.feed(data) for data in datas])
        if not isinstance(outputs, (list, tuple)) or len(outputs) != len(datas):
            raise NotPackable(f"{len(datas)} nodes gave {type(outputs).__name__} outputs")
        declared = compiled.declared or [None] * len(datas)
        return [Reply(OK, value, declared=shape, nodes=len(datas), position=node)
                for node, (value, shape) in enumerate(zip(outputs, declared, strict=True))]

    def __call__(self, data: np.ndarray, *, opset: int, **attributes: int) -> Any:
        return self.answer(SYMBOLIC, data, opset, attributes).value


def one_line(text: object, limit: int = 600) -> str:
    """A runtime's message on one line, cut at ``limit`` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit] + " …"
