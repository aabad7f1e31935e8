"""A runtime whose answers are right but whose compiled models declare a wrong output shape: its
shape inference forgets the reduction and declares the input's shape. Static-shape compilers
plan memory from such declarations, so the suite checks them against the output-shape clause."""

from __future__ import annotations

import onnx

from engine.adapters import Compiled, OnnxRuntimeArgMin


class DeclaresTheInputShape(OnnxRuntimeArgMin):
    def compile(self, model: onnx.ModelProto) -> Compiled:
        compiled = super().compile(model)
        if model.graph.input:
            dims = model.graph.input[0].type.tensor_type.shape.dim
            declared = tuple(d.dim_value if d.HasField("dim_value") else None for d in dims)
        else:  # the initializer form: the data's own dims
            declared = tuple(model.graph.initializer[0].dims)
        return Compiled(compiled.run, declared)
