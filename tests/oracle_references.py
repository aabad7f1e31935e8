"""The three references the oracle is checked against, and the inputs it is checked on.

(a) ONNX's own backend cases, captured from the installed onnx package; (b) onnx.reference's
ReferenceEvaluator on a one-node model; (c) a pure-Python scan that shares no code with the
oracle. Inputs come from a seeded numpy generator, so every run sees the same cases."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from functools import cache

import ml_dtypes
import numpy as np
import onnx
from onnx import helper
from onnx.reference import ReferenceEvaluator

import spec

# (a) is generators.onnx_cases.onnx_cases(): the suite's fixed vectors and these tests share one capture.


@cache
def _evaluator(version: int, elem_type: int, attributes: tuple[tuple[str, int], ...]) -> ReferenceEvaluator:
    node = helper.make_node("ArgMin", ["data"], ["reduced"], **dict(attributes))
    graph = helper.make_graph([node], "argmin", [helper.make_tensor_value_info("data", elem_type, None)],
                              [helper.make_tensor_value_info("reduced", onnx.TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)])
    return ReferenceEvaluator(model)


def reference_evaluator(version: int, data: np.ndarray, attributes: Mapping[str, int]) -> np.ndarray:
    """onnx.reference's answer at opset ``version``; raises whatever onnx raises."""
    elem_type = helper.np_dtype_to_tensor_dtype(data.dtype)
    evaluator = _evaluator(version, elem_type, tuple(sorted(attributes.items())))
    return evaluator.run(None, {"data": data})[0]


def scan_argmin(data: np.ndarray, axis: int, *, keepdims: bool, last: bool) -> np.ndarray:
    """Element-by-element scan for the first (or last) minimum, with Python's own comparisons.

    Each element becomes an exact Python number: int() for integer types, float() for the float
    types (none has more precision or range than float64, so float() loses nothing)."""
    number = int if np.issubdtype(data.dtype, np.integer) else float
    axis %= data.ndim
    outer = data.shape[:axis] + data.shape[axis + 1:]
    result = np.zeros(outer, dtype=np.int64)
    for position in itertools.product(*map(range, outer)):
        values = [number(x) for x in data[(*position[:axis], slice(None), *position[axis:])].tolist()]
        best = 0
        for i, value in enumerate(values):
            if value < values[best] or (last and value == values[best]):
                best = i
        result[position] = best
    return np.expand_dims(result, axis) if keepdims else result


# --- generated inputs ------------------------------------------------------------------------------

def _finfo(dtype: np.dtype) -> np.finfo:
    return ml_dtypes.finfo(dtype) if dtype.type in (ml_dtypes.bfloat16,) else np.finfo(dtype)


def special_values(tensor_type: spec.TensorType) -> np.ndarray:
    """The values implementations get wrong: extremes, signed zeros, infinities, subnormals,
    neighbours that a detour through a narrower or different type merges."""
    dtype = tensor_type.dtype
    if tensor_type.is_float:
        info = _finfo(dtype)
        tiny, sub, big = float(info.tiny), float(info.smallest_subnormal), float(info.max)
        values = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, big, -big, tiny, -tiny, sub, -sub, 2 * sub, 0.5]
        if big > 1e30:
            values += [1e30, -1e30]  # beyond float16's range, inside bfloat16's and float32's
        return np.array(values, dtype=np.float64).astype(dtype)
    info = np.iinfo(dtype)
    values = {0, 1, info.max, info.max - 1, info.min, info.min + 1}
    if info.min < 0:
        values |= {-1}
    if info.bits == 64:
        values |= {2**53, 2**53 + 1, info.max - 2**10}  # float64 cannot tell these neighbours apart
    return np.array(sorted(values), dtype=dtype)


def _random_values(rng: np.random.Generator, tensor_type: spec.TensorType, count: int) -> np.ndarray:
    dtype = tensor_type.dtype
    if tensor_type.is_float:
        return (rng.standard_normal(count) * 10.0 ** rng.integers(-3, 4, count)).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, count, dtype=dtype, endpoint=True)


def _shape(rng: np.random.Generator, rank: int, zero_size: bool) -> tuple[int, ...]:
    budget = 200
    dims = []
    for _ in range(rank):
        dims.append(int(rng.integers(1, max(2, min(6, budget) + 1))))
        budget //= dims[-1]
    if zero_size and rank > 1:
        dims[int(rng.integers(rank))] = 0
    return tuple(dims)


def _attributes(rng: np.random.Generator, vspec: spec.VersionSpec, rank: int) -> dict[str, int]:
    """Each declared attribute is either omitted or set to an accepted value (axis: inside its range)."""
    chosen = {}
    for name, attribute in vspec.attributes.items():
        if rng.random() < 0.3:
            continue
        if attribute.values is not None:
            chosen[name] = int(rng.choice(attribute.values))
        else:
            low, high = attribute.range.bounds(rank)
            chosen[name] = int(rng.integers(low, high, endpoint=True))
    return chosen


def generated_inputs(vspec: spec.VersionSpec, count: int, seed: int) -> Iterator[tuple[np.ndarray, dict[str, int]]]:
    """``count`` tie-heavy inputs for ``vspec``: each draws its elements from a small pool of
    special and random values of one of the version's types, so most slices hold repeated minima."""
    rng = np.random.default_rng([seed, vspec.version])
    for _ in range(count):
        tensor_type = vspec.types[int(rng.integers(len(vspec.types)))]
        pool = np.concatenate([special_values(tensor_type), _random_values(rng, tensor_type, 4)])
        pool = pool[rng.choice(len(pool), size=int(rng.integers(1, 5)), replace=False)]
        rank = int(rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8]))
        shape = _shape(rng, rank, zero_size=rng.random() < 0.05)
        data = pool[rng.integers(0, len(pool), size=shape)]
        yield data, _attributes(rng, vspec, rank)


def long_axis_inputs(vspec: spec.VersionSpec, length: int = 70_000) -> Iterator[tuple[np.ndarray, dict[str, int]]]:
    """Long reduced axes with the minimum repeated near both ends and in the middle (for floats as
    -0 and +0 among positive values), where a blocked or parallel reduction must still pick the
    right one. The axis is reduced last and first (first as a negative axis where the version allows)."""
    rank = 2
    low, _ = vspec.attributes["axis"].range.bounds(rank)
    for tensor_type in vspec.types:
        values = np.sort(special_values(tensor_type))
        line = np.full(length, values[-1], dtype=tensor_type.dtype)
        minima = [1, length // 2, length - 1]
        line[minima] = values[0]
        if tensor_type.is_float:
            line = np.full(length, 1.0, dtype=tensor_type.dtype)
            line[minima] = np.array([-0.0, 0.0, -0.0], dtype=tensor_type.dtype)
        yield np.stack([line, line[::-1]]), {"axis": rank - 1}
        yield np.stack([line, line[::-1]], axis=1), {"axis": max(low, -rank)}
