"""What every model-based adapter shares: the compile cache, and the path from a case in a model
form to a compiled model's answer and declared output shape.

A runtime adapter says only how to compile one model (``compile``) and how to read its own
errors (``translate``); this base builds the model of the case's form, caches what compiled
(and what failed to: a failure is raised again on every call with that key, never mistaken for a
usable model), runs it, and answers the plug-in contract ``fn(data, *, opset, **attributes)``
in the symbolic form."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from engine.forms import FORMS, INITIALIZER, STATIC, SYMBOLIC

from .models import Declared, form_key, form_model

# Compiled models kept per form: one per (version, type, attributes, rank) in the symbolic form
# serves many cases; a static one serves one shape, so fewer are worth keeping.
CACHE_SIZES = {SYMBOLIC: 512, STATIC: 64}


@dataclass(frozen=True)
class Compiled:
    """One compiled model: ``run(*inputs)`` (the input array, or nothing for the initializer
    form) returns the output; ``declared`` is the output shape the runtime declares, if any."""

    run: Callable[..., Any]
    declared: Declared = None


@dataclass(frozen=True)
class Answer:
    value: Any  # what the runtime returned
    declared: Declared  # the output shape it declared for this model


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

    def __init__(self) -> None:
        self._caches = {form: Cache(size) for form, size in CACHE_SIZES.items()}
        self.compiles = 0  # models compiled so far, in every form (a benchmark and test figure)

    @abstractmethod
    def compile(self, model: onnx.ModelProto) -> Compiled:
        """The runtime's compiled form of ``model``; raises what the runtime raises."""

    def translate(self, exc: Exception) -> Exception:
        """The runtime's exception as the plug-in contract's categories: NotImplementedError
        where the runtime says it does not support something, anything else a rejection."""
        return exc

    def feed(self, data: np.ndarray) -> Any:
        """The input array as the runtime takes it."""
        return data

    def _compile(self, form: str, data: np.ndarray, opset: int, attributes: Mapping[str, int]) -> Compiled:
        self.compiles += 1
        try:
            return self.compile(form_model(form, data, opset, attributes))
        except Exception as exc:
            raise self.translate(exc) from None

    def answer(self, form: str, data: np.ndarray, opset: int, attributes: Mapping[str, int]) -> Answer:
        """Run ``data`` through the model of ``form`` (compiled once per form_key)."""
        data = np.asarray(data)
        if form == INITIALIZER:  # one model per input: nothing to reuse
            compiled = self._compile(form, data, opset, attributes)
        else:
            compiled = self._caches[form].get(form_key(form, data, opset, attributes),
                                               lambda: self._compile(form, data, opset, attributes))
        inputs = () if form == INITIALIZER else (self.feed(data),)
        try:
            value = compiled.run(*inputs)
        except Exception as exc:
            raise self.translate(exc) from None
        return Answer(value, compiled.declared)

    def __call__(self, data: np.ndarray, *, opset: int, **attributes: int) -> Any:
        return self.answer(SYMBOLIC, data, opset, attributes).value


def one_line(text: object, limit: int = 600) -> str:
    """A runtime's message on one line, cut at ``limit`` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit] + " …"
