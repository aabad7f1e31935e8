"""A runtime whose answers are right but whose compiled models declare a wrong output shape: its
shape inference forgets the reduction and declares the input's shape. Static-shape compilers
plan memory from such declarations, so the suite checks them against the output-shape clause."""

from __future__ import annotations

import onnx

from engine.adapters import Compiled, OnnxRuntimeArgMin


def _dims(value: onnx.ValueInfoProto | onnx.TensorProto) -> tuple[int | None, ...]:
    if isinstance(value, onnx.TensorProto):  # the initializer form: the data's own dims
        return tuple(value.dims)
    return tuple(d.dim_value if d.HasField("dim_value") else None for d in value.type.tensor_type.shape.dim)


class DeclaresTheInputShape(OnnxRuntimeArgMin):
    def compile(self, model: onnx.ModelProto) -> Compiled:
        compiled = super().compile(model)
        inputs = list(model.graph.input) or list(model.graph.initializer)  # one per node, in node order
        return Compiled(compiled.run, [_dims(value) for value in inputs])
