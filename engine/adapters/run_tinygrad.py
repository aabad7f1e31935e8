"""ArgMin through tinygrad's ONNX runner (``tinygrad.nn.onnx.OnnxRunner``) on its CPU device
(``DEV=CPU``), which compiles every kernel with a C compiler (clang, or what ``CC`` names).
The runner reads models from files, so each model is written to a file of its own in a private
temporary folder first (tinygrad keeps a file it opened mapped at its first size: a second model
written to the same path while the first's runner lives fails to load, "can't reopen Disk tensor
with larger size"). It binds each symbolic dimension to the first length it sees; its bindings
(``variable_dims``) are cleared before every call so that one compiled model serves every shape
of its rank, as the symbolic form promises."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from engine.runtimes.entry import Unavailable

from . import compile_cache
from .compiled import Compiled, ModelArgMin, one_line

DEVICE = "CPU"


class TinygradError(RuntimeError):
    """tinygrad refused the model or the input; the message is tinygrad's own."""


def _compiler() -> tuple[str, str]:
    """(the C compiler tinygrad's CPU device calls, its version line); Unavailable when absent."""
    name = os.environ.get("CC", "clang")
    if shutil.which(name) is None:
        raise Unavailable(f"tinygrad's CPU device compiles kernels with {name}, which is not on PATH here; "
                          f"install it (e.g. apt-get install clang) or name another clang with CC=")
    done = subprocess.run([name, "--version"], capture_output=True, text=True, timeout=30, check=False)
    return name, (done.stdout.splitlines() or ["unknown version"])[0]


class TinygradArgMin(ModelArgMin):
    device = DEVICE
    # tinygrad schedules every node of a model on every call (milliseconds each) and compiles
    # kernels per shape, not per model: a signature model would run a hundred nodes per call.
    signature_models = False

    def __init__(self) -> None:
        compiler, version = _compiler()
        os.environ["DEV"] = DEVICE  # read when tinygrad is first imported
        store = compile_cache.from_environment()
        if store is not None:  # tinygrad keeps the kernels it compiled in a database of its own
            os.environ["CACHEDB"] = str(store.folder / "tinygrad-cache.db")
        from tinygrad import Tensor
        from tinygrad.nn.onnx import OnnxRunner

        super().__init__()
        self.configuration = {"DEV": DEVICE, "CC": compiler, "compiler": version}
        self._tensor, self._runner = Tensor, OnnxRunner
        self._folder = tempfile.TemporaryDirectory(prefix="argmin-tinygrad-")
        self._written = itertools.count()

    def compile(self, model: onnx.ModelProto) -> Compiled:
        path = Path(self._folder.name) / f"model-{next(self._written)}.onnx"
        path.write_bytes(model.SerializeToString())
        runner = self._runner(str(path))
        names = [i.name for i in model.graph.input]

        def run(*inputs: Any) -> Any:
            runner.variable_dims.clear()
            results = runner(dict(zip(names, inputs, strict=True)))
            return [results[output.name].numpy() for output in model.graph.output]

        return Compiled(run)

    def feed(self, data: np.ndarray) -> Any:
        return self._tensor(np.ascontiguousarray(data))

    def translate(self, exc: Exception) -> Exception:
        if isinstance(exc, (NotImplementedError, Unavailable)) or not type(exc).__module__.startswith(
                ("tinygrad", "builtins")):
            return exc
        return TinygradError(one_line(f"{type(exc).__name__}: {exc}"))
