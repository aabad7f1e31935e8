"""Fake model-level runtimes for packing (``--impl model:tests/impls/model_packing.py:FUNCTION``):
each compiles a model, one-node or packed, into a numpy function that computes every ArgMin node
of it (zoo.correct.numpy_argmin per node), with one deliberate bug tied to packing:

- ``crash_on_three``: the process dies (os._exit) running any model with an input of exactly 3
  elements, packed or not: the crash must be pinned on that one case;
- ``wrong_fourth_node``: the node at position 3 of a model of more than 3 nodes answers the
  index after the right one (wrong at ArgMin-13, which decides ties): a bug only packed models show;
- ``off_by_one``: every node of every model answers the index after the right one;
- ``wrong_alone``: a one-node model with a static input answers the index after the right one:
  a bug only one-node models show (packed, or symbolic, it is right);
- ``hang_on_three``: like crash_on_three, but it sleeps instead of dying;
- ``abort_on_nan``: the process aborts (SIGABRT) running any model with an input that holds NaN,
  an input the standard defines no answer for: it must not crash there all the same;
- ``stale_answers``: a compiled model run again on inputs of the same shapes answers as before;
- ``wrong_beside_keepdims_0``: in a model that also holds a node with keepdims=0, every other node
  answers the index after the right one: a bug only packs holding such a node show;
- ``wrong_among_dummies``: a node answers the index after the right one where at least
  DUMMIES other nodes of its model are fed a single zero, as a signature model feeds the nodes
  no case took (engine.adapters.signatures): a bug only signature models show;
- ``wrong_in_first_pack``: the first packed model the process runs answers the index after the
  right one at every node, and no model after it: a bug seen once, never reproduced;
- ``nan_answers_shifted``: a node whose input holds NaN answers the index after the right one,
  in every model, packed or not: a census answer no policy fits, the same alone (NODES counts
  the nodes of every model it compiles; in-process runs only);
- ``outputs_shifted_after_eight``: a model of more than SHIFTED nodes binds every output after
  the SHIFTED-th one slot off (the output of node k is node k+1's, the last one the SHIFTED-th's):
  a deterministic bug only packs of more than eight nodes show, the same every time they are asked.

``correct`` has no bug at all, and ``recording`` is correct and keeps every model it compiles in
COMPILED (serialized; in-process runs only). Compiles are counted by the adapter
(ModelArgMin.compiles)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper

from zoo.correct import numpy_argmin

Run = Callable[..., object]
# (position, nodes, inputs, outputs, static, every node's attributes)
Bug = Callable[[int, int, list[np.ndarray], list[np.ndarray], bool, list[dict]], None]
SIZE = 3
DUMMIES = 16
SHIFTED = 8


def _runtime(bug: Bug) -> Callable[[onnx.ModelProto], Run]:
    def compile(model: onnx.ModelProto) -> Run:
        opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
        constants = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        names = [i.name for i in model.graph.input]
        static = bool(names) and all(d.HasField("dim_value") for d in model.graph.input[0].type.tensor_type.shape.dim)
        nodes = [(node.input[0], {a.name: helper.get_attribute_value(a) for a in node.attribute})
                 for node in model.graph.node]

        def run(*inputs: np.ndarray) -> object:
            feeds = {**constants, **dict(zip(names, inputs, strict=True))}
            datas = [np.asarray(feeds[name]) for name, _ in nodes]
            outputs = [numpy_argmin(data, opset=opset, **attributes) for data, (_, attributes) in zip(datas, nodes,
                                                                                                       strict=True)]
            for position in range(len(nodes)):
                bug(position, len(nodes), datas, outputs, static, [attributes for _, attributes in nodes])
            return outputs if len(outputs) > 1 else outputs[0]
        return run
    return compile


def _next_index(outputs: list[np.ndarray], position: int) -> None:
    """Node ``position`` answers the index after the right one: at ArgMin-13, which decides ties,
    that is never right (a later element, or out of range)."""
    outputs[position] = np.asarray(outputs[position]) + 1


def _crash(position: int, nodes: int, datas: list[np.ndarray], outputs: list[np.ndarray], static: bool,
           attributes: list[dict]) -> None:
    if datas[position].size == SIZE:
        os._exit(3)


def _hang(position: int, nodes: int, datas: list[np.ndarray], outputs: list[np.ndarray], static: bool,
          attributes: list[dict]) -> None:
    if datas[position].size == SIZE:
        time.sleep(60)


def _abort_on_nan(position: int, nodes: int, datas: list[np.ndarray], outputs: list[np.ndarray], static: bool,
                  attributes: list[dict]) -> None:
    if np.isnan(datas[position].astype(np.float64)).any():
        os.abort()


def _fourth(position: int, nodes: int, datas: list[np.ndarray], outputs: list[np.ndarray], static: bool,
            attributes: list[dict]) -> None:
    if nodes > 3 and position == 3:
        _next_index(outputs, position)


def _alone(position: int, nodes: int, datas: list[np.ndarray], outputs: list[np.ndarray], static: bool,
           attributes: list[dict]) -> None:
    if nodes == 1 and static:
        _next_index(outputs, position)


def _beside_keepdims_0(position: int, nodes: int, datas: list[np.ndarray], outputs: list[np.ndarray], static: bool,
                      attributes: list[dict]) -> None:
    if any(a.get("keepdims") == 0 for i, a in enumerate(attributes) if i != position):
        _next_index(outputs, position)


def _among_dummies(position: int, nodes: int, datas: list[np.ndarray], outputs: list[np.ndarray], static: bool,
                   attributes: list[dict]) -> None:
    dummies = sum(d.size == 1 and not d.any() for i, d in enumerate(datas) if i != position)
    if dummies >= DUMMIES:
        _next_index(outputs, position)


def _shifted(position: int, nodes: int, datas: list[np.ndarray], outputs: list[np.ndarray], static: bool,
             attributes: list[dict]) -> None:
    if nodes > SHIFTED and position == nodes - 1:  # once every node has its answer: rebind them all
        outputs[SHIFTED:] = [*outputs[SHIFTED + 1:], outputs[SHIFTED]]


def _nan_shifted(position: int, nodes: int, datas: list[np.ndarray], outputs: list[np.ndarray], static: bool,
                 attributes: list[dict]) -> None:
    if datas[position].dtype.kind == "f" and np.isnan(datas[position]).any():
        _next_index(outputs, position)


def _every_node(position: int, nodes: int, datas: list[np.ndarray], outputs: list[np.ndarray], static: bool,
                attributes: list[dict]) -> None:
    _next_index(outputs, position)


correct = _runtime(lambda *_: None)
off_by_one = _runtime(_every_node)
crash_on_three = _runtime(_crash)
hang_on_three = _runtime(_hang)
abort_on_nan = _runtime(_abort_on_nan)
wrong_fourth_node = _runtime(_fourth)
wrong_alone = _runtime(_alone)
wrong_beside_keepdims_0 = _runtime(_beside_keepdims_0)
wrong_among_dummies = _runtime(_among_dummies)
outputs_shifted_after_eight = _runtime(_shifted)
NODES: list[int] = []  # the nodes of every model ``nan_answers_shifted`` compiled, in order


def nan_answers_shifted(model: onnx.ModelProto) -> Run:
    NODES.append(len(model.graph.node))
    return _runtime(_nan_shifted)(model)


COMPILED: list[bytes] = []  # the models ``recording`` compiled, serialized, in order


def recording(model: onnx.ModelProto) -> Run:
    COMPILED.append(model.SerializeToString())
    return correct(model)


_FIRST_PACK_RAN: list[bool] = []  # whether this process has run a packed model (wrong_in_first_pack)


def wrong_in_first_pack(model: onnx.ModelProto) -> Run:
    run = correct(model)

    def once(*inputs: np.ndarray) -> object:
        outputs = run(*inputs)
        if len(model.graph.node) == 1 or _FIRST_PACK_RAN:
            return outputs
        _FIRST_PACK_RAN.append(True)
        return [np.asarray(output) + 1 for output in outputs]
    return once


def stale_answers(model: onnx.ModelProto) -> Run:
    """Correct, but each compiled model keeps its last outputs and answers them again whenever
    it is run with inputs of the same shapes (a result cache keyed on too little): a state bug
    that only a state twin run on its case's compiled model shows, packed or not."""
    run = correct(model)
    last: dict[tuple, object] = {}

    def remembering(*inputs: np.ndarray) -> object:
        shapes = tuple(np.shape(data) for data in inputs)
        if shapes not in last:
            last.clear()
            last[shapes] = run(*inputs)
        return last[shapes]
    return remembering
