"""Fake model-level runtimes whose answers depend on their process, not on the model alone
(``--impl model:tests/impls/model_state.py:NAME``): each computes every ArgMin node of a model
with numpy (tests/impls/model_packing.py's ``correct``), with one bug:

- ``wrong_after_keepdims_0``: a model run right after a one-node model with keepdims=0 answers
  the index after the right one at every node whose keepdims is not 0, as a runtime reading what
  the earlier model left in memory would: right in a fresh process, wrong there only after that
  one earlier model (which is never a failure's own: it answers right);
- ``wrong_at_random``: every node answers the index after the right one at random, one time in
  ten, whatever ran before.

At ArgMin-13, which decides ties, the index after the right one is never right."""

from __future__ import annotations

import random

import numpy as np
import onnx
from onnx import helper

from tests.impls.model_packing import Run, correct

_LEFT_BY_KEEPDIMS_0: list[bool] = [False]  # whether the last model this process ran was keepdims=0, one node


def _keepdims(model: onnx.ModelProto) -> list[int]:
    return [next((helper.get_attribute_value(a) for a in node.attribute if a.name == "keepdims"), 1)
            for node in model.graph.node]


def _listed(outputs: object) -> list[np.ndarray]:
    return list(outputs) if isinstance(outputs, list) else [outputs]


def wrong_after_keepdims_0(model: onnx.ModelProto) -> Run:
    run, keepdims = correct(model), _keepdims(model)

    def after(*inputs: np.ndarray) -> object:
        left, _LEFT_BY_KEEPDIMS_0[0] = _LEFT_BY_KEEPDIMS_0[0], keepdims == [0]  # whether it runs or raises
        outputs = _listed(run(*inputs))
        if left:
            outputs = [np.asarray(out) + 1 if kept != 0 else out for out, kept in zip(outputs, keepdims, strict=True)]
        return outputs if len(outputs) > 1 else outputs[0]
    return after


def wrong_at_random(model: onnx.ModelProto) -> Run:
    run = correct(model)

    def sometimes(*inputs: np.ndarray) -> object:
        outputs = [np.asarray(out) + 1 if random.random() < 0.1 else out for out in _listed(run(*inputs))]
        return outputs if len(outputs) > 1 else outputs[0]
    return sometimes
