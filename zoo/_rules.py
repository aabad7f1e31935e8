"""What a third-party ArgMin implementation hard-codes: its type table, defaults and axis rules.

The zoo stands in for vendors' implementations, and vendors never read our spec files. This module
is therefore the one place outside spec/ where the type lists, attribute defaults and ranges are
written down: it plays the part of a vendor's own operator registration. If it ever drifts from
spec/, tests/test_zoo.py (which judges every correct entry with spec.oracle) says so."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

VERSIONS = (1, 11, 12, 13)
_NUMERIC = ("float64", "float32", "float16", "int8", "int16", "int32", "int64",
            "uint8", "uint16", "uint32", "uint64")
TYPES: Mapping[int, tuple[str, ...]] = {1: _NUMERIC, 11: _NUMERIC, 12: _NUMERIC, 13: (*_NUMERIC, "bfloat16")}
DEFAULTS: Mapping[str, int] = {"axis": 0, "keepdims": 1, "select_last_index": 0}
_ATTRIBUTES: Mapping[int, tuple[str, ...]] = {
    1: ("axis", "keepdims"), 11: ("axis", "keepdims"),
    12: ("axis", "keepdims", "select_last_index"), 13: ("axis", "keepdims", "select_last_index"),
}


class Rejected(ValueError):
    """The input is invalid for this opset (what a runtime reports as a graph or type error)."""


@dataclass(frozen=True)
class Request:
    """A validated call: the axis normalised to [0, r-1], keepdims and the tie rule."""

    axis: int
    keepdims: bool
    last: bool


def dtype_name(data: np.ndarray) -> str:
    return data.dtype.name


def is_float(dtype: np.dtype) -> bool:
    """numpy floats plus bfloat16 (whose numpy kind is "V")."""
    return dtype.kind == "f" or dtype.name == "bfloat16"


def check_type(data: np.ndarray, opset: int, types: Mapping[int, tuple[str, ...]] = TYPES) -> None:
    if opset not in types:
        raise Rejected(f"ArgMin-{opset} is not an opset this implementation knows")
    if dtype_name(data) not in types[opset]:
        raise Rejected(f"ArgMin-{opset} has no kernel for element type {dtype_name(data)}")


def check_attributes(opset: int, attributes: Mapping[str, int], declared_at: int | None = None) -> dict[str, int]:
    """Reject undeclared attributes; return every declared one with its default filled in.
    ``declared_at`` names the opset whose attribute list applies (default: ``opset``)."""
    declared = _ATTRIBUTES[opset if declared_at is None else declared_at]
    unknown = sorted(set(attributes) - set(declared))
    if unknown:
        raise Rejected(f"ArgMin-{opset} has no attribute {', '.join(unknown)}")
    return {name: int(attributes.get(name, DEFAULTS[name])) for name in declared}


def normalise_axis(axis: int, rank: int, opset: int) -> int:
    """Negative axes count from the end (a v1 extension: undefined there, so allowed)."""
    if rank == 0:
        raise Rejected(f"ArgMin-{opset} needs an input of rank 1 or more")
    if not -rank <= axis < rank:
        raise Rejected(f"axis {axis} is outside [-{rank}, {rank - 1}]")
    return axis % rank


def parse(data: np.ndarray, opset: int, attributes: Mapping[str, int], *,
          types: Mapping[int, tuple[str, ...]] = TYPES, declared_at: int | None = None) -> Request:
    """Everything a careful vendor checks before running a kernel; ``types`` and ``declared_at``
    let a broken entry widen the type table or the attribute list."""
    check_type(data, opset, types)
    attrs = check_attributes(opset, attributes, declared_at)
    axis = normalise_axis(attrs["axis"], data.ndim, opset)
    return Request(axis, bool(attrs["keepdims"]), bool(attrs.get("select_last_index", 0)))


def first_min(data: np.ndarray, axis: int) -> np.ndarray:
    """Index of the first minimum (numpy compares every T by value, bfloat16 included)."""
    return np.argmin(data, axis=axis)


def last_min(data: np.ndarray, axis: int) -> np.ndarray:
    return data.shape[axis] - 1 - np.argmin(np.flip(data, axis), axis=axis)


def finish(indices: np.ndarray, request: Request) -> np.ndarray:
    """int64 output with the reduced axis kept as length 1 or dropped."""
    indices = np.asarray(indices, dtype=np.int64)
    return np.expand_dims(indices, request.axis) if request.keepdims else indices


def reference(data: np.ndarray, opset: int, attributes: Mapping[str, int]) -> np.ndarray:
    """A correct ArgMin, the base the broken entries deviate from in one place each."""
    request = parse(data, opset, attributes)
    kernel = last_min if request.last else first_min
    return finish(kernel(data, request.axis), request)
