"""ArgMin through a vendor's model-level plug-in (``--impl model:MODULE_OR_PATH:FUNCTION``): the
function takes an ``onnx.ModelProto`` and returns a callable from the model's inputs (the input
arrays; nothing in the initializer form, where the data is inside the model) to the output. The
suite builds, caches and varies the models; NotImplementedError from either call means
"unsupported", any other exception a rejection. A packed model (several ArgMin nodes, one output
each) is answered by a callable that returns every output, as a list or tuple in the model's
order; one that returns a single output is asked one-node models only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import onnx

from .compiled import Compiled, ModelArgMin


class ModelPluginArgMin(ModelArgMin):
    def __init__(self, compile_model: Callable[[onnx.ModelProto], Callable[..., Any]]) -> None:
        super().__init__()
        self.compile_model = compile_model

    def compile(self, model: onnx.ModelProto) -> Compiled:
        run = self.compile_model(model)
        if not callable(run):
            raise TypeError(f"the model plug-in returned {type(run).__name__}, not a callable from the input "
                            f"array to the output")
        if len(model.graph.output) == 1:
            return Compiled(lambda *inputs: [run(*inputs)])
        return Compiled(run)  # ModelArgMin.answer_pack checks it gives one output per node
