"""onnx's reference evaluator as a model-level plug-in (``model:tests/impls/model_reference.py:compile``):
an implementation no one in this project wrote, for running a regression set under it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator


def compile(model: onnx.ModelProto) -> Callable[..., object]:
    evaluator = ReferenceEvaluator(model)
    names = list(evaluator.input_names)

    def run(*inputs: np.ndarray) -> object:
        outputs = evaluator.run(None, dict(zip(names, inputs, strict=True)))
        return outputs if len(outputs) > 1 else outputs[0]
    return run
