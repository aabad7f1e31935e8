"""Classifying what an implementation did with input the standard leaves undefined.

Each observation gets the list of named policies it is consistent with. The report intersects
them per topic and type: an implementation that follows one policy keeps it; one whose answers
fit no single policy gets a visible warning. Policies are read from the index values alone, so
an answer in the wrong integer type (a C2 failure, judged elsewhere) still shows its policy.

Apart from policies, an answer can be flagged (``flags``): a shape no reading of the input
gives, or a value that cannot index the input (any value, where the reduced axis is empty).
Flags are census warnings, never violations."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from results.outcomes import OK, OVERSIZE, RAISED, RETURNED
from spec import Clause, VersionSpec
from spec.oracle import argmin, order_keys

# NaN at index 0 of a slice is its answer; anywhere else NaN is skipped (a loop that starts from
# the first element and moves on only to a smaller one: onnxruntime's rule).
NAN_FIRST_ONLY = "nan-first-only"
# On an empty input (ArgMin-11): raises exactly when the reduced axis is empty, computes otherwise.
RAISES_ON_EMPTY_AXIS = "raises-on-empty-axis"
WRONG_SHAPE, NOT_AN_INDEX = "wrong-shape", "not-an-index"


def _slices(data: np.ndarray, index: np.ndarray, axis: int, keepdims: bool) -> tuple[np.ndarray, np.ndarray]:
    """Data with the reduced axis last, flattened to (slices, n), and the answer per slice."""
    moved = np.moveaxis(data, axis, -1).reshape(-1, data.shape[axis])
    index = index if not keepdims else np.squeeze(index, axis)
    return moved, index.reshape(-1)


def _nan_policies(data: np.ndarray, answer: np.ndarray, axis: int, keepdims: bool, tie: str) -> list[str]:
    """Which NaN policies the answer fits: NaN counted as the smallest value, NaN skipped, or
    NaN the answer only at index 0 of its slice and skipped elsewhere. ``tie`` (first, last or
    any) is the tie rule in force for the version and attributes."""
    rows, picked = _slices(data, answer, axis, keepdims)
    nan = np.isnan(rows)
    keys = order_keys(rows)
    fits = []
    for policy in ("nan-is-min", "nan-ignored", NAN_FIRST_ONLY):
        ok = True
        for row, is_nan, key, index in zip(rows, nan, keys, picked, strict=True):
            if policy == "nan-is-min" and is_nan.any():
                allowed = np.flatnonzero(is_nan)
            elif policy == NAN_FIRST_ONLY and is_nan[0]:
                allowed = np.array([0])
            elif policy == "nan-ignored" and is_nan.all():
                allowed = np.arange(row.size)  # nothing left to compare: any index fits
            else:
                valid = ~is_nan
                smallest = key[valid].min()
                allowed = np.flatnonzero(valid & (key == smallest))
            if tie == "first":
                allowed = allowed[:1]
            elif tie == "last":
                allowed = allowed[-1:]
            if index not in allowed:
                ok = False
                break
        if ok:
            fits.append(policy)
    return fits


def _indices(value: np.ndarray | None) -> np.ndarray | None:
    """The answer's index values as int64, or None when it holds no integers."""
    value = np.asarray(value)
    return value.astype(np.int64) if value.dtype.kind in "iu" else None


def group(vspec: VersionSpec, topic: Clause, data: np.ndarray, attributes: Mapping[str, int]) -> str | None:
    """The part of a topic an input belongs to, where its parts differ in kind: ArgMin-1's
    negative axes within [-r, -1] (a reading as counted from the end exists) and below -r
    (out of range in every reading)."""
    if topic.when and "axis_below_range" in topic.when and "axis" in attributes:
        return "axis in [-r, -1]" if attributes["axis"] >= -data.ndim else "axis below -r"
    return None


def policies(vspec: VersionSpec, topic: Clause, data: np.ndarray, attributes: Mapping[str, int],
             status: str, value: np.ndarray | None) -> list[str]:
    """The policies an observation on an undefined input fits. A refusal is the policy
    "raised"; "unsupported", a crash or a timeout is no policy at all; an oversize answer
    (returned, far larger than any reading of the input) is "returned" and fits no NaN policy."""
    nan_topic = bool(topic.when) and "contains_nan" in topic.when
    if status == OVERSIZE:
        return [] if nan_topic else [RETURNED]
    if status == RAISED:
        return [RAISED] + ([RAISES_ON_EMPTY_AXIS] if _empty_input_topic(topic) and _empty_axis(vspec, data, attributes)
                           else [])
    if status != OK:
        return []
    attrs = vspec.effective(attributes)
    if nan_topic:
        value = _indices(value)
        axis, keepdims = attrs["axis"] % data.ndim, bool(attrs["keepdims"])
        expected_shape = np.expand_dims(np.argmin(data, axis), axis).shape if keepdims else \
            np.argmin(data, axis).shape
        if value is None or value.shape != expected_shape:
            return []
        if ((value < 0) | (value >= data.shape[axis])).any():
            return []
        tie = vspec.ties_choice(attrs.get("select_last_index", 0)) or "any"
        return _nan_policies(data, value, axis, keepdims, tie)
    # Other topics: what came back, plus a reading of it where one suggests itself.
    fits = [RETURNED]
    value = _indices(value)
    if value is None:
        return fits
    if _empty_input_topic(topic) and not _empty_axis(vspec, data, attributes) and \
            value.shape in output_shapes(vspec, data, attributes):
        fits.append(RAISES_ON_EMPTY_AXIS)  # computed: an empty answer of the right shape
    readings = {
        "attribute_outside_values": lambda: _as_other_value(vspec, topic, data, attrs, value),
        "axis_below_range": lambda: _as_counted_from_end(data, attrs, value),
    }
    (condition, _), = topic.when.items()
    if condition in readings:
        fits += readings[condition]()
    return fits


def _empty_input_topic(topic: Clause) -> bool:
    """ArgMin-11's topic of every empty input, whichever axis is empty."""
    return bool(topic.when) and "size" in topic.when


def _axes(vspec: VersionSpec, data: np.ndarray, attributes: Mapping[str, int]) -> list[int]:
    """The axes the answer may reduce: the one the attributes name, or, where the axis is outside
    the version's range (ArgMin-1's negative axes), any axis of the input."""
    axis, accepted = vspec.effective(attributes)["axis"], vspec.attributes["axis"].range
    low, high = accepted.bounds(data.ndim) if accepted else (-data.ndim, data.ndim - 1)
    return [axis % data.ndim] if data.ndim and low <= axis <= high else list(range(data.ndim))


def _empty_axis(vspec: VersionSpec, data: np.ndarray, attributes: Mapping[str, int]) -> bool:
    return any(data.shape[axis] == 0 for axis in _axes(vspec, data, attributes))


def output_shapes(vspec: VersionSpec, data: np.ndarray, attributes: Mapping[str, int]) -> set[tuple[int, ...]]:
    """The output shapes a reading of the input gives: the reduced axis kept as 1 or dropped, as
    keepdims says (either, for a keepdims outside {0, 1}), along each axis the answer may reduce;
    () or (1,) for a rank-0 input."""
    keepdims = vspec.effective(attributes)["keepdims"]
    kept = (bool(keepdims),) if keepdims in (0, 1) else (False, True)
    if data.ndim == 0:
        return {(), (1,)}
    return {tuple(1 if i == axis else n for i, n in enumerate(data.shape)) if keep else
            tuple(n for i, n in enumerate(data.shape) if i != axis)
            for axis in _axes(vspec, data, attributes) for keep in kept}


def flags(vspec: VersionSpec, data: np.ndarray, attributes: Mapping[str, int], status: str,
          value: np.ndarray | None) -> list[str]:
    """What is wrong with an answer to an undefined input whatever the policy: a shape no reading
    of the input gives (an oversize answer included), or an index outside [0, n-1] of the axis
    it may reduce (n = 0 on an empty reduced axis, where no index is possible). Answers without
    integers are left to the output-type clause."""
    if status == OVERSIZE:
        return [WRONG_SHAPE]
    value = _indices(value) if status == OK else None
    if value is None:
        return []
    found = [] if value.shape in output_shapes(vspec, data, attributes) else [WRONG_SHAPE]
    lengths = [data.shape[axis] for axis in _axes(vspec, data, attributes)] or [1]  # a rank-0 input: index 0
    if value.size and ((value < 0) | (value >= max(lengths))).any():
        found.append(NOT_AN_INDEX)
    return found


def _matches(value: np.ndarray, expected: np.ndarray) -> bool:
    return value.shape == expected.shape and np.array_equal(value, expected)


def _as_other_value(vspec: VersionSpec, topic: Clause, data: np.ndarray, attrs: dict[str, int],
                    value: np.ndarray) -> list[str]:
    """keepdims=2 read as keepdims=1, select_last_index=2 read as 1, and so on."""
    name = topic.when["attribute_outside_values"]
    readings = []
    for accepted in vspec.attributes[name].values:
        trial = {**attrs, name: accepted}
        axis = trial["axis"] % data.ndim
        last = vspec.ties_choice(trial.get("select_last_index", 0)) == "last"
        if data.shape[axis] and _matches(value, argmin(data, axis, keepdims=bool(trial["keepdims"]), last=last)):
            readings.append(f"as-{name}-{accepted}")
    return readings


def _as_counted_from_end(data: np.ndarray, attrs: dict[str, int], value: np.ndarray) -> list[str]:
    axis = attrs["axis"]
    if not -data.ndim <= axis < 0 or data.shape[axis] == 0:
        return []
    expected = argmin(data, axis % data.ndim, keepdims=bool(attrs["keepdims"]))
    # Ties are undefined at v1, so compare against the first and the last minimum.
    alternative = argmin(data, axis % data.ndim, keepdims=bool(attrs["keepdims"]), last=True)
    return ["counts-from-end"] if _matches(value, expected) or _matches(value, alternative) else []


def tie_choice(expected_first: np.ndarray, expected_last: np.ndarray, value: np.ndarray) -> list[str]:
    """For a tied input where the version leaves the choice open: first, last, or neither."""
    value = _indices(value)
    return [name for name, answer in (("first", expected_first), ("last", expected_last))
            if value is not None and np.array_equal(value, answer)]
