"""ArgMin through IREE: the model is imported to MLIR by iree-base-compiler's ONNX importer
(after ONNX shape inference, as ``iree-import-onnx`` does), compiled for the llvm-cpu backend and
run by iree-base-runtime on the local-task driver. Two compiler flags make the run faithful:
``--iree-llvmcpu-target-cpu=host`` (the kernels this CPU would run, not a generic baseline) and
``--iree-input-demote-f64-to-f32=false`` (else every double is computed as a float)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import onnx
import onnx.shape_inference

from .compiled import Compiled, ModelArgMin, one_line

BACKEND, DRIVER = "llvm-cpu", "local-task"
FLAGS = ("--iree-llvmcpu-target-cpu=host", "--iree-input-demote-f64-to-f32=false")


class IreeError(RuntimeError):
    """IREE refused the model or the input; the message is IREE's own."""


class IreeArgMin(ModelArgMin):
    device = "CPU"
    configuration: ClassVar[dict[str, str]] = {"target_backend": BACKEND, "driver": DRIVER,
                                               "compiler_flags": " ".join(FLAGS)}

    def __init__(self) -> None:
        import iree.compiler
        import iree.runtime
        from iree.compiler import ir
        from iree.compiler.extras import onnx_importer

        super().__init__()
        self._compiler, self._runtime, self._ir, self._importer = iree.compiler, iree.runtime, ir, onnx_importer

    def _mlir(self, model: onnx.ModelProto) -> str:
        info = self._importer.ModelInfo(onnx.shape_inference.infer_shapes(model))
        module = info.create_module(context=self._ir.Context()).operation
        self._importer.NodeImporter.define_function(info.main_graph, module).import_all()
        return module.get_asm()

    suffix = ".vmfb"  # the compiled module, as iree-compile writes it

    def compile(self, model: onnx.ModelProto) -> Compiled:
        return self._loaded(self._binary(model), model)

    def export(self, model: onnx.ModelProto, path: Path) -> Compiled:
        binary = self._binary(model)
        path.write_bytes(binary)
        return self._loaded(binary, model)

    def restore(self, path: Path, model: onnx.ModelProto) -> Compiled:
        return self._loaded(path.read_bytes(), model)

    def _binary(self, model: onnx.ModelProto) -> bytes:
        return self._compiler.compile_str(self._mlir(model), target_backends=[BACKEND], input_type="onnx",
                                          extra_args=list(FLAGS))

    def _loaded(self, binary: bytes, model: onnx.ModelProto) -> Compiled:
        context = self._runtime.SystemContext(config=self._runtime.Config(DRIVER))
        context.add_vm_module(self._runtime.VmModule.copy_buffer(context.instance, binary))
        function = context.modules.module[model.graph.name]
        def run(*inputs: Any) -> list[np.ndarray]:
            results = function(*inputs)  # one result alone, several as a sequence
            return [np.asarray(r.to_host()) for r in (results if isinstance(results, (list, tuple)) else [results])]

        return Compiled(run)

    def feed(self, data: np.ndarray) -> Any:
        return np.ascontiguousarray(data)

    def translate(self, exc: Exception) -> Exception:
        if isinstance(exc, NotImplementedError) or not type(exc).__module__.startswith(("iree", "builtins")):
            return exc
        return IreeError(one_line(f"{type(exc).__name__}: {exc}"))
