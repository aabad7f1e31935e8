"""Zoo entries as model-level plug-ins (``--impl model:tests/impls/model_zoo.py:minus_one_sentinel``):
each reads the ArgMin node's attributes and opset from the model and answers as that zoo entry
does, so the standalone replay snippet (which builds the model itself) can be run against a known
bug and against a correct implementation."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper

from zoo import broken_rejects, broken_values, correct


def _as_model_plugin(fn: Callable[..., np.ndarray]) -> Callable[[onnx.ModelProto], Callable[..., np.ndarray]]:
    def compile(model: onnx.ModelProto) -> Callable[..., np.ndarray]:
        node = model.graph.node[0]
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
        constant = [numpy_helper.to_array(t) for t in model.graph.initializer]

        def run(*inputs: np.ndarray) -> np.ndarray:
            data, = inputs or constant
            return fn(np.asarray(data), opset=opset, **attributes)
        return run
    return compile


numpy_argmin = _as_model_plugin(correct.numpy_argmin)
minus_one_sentinel = _as_model_plugin(broken_values.minus_one_sentinel)
ties_first_always = _as_model_plugin(broken_values.ties_first_always)
int32_indices = _as_model_plugin(broken_rejects.int32_indices)
no_type_check = _as_model_plugin(broken_rejects.no_type_check)
