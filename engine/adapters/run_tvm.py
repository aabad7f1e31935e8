"""ArgMin through Apache TVM: the Relax ONNX frontend (``from_onnx``, initializers kept as
constants), operators legalized to TensorIR, compiled for the ``llvm`` target and run by the Relax
virtual machine on the CPU."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import onnx

from .compiled import Compiled, ModelArgMin, one_line

TARGET = "llvm"


class TvmError(RuntimeError):
    """TVM refused the model or the input; the message is TVM's own."""


class TvmArgMin(ModelArgMin):
    device = "CPU"
    configuration: ClassVar[dict[str, str]] = {"frontend": "relax.frontend.onnx.from_onnx", "target": TARGET}

    def __init__(self) -> None:
        import tvm
        from tvm import relax
        from tvm.relax.frontend.onnx import from_onnx

        super().__init__()
        self._tvm, self._relax, self._from_onnx = tvm, relax, from_onnx

    suffix = ".so"  # Executable.export_library: a shared library the TVM runtime loads

    def compile(self, model: onnx.ModelProto) -> Compiled:
        return self._wrapped(self._build(model))

    def export(self, model: onnx.ModelProto, path: Path) -> Compiled:
        executable = self._build(model)
        executable.export_library(str(path))
        return self._wrapped(executable)

    def restore(self, path: Path, model: onnx.ModelProto) -> Compiled:
        return self._wrapped(self._tvm.runtime.load_module(str(path)))

    def _build(self, model: onnx.ModelProto) -> Any:
        module = self._relax.transform.LegalizeOps()(self._from_onnx(model, keep_params_in_input=False))
        return self._tvm.compile(module, target=TARGET)

    def _wrapped(self, executable: Any) -> Compiled:
        machine = self._relax.VirtualMachine(executable, self._tvm.cpu())

        def run(*inputs: Any) -> list[np.ndarray]:
            results = machine["main"](*inputs)  # one tensor alone, several as a tuple
            return [r.numpy() for r in (results if isinstance(results, (list, tuple)) or not hasattr(
                results, "numpy") else [results])]

        return Compiled(run)

    def feed(self, data: np.ndarray) -> Any:
        return self._tvm.runtime.tensor(np.ascontiguousarray(data))

    def translate(self, exc: Exception) -> Exception:
        if isinstance(exc, NotImplementedError) or not type(exc).__module__.startswith(("tvm", "builtins")):
            return exc
        return TvmError(one_line(f"{type(exc).__name__}: {exc}"))
