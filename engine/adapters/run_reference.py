"""ArgMin through onnx.reference.ReferenceEvaluator, ONNX's own Python runtime. It declares no
output shapes of its own: ONNX's shape inference (onnx.shape_inference) speaks for the onnx
package, and its answer is checked like any runtime's declaration."""

from __future__ import annotations

from typing import Any

import onnx

from .compiled import Compiled, ModelArgMin
from .models import inferred_shapes


class ReferenceArgMin(ModelArgMin):
    def __init__(self) -> None:
        from onnx.reference import ReferenceEvaluator

        super().__init__()
        self._evaluator = ReferenceEvaluator

    def compile(self, model: onnx.ModelProto) -> Compiled:
        evaluator = self._evaluator(model)
        names = list(evaluator.input_names)

        def run(*inputs: Any) -> Any:
            return evaluator.run(None, dict(zip(names, inputs, strict=True)))

        return Compiled(run, inferred_shapes(model))
