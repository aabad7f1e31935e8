"""Correct ArgMin implementations, written differently from one another.

Each one must be judged conformant at every version. They differ where the standard is silent
(NaN, an empty reduced axis, which minimum v1/v11 return on ties), so the suite's census has
different behaviours to record and must not hold any of them against the implementation. The
``census-only`` ones answer NaN inputs by rules of their own, or empty axes with random values,
which deserves a census warning but is never a violation."""

from __future__ import annotations

import os

import numpy as np

from ._rules import Request, finish, first_min, is_float, last_min, parse

_PROCESS_NOISE = int.from_bytes(os.urandom(8), "little")  # drawn once per process: random_on_empty_axis


def numpy_argmin(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """np.argmin: NaN is the minimum (first NaN wins), first minimum on v1/v11 ties, empty axis raises."""
    request = parse(data, opset, attributes)
    kernel = last_min if request.last else first_min
    return finish(kernel(data, request.axis), request)


def python_lists(data: np.ndarray, *, opset: int, **attributes: int) -> object:
    """Answers with Python lists (ndarray.tolist()): nested lists, [] for an empty result, an int for a rank-0 one.

    The plug-in contract accepts anything numpy.asarray takes, and lists carry no integer type:
    they are judged by their values (an empty list, which numpy reads as float64, holds none)."""
    return numpy_argmin(data, opset=opset, **attributes).tolist()


def big_endian_indices(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Answers int64 indices in big-endian byte order (numpy dtype '>i8'), as read back from a big-endian device."""
    return numpy_argmin(data, opset=opset, **attributes).astype(">i8")


def _rows(data: np.ndarray, axis: int) -> np.ndarray:
    """The slices along ``axis`` as the rows of a 2-D array."""
    moved = np.moveaxis(data, axis, -1)
    return moved.reshape(-1, data.shape[axis])


def _result_shape(data: np.ndarray, request: Request) -> tuple[int, ...]:
    return tuple(d for i, d in enumerate(data.shape) if i != request.axis)


def python_loop(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Pure Python scan that skips NaN; last minimum on v1/v11 ties; empty axis or all-NaN gives 0."""
    request = parse(data, opset, attributes)
    # Ties are undefined before select_last_index exists; this vendor chose the last minimum.
    last = request.last or opset < 12
    out = []
    for row in _rows(data, request.axis).tolist():  # Python ints and floats hold every T exactly
        best, where = None, 0
        for i, value in enumerate(row):
            if value != value:  # NaN
                continue
            if best is None or value < best or (last and value == best):
                best, where = value, i
        out.append(where)
    return finish(np.array(out, dtype=np.int64).reshape(_result_shape(data, request)), request)


def stable_sort(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Stable sort with NaN ordered last, then read the minimum off the front; empty axis raises."""
    request = parse(data, opset, attributes)
    rows = _rows(data, request.axis)
    if rows.shape[1] == 0:
        raise ValueError("ArgMin of an empty axis has no answer")
    nan = np.isnan(rows) if is_float(rows.dtype) else np.zeros(rows.shape, bool)
    values = np.where(nan, np.zeros((), rows.dtype), rows)
    order = np.lexsort((values, nan), axis=-1)  # nan is the primary key, the value secondary
    if not request.last:
        picked = order[:, 0]
    else:
        # The run of minima at the front of a stable sort ends with the last minimum.
        smallest = np.take_along_axis(values, order[:, :1], axis=-1)
        run = np.sum((values == smallest) & ~nan, axis=-1)
        picked = order[np.arange(len(order)), np.maximum(run, 1) - 1]
    return finish(picked.reshape(_result_shape(data, request)), request)


_BLOCK = 8


def blocked_two_level(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Two-level reduction over blocks of 8 that merges ties correctly; rejects NaN and empty axes."""
    request = parse(data, opset, attributes)
    n = data.shape[request.axis]
    if n == 0:
        raise ValueError("ArgMin of an empty axis has no answer")
    if is_float(data.dtype) and np.isnan(data).any():
        raise ValueError("ArgMin input contains NaN")
    # Level one: the minimum of each block of 8 (the last block may be shorter); level two: the
    # block holding the overall minimum, the first such block (or the last, for the last index).
    pick = last_min if request.last else first_min
    moved = np.moveaxis(data, request.axis, -1)
    full = n // _BLOCK * _BLOCK
    values, indices = [], []
    if full:
        blocks = moved[..., :full].reshape(*moved.shape[:-1], full // _BLOCK, _BLOCK)
        local = pick(blocks, -1)
        values.append(np.take_along_axis(blocks, local[..., None], -1)[..., 0])
        indices.append(local + np.arange(0, full, _BLOCK))
    if full < n:
        tail = moved[..., full:]
        local = pick(tail, -1)[..., None]
        values.append(np.take_along_axis(tail, local, -1))
        indices.append(local + full)
    values, indices = np.concatenate(values, -1), np.concatenate(indices, -1)
    best_index = np.take_along_axis(indices, pick(values, -1)[..., None], -1)[..., 0]
    return finish(best_index, request)


def _keys(data: np.ndarray) -> np.ndarray:
    """Unsigned integer keys that order like the values: floats as sign-magnitude bits turned
    into offset binary, -0 folded onto +0, every NaN mapped to the largest key."""
    if data.dtype.kind in "iu":
        return data
    unsigned = np.dtype(f"uint{8 * data.dtype.itemsize}")
    bits = data.view(unsigned)
    sign = unsigned.type(1 << (8 * data.dtype.itemsize - 1))
    magnitude = bits & ~sign
    keys = np.where(bits & sign, sign - magnitude, magnitude + sign)
    keys = np.where(magnitude == 0, sign, keys)
    return np.where(np.isnan(data), np.iinfo(unsigned).max, keys).astype(unsigned)


def integer_keys(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Radix-style integer keys: NaN ignored, last minimum on v1/v11 ties, an empty axis answers 0."""
    request = parse(data, opset, attributes)
    keys = _keys(data)
    if data.shape[request.axis] == 0:
        return finish(np.zeros(_result_shape(data, request), np.int64), request)
    last = request.last or opset < 12
    return finish((last_min if last else first_min)(keys, request.axis), request)


def sticky_first_nan(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Scan seeded with element 0 using ``x < best``: a NaN at index 0 sticks, NaN elsewhere is skipped."""
    request = parse(data, opset, attributes)
    return finish(_scan(data, request), request)


def _scan(data: np.ndarray, request: Request) -> np.ndarray:
    """What the classic kernel loop answers (``best`` seeded with element 0, replaced when
    ``value < best``, or ``<=`` for the last index), without looping in Python: NaN never compares
    true, so a NaN is skipped, except at index 0 where nothing ever replaces it."""
    axis, n = request.axis, data.shape[request.axis]
    if n == 0:
        raise ValueError("ArgMin of an empty axis has no answer")
    # Every float type widens to float64 exactly; integers stay as they are (no NaN, no rounding).
    values = data if data.dtype.kind in "iub" else data.astype(np.float64)
    with np.errstate(invalid="ignore"):
        smallest = np.fmin.reduce(values, axis=axis, keepdims=True)  # NaN only where every element is NaN
        match = values == smallest  # never true at a NaN
    where = (last_min if request.last else first_min)(~match, axis)  # the first (last) match
    stuck = ~match.any(axis=axis) | np.isnan(np.take(values, 0, axis=axis).astype(np.float64))
    return np.where(stuck, 0, where).astype(np.int64)


def min_then_match(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Minimum first, then the first (last) position equal to it: a slice with NaN answers 0 wherever the NaN is."""
    request = parse(data, opset, attributes)
    axis = request.axis
    with np.errstate(invalid="ignore"):
        smallest = np.min(data, axis=axis, keepdims=True)  # raises on an empty axis
    match = data == smallest  # all False when the minimum is NaN
    if request.last:
        found = data.shape[axis] - 1 - np.argmax(np.flip(match, axis), axis=axis)
        found = np.where(match.any(axis=axis), found, 0)
    else:
        found = np.argmax(match, axis=axis)
    return finish(found, request)



def random_on_empty_axis(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Correct, but an empty reduced axis answers what an uninitialised buffer holds: other values in every process.

    Undefined behaviour, so conformant. The values are the same within one process and differ
    from one process to the next, as OpenVINO's do: only asking in two worker processes shows
    them for what they are, and no value can be an index of an empty axis."""
    request = parse(data, opset, attributes)
    if data.shape[request.axis] == 0:
        shape = [1 if i == request.axis else n for i, n in enumerate(data.shape)]
        garbage = np.random.default_rng([_PROCESS_NOISE, *shape]).integers(
            np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=shape, dtype=np.int64, endpoint=True)
        return garbage if request.keepdims else np.squeeze(garbage, request.axis)
    return finish((last_min if request.last else first_min)(data, request.axis), request)
