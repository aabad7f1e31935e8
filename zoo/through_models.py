"""The zoo's implementations as model-level plug-ins, so the suite scores them as it scores a
runtime that compiles: ``--impl model:zoo.through_models:ties_last_always`` (any zoo entry's
function name). The suite builds the models, one-node, packed or a schedule's (and a runtime
that compiles per node gets its cases drawn within schedules); every ArgMin node of a model is
answered by the entry's function, on its own input, so a model answers as the function would
one call at a time. ``python -m zoo.adequacy --models`` scores the zoo this way."""

from __future__ import annotations

import importlib
from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .registry import ENTRIES

Run = Callable[..., object]


def plugin(fn: Callable[..., object]) -> Callable[[onnx.ModelProto], Run]:
    """A model plug-in (``compile(model)``) that answers each ArgMin node of a model with ``fn``."""
    def compile(model: onnx.ModelProto) -> Run:
        opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
        constants = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        names = [i.name for i in model.graph.input]
        nodes = [(node.input[0], {a.name: helper.get_attribute_value(a) for a in node.attribute})
                 for node in model.graph.node]

        def run(*inputs: np.ndarray) -> object:
            feeds = {**constants, **dict(zip(names, inputs, strict=True))}
            outputs = [fn(np.asarray(feeds[name]), opset=opset, **attributes) for name, attributes in nodes]
            return outputs if len(outputs) > 1 else outputs[0]
        return run
    return compile


_FUNCTIONS = {item.impl.rpartition(":")[2]: item.impl for item in ENTRIES}


def impl(item_impl: str) -> str:
    """The ``--impl`` of a zoo entry's function (``module:function``) as such a plug-in."""
    return f"model:{__name__}:{item_impl.rpartition(':')[2]}"


def __getattr__(name: str) -> Callable[[onnx.ModelProto], Run]:
    """``model:zoo.through_models:NAME``: the plug-in of the zoo entry whose function is NAME."""
    if name not in _FUNCTIONS:
        raise AttributeError(f"no zoo entry's function is named {name!r}")
    module, _, function = _FUNCTIONS[name].rpartition(":")
    return plugin(getattr(importlib.import_module(module), function))
