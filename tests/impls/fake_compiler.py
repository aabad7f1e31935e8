"""A fake compiler runtime for counting compiles (``Runner("tests/impls/fake_compiler.py:correct")``
with calls in a model form): a model-based adapter like the built-ins, whose "compiled model" is
tests/impls/model_packing.py's numpy interpreter of every ArgMin node. It counts its compiles as
every adapter does, and keeps what it compiled in the compile cache (the model's bytes: loading
one is interpreting it again, not compiling it), so the tests can prove what each saving of the
compile count does without a real compiler:

- ``correct``: every type, right answers;
- ``refuses_int16``: like a runtime without an int16 kernel (onnxruntime): any model with an
  int16 input is refused as unsupported when it is compiled;
- ``refusing_int16``: the same as a model-level plug-in (``--impl model:...:refusing_int16``);
- ``refusing_rank_4_symbolic``: a model-level plug-in that, like IREE, does not compile a model
  with a symbolic input of rank 4 or more (REFUSED counts the node counts of those it refused;
  in-process runs, by module: ``model:tests.impls.fake_compiler:refusing_rank_4_symbolic``);
- ``slow_refusing_rank_4_symbolic``: the same, each compile taking a quarter of a second (IREE's
  take about that much, failing or not), so a schedule's models take longer than one call may;
- ``hanging_on_packs``: any model of more than one node hangs when compiled."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import onnx

from engine.adapters.compiled import Compiled, ModelArgMin
from tests.impls.model_packing import correct as interpreter


class FakeCompiler(ModelArgMin):
    suffix = ".onnx"

    def __init__(self, refused: tuple[int, ...] = ()) -> None:
        super().__init__()
        self.refused = refused  # ONNX element types it has no kernel for

    def compile(self, model: onnx.ModelProto) -> Compiled:
        _refuse(model, self.refused)
        run = interpreter(model)
        return Compiled(lambda *inputs: run(*inputs) if len(model.graph.output) > 1 else [run(*inputs)])

    def export(self, model: onnx.ModelProto, path: Path) -> Compiled:
        compiled = self.compile(model)
        path.write_bytes(model.SerializeToString())
        return compiled

    def restore(self, path: Path, model: onnx.ModelProto) -> Compiled:
        return self.compile(onnx.load_from_string(path.read_bytes()))


def _refuse(model: onnx.ModelProto, refused: tuple[int, ...]) -> None:
    types = {i.type.tensor_type.elem_type for i in model.graph.input} | {t.data_type for t in model.graph.initializer}
    if types & set(refused):
        raise NotImplementedError("no kernel for this element type")


def refusing_int16(model: onnx.ModelProto) -> Callable[..., object]:
    _refuse(model, (onnx.TensorProto.INT16,))
    return interpreter(model)


REFUSED: list[int] = []


def refusing_rank_4_symbolic(model: onnx.ModelProto) -> Callable[..., object]:
    shapes = [i.type.tensor_type.shape.dim for i in model.graph.input]
    if any(len(dims) >= 4 and any(d.HasField("dim_param") for d in dims) for dims in shapes):
        REFUSED.append(len(model.graph.node))
        raise RuntimeError("exceeded stack allocation limit")
    return interpreter(model)


def slow_refusing_rank_4_symbolic(model: onnx.ModelProto) -> Callable[..., object]:
    time.sleep(0.25)
    return refusing_rank_4_symbolic(model)


def hanging_on_packs(model: onnx.ModelProto) -> Callable[..., object]:
    if len(model.graph.node) > 1:
        time.sleep(3600)
    return interpreter(model)


correct = FakeCompiler()
refuses_int16 = FakeCompiler(refused=(onnx.TensorProto.INT16,))
