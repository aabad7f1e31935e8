"""Plug-ins that are right on every valid input and odd only where the standard is silent, for
the census tests: what they do there is a warning or a policy, never a violation."""

from __future__ import annotations

import numpy as np

from tests.impls.plugin_good import argmin as _right


def _empty_axis(data: np.ndarray, axis: int) -> bool:
    return data.ndim > 0 and -data.ndim <= axis < data.ndim and data.shape[axis] == 0


def minus_one_on_empty_axis(data: np.ndarray, *, opset: int, axis: int = 0, keepdims: int = 1,
                            **attributes: int) -> np.ndarray:
    """-1 for every slice of an empty reduced axis (a sentinel), the same in every process: no index of this input."""
    if _empty_axis(data, axis):
        shape = [1 if i == axis % data.ndim else n for i, n in enumerate(data.shape)]
        found = np.full(shape, -1, np.int64)
        return found if keepdims else np.squeeze(found, axis)
    return _right(data, opset=opset, axis=axis, keepdims=keepdims, **attributes)


def input_shaped_for_odd_keepdims(data: np.ndarray, *, opset: int, axis: int = 0, keepdims: int = 1,
                                  **attributes: int) -> np.ndarray:
    """For a keepdims outside {0, 1}, zeros of the input's own shape: a shape no reading of keepdims gives."""
    if keepdims not in (0, 1):
        return np.zeros(data.shape, np.int64)
    return _right(data, opset=opset, axis=axis, keepdims=keepdims, **attributes)


def nan_rule_by_length(data: np.ndarray, *, opset: int, axis: int = 0, keepdims: int = 1,
                       **attributes: int) -> np.ndarray:
    """NaN is the minimum in slices of even length and ignored in slices of odd length: two rules, by input."""
    if data.dtype.kind != "f" or not np.isnan(data).any():
        return _right(data, opset=opset, axis=axis, keepdims=keepdims, **attributes)
    nan = np.isnan(data)
    if data.shape[axis] % 2:
        found = np.where(nan.all(axis=axis), 0, np.argmin(np.where(nan, np.inf, data), axis=axis))
    else:
        found = np.where(nan.any(axis=axis), np.argmax(nan, axis=axis), np.argmin(data, axis=axis))
    return (np.expand_dims(found, axis) if keepdims else found).astype(np.int64)


def middle_of_three_tied(data: np.ndarray, *, opset: int, axis: int = 0, keepdims: int = 1,
                         **attributes: int) -> np.ndarray:
    """Integers at ArgMin-1 and -11 (ties undefined): the first minimum, except in a slice whose
    minimum occurs three times or more, which gets the second: a first-index policy with
    exceptions, every answer still a minimum."""
    plain = opset >= 12 or data.dtype.kind not in "iu" or attributes or keepdims not in (0, 1)
    if plain or data.ndim == 0 or not -data.ndim <= axis < data.ndim or data.shape[axis] == 0:
        return _right(data, opset=opset, axis=axis, keepdims=keepdims, **attributes)
    moved = np.moveaxis(data, axis, -1)
    hits = moved == moved.min(axis=-1, keepdims=True)
    second = np.argmax(np.cumsum(hits, axis=-1) == 2, axis=-1)
    found = np.where(hits.sum(axis=-1) >= 3, second, np.argmax(hits, axis=-1)).astype(np.int64)
    return np.expand_dims(found, axis) if keepdims else found
