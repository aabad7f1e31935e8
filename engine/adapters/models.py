"""The one-node ArgMin models the model-based adapters compile, in each model form.

The opset import is the version under test and the node carries exactly the attributes the
case sets (an omitted one is absent from the NodeProto, which is a different input from one set
to its default). We never run onnx.checker or relax anything ourselves: validation is the
runtime's job, and what it does is what we judge."""

from __future__ import annotations

import functools
import hashlib
import inspect
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import onnx
import onnx.helper
import onnx.numpy_helper
import onnx.shape_inference

from engine.contract.forms import INITIALIZER, STATIC, SYMBOLIC

INPUT, OUTPUT = "data", "reduced"
IR_CONSTANTS = 4  # the first IR version whose initializers need not be graph inputs

# An output shape as a runtime declares it: one entry per dimension, an int where the runtime
# knows the length and None where it does not; None altogether where it declares no rank.
Declared = tuple[int | None, ...] | None


def element_type(dtype: np.dtype) -> int:
    """The ONNX TensorProto element type holding ``dtype`` (ml_dtypes types included)."""
    try:
        return onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    except (KeyError, TypeError, ValueError):
        raise TypeError(f"numpy dtype {np.dtype(dtype)} has no ONNX tensor element type, "
                        f"so no ArgMin model can take it as input") from None


def _input(dtype: np.dtype, dims: list[int] | list[str]) -> onnx.ValueInfoProto:
    return onnx.helper.make_tensor_value_info(INPUT, element_type(dtype), dims)


def _output(rank: int | None) -> onnx.ValueInfoProto:
    dims = None if rank is None else [f"o{i}" for i in range(rank)]
    return onnx.helper.make_tensor_value_info(OUTPUT, onnx.TensorProto.INT64, dims)


def _assembled(opset: int, nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
               initializers: list[onnx.TensorProto], outputs: list[onnx.ValueInfoProto], name: str) -> onnx.ModelProto:
    opsets = [onnx.helper.make_opsetid("", opset)]
    graph = onnx.helper.make_graph(nodes, name, inputs, outputs, initializer=initializers)
    built = onnx.helper.make_model(graph, opset_imports=opsets, producer_name="argmin-conformance")
    # The lowest IR version that can carry the opset (accepted by any runtime knowing the opset),
    # and at least 4 for a constant input: before IR 4 an initializer had to be a graph input
    # too, i.e. a default the caller could replace, which no runtime may fold.
    lowest = onnx.helper.find_min_ir_version_for(opsets, ignore_unknown=True)
    built.ir_version = max(lowest, IR_CONSTANTS) if initializers else lowest
    return built


def _model(opset: int, attributes: Mapping[str, int], inputs: list[onnx.ValueInfoProto],
           initializers: list[onnx.TensorProto], output: onnx.ValueInfoProto) -> onnx.ModelProto:
    node = onnx.helper.make_node("ArgMin", [INPUT], [OUTPUT], **dict(attributes))
    return _assembled(opset, [node], inputs, initializers, [output], f"argmin_{opset}")


def inferred_shapes(model: onnx.ModelProto) -> list[Declared]:
    """The output shapes onnx.shape_inference finds for ``model`` (whose outputs declare none),
    one per output: ints where it knows a length, None for a symbolic one; None when it finds
    no rank."""
    found = [o.type.tensor_type for o in onnx.shape_inference.infer_shapes(model).graph.output]
    return [tuple(d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim) if t.HasField("shape")
            else None for t in found]


def inferred_shape(model: onnx.ModelProto) -> Declared:
    """``inferred_shapes`` of a one-node model."""
    return inferred_shapes(model)[0]


def argmin_model(opset: int, dtype: np.dtype, rank: int, attributes: Mapping[str, int], *,
                 shape: tuple[int, ...] | None = None, initializer: np.ndarray | None = None) -> onnx.ModelProto:
    """A model with one ArgMin node at ``opset``. The input has rank ``rank`` and symbolic
    dimensions, or the static ``shape``, or is the constant ``initializer`` (no graph input)."""
    if initializer is not None:
        inputs, initializers = [], [onnx.numpy_helper.from_array(np.asarray(initializer), INPUT)]
    else:
        dims = list(shape) if shape is not None else [f"d{i}" for i in range(rank)]
        inputs, initializers = [_input(dtype, dims)], []
    # onnx.checker (which Backend API modules run) wants a declared output. Declare only the
    # rank ONNX's own shape inference finds, with fresh symbols (the runtime infers the rest
    # itself); where inference finds nothing (an invalid model), the input's rank, so that the
    # runtime, not the checker, reports what is wrong with the model.
    found = inferred_shape(_model(opset, attributes, inputs, initializers, _output(None)))
    return _model(opset, attributes, inputs, initializers, _output(rank if found is None else len(found)))


def form_key(form: str, data: np.ndarray, opset: int, attributes: Mapping[str, int]) -> Hashable:
    """What one compiled model of ``form`` serves: every shape of a rank (symbolic), one shape
    (static), or one input (initializer)."""
    key = (form, opset, data.dtype, tuple(sorted(attributes.items())))
    if form == SYMBOLIC:
        return (*key, data.ndim)
    if form == STATIC:
        return (*key, data.shape)
    return (*key, data.shape, hashlib.sha1(np.ascontiguousarray(data).tobytes()).hexdigest())


def pack_key(form: str, datas: Sequence[np.ndarray], opset: int,
             attributes: Sequence[Mapping[str, int]]) -> Hashable | None:
    """What one compiled pack serves (as ``form_key`` for each node): the same pack asked again
    with other inputs of the same ranks (symbolic) or shapes (static); None in the initializer
    form, whose model holds the inputs themselves."""
    if form == INITIALIZER:
        return None
    nodes = zip(datas, attributes, strict=True)
    return ("pack", opset, *(form_key(form, data, opset, attrs)[2:] for data, attrs in nodes))


def form_model(form: str, data: np.ndarray, opset: int, attributes: Mapping[str, int]) -> onnx.ModelProto:
    """The model that computes ArgMin of ``data`` in ``form``."""
    if form not in (SYMBOLIC, STATIC, INITIALIZER):
        raise ValueError(f"unknown model form {form!r}")
    return argmin_model(opset, data.dtype, data.ndim, attributes,
                        shape=data.shape if form == STATIC else None,
                        initializer=data if form == INITIALIZER else None)


def packed_model(form: str, datas: Sequence[np.ndarray], opset: int,
                 attributes: Sequence[Mapping[str, int]]) -> onnx.ModelProto:
    """One model of ``len(datas)`` independent ArgMin nodes at ``opset`` (a pack): node i reads
    ``data_i`` (a graph input of the node's rank with symbolic dimensions of its own, a graph
    input of its exact shape, or a constant, as ``form`` says) with its own attributes and writes
    output ``reduced_i``. Compiling one such model instead of one per case is what makes
    compiler runtimes affordable; replays stay one-node models. Each output declares the rank
    ONNX's shape inference finds for it, as ``argmin_model`` does."""
    if form not in (SYMBOLIC, STATIC, INITIALIZER):
        raise ValueError(f"unknown model form {form!r}")
    nodes, inputs, initializers = [], [], []
    for i, (data, attrs) in enumerate(zip(datas, attributes, strict=True)):
        name = f"{INPUT}_{i}"
        nodes.append(onnx.helper.make_node("ArgMin", [name], [f"{OUTPUT}_{i}"], name=f"argmin_{i}", **dict(attrs)))
        if form == INITIALIZER:
            initializers.append(onnx.numpy_helper.from_array(np.asarray(data), name))
        else:
            dims = list(data.shape) if form == STATIC else [f"{name}_d{d}" for d in range(data.ndim)]
            inputs.append(onnx.helper.make_tensor_value_info(name, element_type(data.dtype), dims))
    graph = f"argmin_{opset}_x{len(nodes)}"
    bare = [onnx.helper.make_tensor_value_info(node.output[0], onnx.TensorProto.INT64, None) for node in nodes]
    found = inferred_shapes(_assembled(opset, nodes, inputs, initializers, bare, graph))
    outputs = []
    for data, node, shape in zip(datas, nodes, found, strict=True):
        out, rank = node.output[0], data.ndim if shape is None else len(shape)
        dims = [f"{out}_{d}" for d in range(rank)]
        outputs.append(onnx.helper.make_tensor_value_info(out, onnx.TensorProto.INT64, dims))
    return _assembled(opset, nodes, inputs, initializers, outputs, graph)


@functools.cache
def recipe(one_node: bool = True, packed: bool = False) -> tuple[str, ...]:
    """The source of this module's model builder (``argmin_model`` and what it calls; with
    ``packed``, ``packed_model`` and what it calls), for the standalone replay snippet: the model
    a bug report rebuilds is the one the suite compiled. Read once: a report holds hundreds of
    snippets."""
    parts = [element_type, *([_input, _output] if one_node else []), _assembled,
             *([_model] if one_node else []), inferred_shapes,
             *([inferred_shape, argmin_model] if one_node else []), *([packed_model] if packed else [])]
    lines = [f"INPUT, OUTPUT = {INPUT!r}, {OUTPUT!r}", f"IR_CONSTANTS = {IR_CONSTANTS}", "Declared = object", ""]
    if packed:
        lines += [f"SYMBOLIC, STATIC, INITIALIZER = {SYMBOLIC!r}, {STATIC!r}, {INITIALIZER!r}", ""]
    for part in parts:
        lines += [*inspect.getsource(part).splitlines(), ""]
    return tuple(lines)
