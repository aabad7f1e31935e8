"""ArgMin through Apache TVM: the Relax ONNX frontend (``from_onnx``, initializers kept as
constants), operators legalized to TensorIR, compiled for the ``llvm`` target and run by the Relax
virtual machine on the CPU."""

from __future__ import annotations

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

    def compile(self, model: onnx.ModelProto) -> Compiled:
        module = self._relax.transform.LegalizeOps()(self._from_onnx(model, keep_params_in_input=False))
        machine = self._relax.VirtualMachine(self._tvm.compile(module, target=TARGET), self._tvm.cpu())
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
