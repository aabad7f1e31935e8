"""One recorded case as a test in ONNX's backend node-test layout: ``model.onnx`` and
``test_data_set_0/input_N.pb``, ``output_N.pb``, the folder onnx.backend.test's runner and
onnxruntime's onnx_test_runner read.

The model is the one the case's standalone snippet builds (``models.form_model``, or
``models.packed_model`` for a failure only a packed model shows), so the test asks the runtime
exactly what the suite asked it. Each output holds the oracle's answer (spec.oracle), and only an
answer the spec makes unique can be written: a rejection, an input the standard leaves undefined
(NaN, an empty reduced axis, ...) and tied minima where the version leaves ties open have none, and
are refused with the reason (``NoSingleAnswer``). ``data.json`` beside the model sets rtol and atol
to 0, which onnx.backend.test's loader reads: its default tolerance (rtol 1e-3) would take index
1000 for 1001. A test of an input that must only not crash is written without outputs
(``build(..., answers=False)``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import onnx.checker
import onnx.numpy_helper
import onnx.shape_inference

import spec
from engine.adapters.models import INITIALIZER, STATIC, SYMBOLIC, form_model, packed_model
from results import files
from spec.oracle import expect

DATA_SET = "test_data_set_0"
EXACT = {"rtol": 0, "atol": 0}  # data.json: what onnx.backend.test's loader compares outputs with


class NoSingleAnswer(ValueError):
    """A case that makes no node test; the message says why, in one line."""


@dataclass(frozen=True)
class Node:
    """One ArgMin node of a test's model: its input and the attributes set on it."""

    data: np.ndarray
    attributes: Mapping[str, int]


@dataclass(frozen=True)
class NodeTest:
    model: onnx.ModelProto
    inputs: list[np.ndarray]  # one per graph input, in order (none in the initializer form)
    outputs: list[np.ndarray]  # the oracle's answer for each graph output, in order (none: it must not crash)


def answer(version: int, node: Node, clause_id: str | None = None) -> np.ndarray:
    """The one answer ArgMin-``version`` allows for ``node``; NoSingleAnswer where it allows none
    or several, naming ``clause_id`` where it is among the clauses that decide (a rank-0 input
    with an axis is outside both [-r, r-1] and rank 0: the failure says which it stands for)."""
    expectation = expect(spec.load(version), node.data, node.attributes)
    if expectation.kind != "semantic":
        clause = next((c for c in expectation.clauses if c.id == clause_id), expectation.clauses[0])
        if expectation.kind == "rejection":
            raise NoSingleAnswer(f"{clause.id} ({clause.title}): the model must be refused, and the node-test layout "
                                 f"cannot expect an error")
        raise NoSingleAnswer(f"{clause.id} ({clause.title}): the standard defines no answer for this input")
    if expectation.required is not None:
        return expectation.required
    if np.array_equal(expectation.first, expectation.last):
        return expectation.first
    raise NoSingleAnswer(f"ties: ArgMin-{version} does not say which of several minimal indices is returned, and "
                         f"this input has tied minima")


def stand_in(version: int, node: Node) -> Node | None:
    """A node like ``node`` (its shape, type and attributes) whose input has one answer: every
    slice's minimum first and alone; None where no input of that shape and those attributes has
    one (an empty reduced axis, a rank-0 input, an attribute value the version leaves open)."""
    data = np.ones(node.data.shape, node.data.dtype)
    axis = int(node.attributes.get("axis", 0))
    if -data.ndim <= axis < data.ndim and data.shape[axis]:
        np.moveaxis(data, axis, 0)[0] = 0
    try:
        answer(version, Node(data, node.attributes))
    except NoSingleAnswer:
        return None
    return Node(data, node.attributes)


def build(version: int, form: str | None, nodes: Sequence[Node], packed: bool, answers: bool = True) -> NodeTest:
    """The test of ``nodes`` at ArgMin-``version``: a one-node model in ``form`` (symbolic where
    the case had none: a function plug-in), or with ``packed`` the packed model of every node in
    order. With ``answers``, every node's answer, and a model that passes onnx.checker's full
    check, or NoSingleAnswer says why not; without, no outputs and no check (an input that must
    only not crash may be an invalid model)."""
    form = form or SYMBOLIC
    if form not in (SYMBOLIC, STATIC, INITIALIZER):
        raise NoSingleAnswer(f"{form!r} is no model form the suite builds")
    outputs = [answer(version, node) for node in nodes] if answers else []
    datas, attributes = [node.data for node in nodes], [dict(node.attributes) for node in nodes]
    if packed:
        model = packed_model(form, datas, version, attributes)
    else:
        model = form_model(form, datas[0], version, attributes[0])
    try:
        if answers:
            onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        raise NoSingleAnswer(f"onnx.checker refuses the model: {' '.join(str(exc).split())[:300]}") from None
    return NodeTest(model, [] if form == INITIALIZER else datas, outputs)


def write(test: NodeTest, folder: Path) -> None:
    """The test as a new folder ``folder``: each tensor named as the model's input or output it
    is, and where it has outputs, ``data.json`` asking for exact comparison."""
    data_set = folder / DATA_SET
    data_set.mkdir(parents=True)
    files.write(folder, "model.onnx", test.model.SerializeToString())
    if test.outputs:
        files.write(folder, "data.json", (json.dumps(EXACT) + "\n").encode("utf-8"))
    outputs = (("output", test.outputs, test.model.graph.output),) if test.outputs else ()
    for prefix, values, slots in (("input", test.inputs, test.model.graph.input), *outputs):
        for index, (value, slot) in enumerate(zip(values, slots, strict=True)):
            tensor = onnx.numpy_helper.from_array(np.asarray(value), slot.name)
            files.write(data_set, f"{prefix}_{index}.pb", tensor.SerializeToString())
