"""Broken ArgMin implementations that pick the wrong index: ties, sentinels, comparisons and
detours through a narrower or different type. Each function's first docstring line is its summary;
the rest says where that is a violation. Apart from its one bug each entry validates its input
like a correct implementation, so it is caught by the clause its bug breaks and no other."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ._rules import Request, finish, first_min, is_float, last_min, parse


def _pick(data: np.ndarray, request: Request) -> np.ndarray:
    return (last_min if request.last else first_min)(data, request.axis)


def ties_last_always(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Returns the last minimum on ties whatever select_last_index says.

    Conformant at v1 and v11 (ties are undefined there); violates the tie clause at v12 and v13,
    where select_last_index=0 (also when omitted) requires the first minimum."""
    request = parse(data, opset, attributes)
    return finish(last_min(data, request.axis), request)


def ties_first_always(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Accepts select_last_index but always returns the first minimum.

    Conformant at v1 and v11; violates the tie clause at v12 and v13 with select_last_index=1."""
    request = parse(data, opset, attributes)
    return finish(first_min(data, request.axis), request)


_TILE = 4096


def tiled_ties(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Tiled reduction (tiles of 4096) whose merge step breaks ties across tiles the wrong way.

    Within a tile the tie rule is right; when two tiles hold the same minimum the later tile wins
    for select_last_index=0 and the earlier one for 1 (the kind of bug pytorch#93630 reported
    for a generated reduction kernel). Only axes longer than 4096 with equal minima in
    different tiles show it. Conformant at v1 and v11; violates ties at v12 and v13."""
    request = parse(data, opset, attributes)
    n = data.shape[request.axis]
    best_value = best_index = None
    for start in range(0, max(n, 1), _TILE):
        tile = np.take(data, range(start, min(start + _TILE, n)), axis=request.axis)
        local = _pick(tile, request)
        value = np.squeeze(np.take_along_axis(tile, np.expand_dims(local, request.axis), request.axis), request.axis)
        local = local + start
        if best_value is None:
            best_value, best_index = value, local
            continue
        better = (value < best_value) if request.last else (value <= best_value)  # the swapped rule
        best_value = np.where(better, value, best_value)
        best_index = np.where(better, local, best_index)
    return finish(best_index, request)


def last_index_off_by_one(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Computes the last minimum as n - argmin(flip(x)) instead of n - 1 - argmin(flip(x)).

    select_last_index=1 answers one past the last minimum: n itself when the last minimum is the
    final element. Violates the index range at v12 and v13; v1 and v11 have no select_last_index."""
    request = parse(data, opset, attributes)
    if not request.last:
        return finish(first_min(data, request.axis), request)
    return finish(data.shape[request.axis] - np.argmin(np.flip(data, request.axis), axis=request.axis), request)


def float32_max_sentinel(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Float kernels start from FLT_MAX as the running minimum, so values above it are invisible.

    A slice whose elements are all >= 3.4028235e38 (+inf, or doubles beyond float32's range)
    answers index 0 even when a smaller element lies further on, e.g. float [inf, FLT_MAX] or
    double [1e300, 1e39]. Violates the minimum clause at every version."""
    request = parse(data, opset, attributes)
    if data.dtype.kind == "f":  # bfloat16 has its own kernel
        with np.errstate(over="ignore"):  # FLT_MAX is inf in float16, which then cannot show the bug
            data = np.minimum(data, np.float32(np.finfo(np.float32).max).astype(data.dtype))
    return finish(_pick(data, request), request)


def minus_one_sentinel(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Starts from index -1 and the type's largest value with a strict ``<``: all-maximum slices leak -1.

    A slice whose elements all equal the type's maximum (+inf for floats, 255 for uint8, ...)
    never updates the index. Violates the index range at every version (select_last_index=1 uses
    ``<=`` and is right)."""
    request = parse(data, opset, attributes)
    found = _pick(data, request)
    if not request.last and data.shape[request.axis]:
        top = np.inf if is_float(data.dtype) else np.iinfo(data.dtype).max
        found = np.where(np.all(data == np.array(top).astype(data.dtype), axis=request.axis), -1, found)
    return finish(found, request)


def int8_as_uint8(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """The int8 kernel reuses the uint8 one: negative values compare as 128..255.

    int8 [-1, 1] answers 1. Violates the minimum clause at every version."""
    request = parse(data, opset, attributes)
    if data.dtype == np.int8:
        data = data.view(np.uint8)
    return finish(_pick(data, request), request)


def unsigned_as_signed(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Unsigned kernels reuse the signed ones: values from 2**(bits-1) up compare as negative.

    uint32 [2**31, 1] answers 0. Violates the minimum clause at every version."""
    request = parse(data, opset, attributes)
    if data.dtype.kind == "u":
        data = data.view(f"int{8 * data.dtype.itemsize}")
    return finish(_pick(data, request), request)


def argmax_of_negation(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """ArgMin as argmax(-x): wraps for the most negative integer and for every unsigned value but 0.

    int32 [-2**31, 0] answers 1, since -(-2**31) wraps to itself (tinygrad#8118 fixed the same
    bug). Floats are right. Violates the minimum clause at every version."""
    request = parse(data, opset, attributes)
    with np.errstate(over="ignore"):
        negated = -data if data.dtype.kind != "u" else (np.zeros((), data.dtype) - data)
    axis = request.axis
    found = (data.shape[axis] - 1 - np.argmax(np.flip(negated, axis), axis=axis)) if request.last \
        else np.argmax(negated, axis=axis)
    return finish(found, request)


def int64_via_float64(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """64-bit integers are compared as float64, which has 53 significant bits.

    int64 [2**62 + 1, 2**62] both become 2.0**62: the tie answers 0. Violates the minimum clause
    at every version."""
    request = parse(data, opset, attributes)
    if data.dtype in (np.int64, np.uint64):
        data = data.astype(np.float64)
    return finish(_pick(data, request), request)


def int32_via_float32(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """32-bit integers go through float32 (a GPU kernel with only float paths): 24 significant bits.

    int32 [2**24 + 1, 2**24] answers 0. Violates the minimum clause at every version."""
    request = parse(data, opset, attributes)
    if data.dtype in (np.int32, np.uint32):
        data = data.astype(np.float32)
    return finish(_pick(data, request), request)


def bfloat16_via_float16(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """bfloat16 is computed in float16, whose range ends at 65504: larger values all become inf.

    bfloat16 [1e10, 1e5] answers 0; tiny values flush too. Violates the minimum clause at v13,
    the only version with bfloat16 (which it correctly rejects before)."""
    request = parse(data, opset, attributes)
    if data.dtype == ml_dtypes.bfloat16:
        with np.errstate(over="ignore"):
            data = data.astype(np.float16)
    return finish(_pick(data, request), request)


def double_via_float32(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """The double kernel is missing, so doubles are rounded to float and compared there.

    double [1 + 2**-40, 1.0] answers 0. Violates the minimum clause at every version."""
    request = parse(data, opset, attributes)
    if data.dtype == np.float64:
        with np.errstate(over="ignore"):
            data = data.astype(np.float32)
    return finish(_pick(data, request), request)


def _flushed(data: np.ndarray) -> np.ndarray:
    """Float data with its subnormals replaced by zero (what flush-to-zero hardware compares)."""
    return np.where(np.abs(data) < ml_dtypes.finfo(data.dtype).tiny, np.zeros((), data.dtype), data)


def flush_subnormals(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Runs with flush-to-zero: subnormal inputs compare as zero.

    float [1e-40, 5e-41] answers 0, and [0, -1e-45] answers 0 (tensorflow#77946 reported the
    latter). Violates the minimum clause at every version."""
    request = parse(data, opset, attributes)
    return finish(_pick(_flushed(data) if is_float(data.dtype) else data, request), request)


def bfloat16_flushes_subnormals(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Only the bfloat16 kernel runs with flush-to-zero: its subnormals compare as zero.

    bfloat16 [2e-40, 1e-40] answers 0; every other type is right. Violates the minimum clause at
    v13, the only version with bfloat16 (which it correctly rejects before)."""
    request = parse(data, opset, attributes)
    return finish(_pick(_flushed(data) if data.dtype == ml_dtypes.bfloat16 else data, request), request)


def _total_order(data: np.ndarray) -> np.ndarray:
    """Unsigned keys of float data in IEEE totalOrder, where -0 is below +0."""
    unsigned = np.dtype(f"uint{8 * data.dtype.itemsize}")
    bits = data.view(unsigned)
    sign = unsigned.type(1 << (8 * data.dtype.itemsize - 1))
    return np.where(bits & sign, ~bits, bits | sign)


def signed_zero_below_positive(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Compares floats by IEEE totalOrder, so -0 counts as smaller than +0.

    float [0.0, -0.0] answers 1. Any index of a zero is a minimum, so this is conformant at v1
    and v11; at v12 and v13 it breaks the first-minimum tie rule."""
    request = parse(data, opset, attributes)
    return finish(_pick(_total_order(data) if is_float(data.dtype) else data, request), request)


def float16_negative_zero_below(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Only the float16 kernel compares by IEEE totalOrder, so there -0 counts as smaller than +0.

    float16 [1, 0, -0] answers 2; every other type is right. Conformant at v1 and v11 (any index
    of a zero is a minimum); at v12 and v13 it breaks the tie rule."""
    request = parse(data, opset, attributes)
    return finish(_pick(_total_order(data) if data.dtype == np.float16 else data, request), request)


def nan_to_num_sanitizer(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Sanitises input like numpy.nan_to_num first: infinities become the largest finite values.

    float [-FLT_MAX, -inf] answers 0 (both are -FLT_MAX after sanitising). Violates the minimum
    clause at every version."""
    request = parse(data, opset, attributes)
    if is_float(data.dtype):
        top = np.array(ml_dtypes.finfo(data.dtype).max).astype(data.dtype)
        data = np.where(np.isnan(data), np.zeros((), data.dtype), data)
        data = np.where(np.isposinf(data), top, np.where(np.isneginf(data), -top, data))
    return finish(_pick(data, request), request)


def index_int16(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Keeps the running index in an int16 and widens it at the end: positions past 32767 wrap.

    A minimum at position 39999 answers -25537. Violates the index range at every version."""
    request = parse(data, opset, attributes)
    return finish(_pick(data, request).astype(np.int16), request)


def select_last_floats_only(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Honours select_last_index=1 only in the float kernels; integer kernels return the first minimum.

    int32 [0, 0] with select_last_index=1 answers 0. Violates ties at v12 and v13."""
    request = parse(data, opset, attributes)
    if data.dtype.kind in "iu":
        return finish(first_min(data, request.axis), request)
    return finish(_pick(data, request), request)


def wide_ints_narrowed_to_int32(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """int64, uint32 and uint64 are cast to int32 (wrapping) before they are compared.

    int64 [2**32, 1] becomes [0, 1] and answers 0; uint32 [2**31, 1] becomes [-2**31, 1] and
    answers 0 (what OpenVINO's CPU plug-in did). Violates the minimum clause at every version."""
    request = parse(data, opset, attributes)
    if data.dtype.name in ("int64", "uint32", "uint64"):
        data = data.astype(np.int32)
    return finish(_pick(data, request), request)


def int32_answers_and_doubles_as_float(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Two independent bugs: int32 indices for every type, and doubles compared as float32.

    Violates the output dtype clause at every version and, for doubles such as
    [1.0, 1 - 2**-40], the minimum clause as well: a report must show both."""
    request = parse(data, opset, attributes)
    if data.dtype == np.float64:
        with np.errstate(over="ignore"):
            data = data.astype(np.float32)
    return finish(_pick(data, request), request).astype(np.int32)
