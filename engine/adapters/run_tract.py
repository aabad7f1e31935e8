"""ArgMin through tract (Sonos' Rust runtime, the ``tract`` Python bindings). tract loads ONNX
models from files only, so each model is written to a private temporary folder first; it is
then typed (``into_model``: tract's own shape and type inference) and optimised into a runnable."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

import onnx

from .compiled import Compiled, ModelArgMin, one_line

# tract's own words for an element type it cannot load or compute with.
_UNSUPPORTED_TYPE = re.compile(r"Unknown DatumType|\b\w+ is not a number\b")


class TractError(RuntimeError):
    """tract refused the model or the input; the message is tract's own."""


def _declared(fact: Any) -> tuple[int | None, ...]:
    """tract's typed output fact: an int per known dimension, None per symbolic one."""
    return tuple(int(text) if text.isdigit() else None for text in map(str, fact.dims()))


def _message(exc: Exception) -> str:
    """tract's error chain (``Caused by: ...``) on one line, without the Rust backtrace."""
    return one_line(str(exc).split("Stack backtrace:")[0])


class TractArgMin(ModelArgMin):
    device = "CPU"  # tract computes on the CPU only

    def __init__(self) -> None:
        # tract's errors capture a Rust backtrace where RUST_BACKTRACE is set, about 0.2 s each,
        # which we then drop from the message; RUST_LIB_BACKTRACE=0 skips capturing it (a panic
        # still prints its own). Read at tract's first error, so setting it here is in time.
        os.environ["RUST_LIB_BACKTRACE"] = "0"
        import tract

        super().__init__()
        self._tract = tract
        self._onnx = tract.onnx()
        self._folder = tempfile.TemporaryDirectory(prefix="argmin-tract-")
        self._path = Path(self._folder.name) / "model.onnx"

    def compile(self, model: onnx.ModelProto) -> Compiled:
        self._path.write_bytes(model.SerializeToString())
        typed = self._onnx.load(str(self._path)).into_model()
        declared = [_declared(typed.output_fact(i)) for i in range(len(model.graph.output))]
        runnable = typed.into_runnable()
        return Compiled(lambda *inputs: [value.to_numpy() for value in runnable.run(list(inputs))], declared)

    def translate(self, exc: Exception) -> Exception:
        if not isinstance(exc, self._tract.TractError):
            return exc
        message = _message(exc)
        return NotImplementedError(message) if _UNSUPPORTED_TYPE.search(message) else TractError(message)
