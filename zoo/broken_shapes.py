"""Broken ArgMin implementations that get the structure wrong: axes, keepdims, defaults, high
ranks, zero-size inputs, reduced axes of length 1, and state kept between calls."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ._rules import DEFAULTS, Request, check_attributes, check_type, finish, first_min, last_min, normalise_axis, parse


def _pick(data: np.ndarray, request: Request) -> np.ndarray:
    return (last_min if request.last else first_min)(data, request.axis)


def _request(data: np.ndarray, opset: int, attributes: Mapping[str, int], **override: int) -> Request:
    """Validate like a correct implementation, then use ``override`` in place of the node's attributes."""
    check_type(data, opset)
    attrs = check_attributes(opset, attributes)
    normalise_axis(attrs["axis"], data.ndim, opset)
    attrs.update(override)
    axis = normalise_axis(attrs["axis"], data.ndim, opset)
    return Request(axis, bool(attrs["keepdims"]), bool(attrs.get("select_last_index", 0)))


def negative_axis_as_zero(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Clamps a negative axis to 0 instead of counting it from the end.

    Negative axes are undefined at v1, so conformant there; violates the axis clause at v11, v12
    and v13 (axis=-1 on a matrix reduces the rows)."""
    axis = attributes.get("axis", DEFAULTS["axis"])
    request = _request(data, opset, attributes, axis=max(axis, 0))
    return finish(_pick(data, request), request)


def keepdims_at_end(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """With keepdims=1 appends the length-1 axis at the end instead of keeping it in place.

    Shape (2, 3) reduced over axis 0 answers shape (3, 1), not (1, 3). Violates the output shape
    at every version."""
    request = parse(data, opset, attributes)
    found = np.asarray(_pick(data, request), dtype=np.int64)
    return found[..., np.newaxis] if request.keepdims else found


def keepdims_ignored(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Always keeps the reduced axis: keepdims=0 is ignored.

    Violates the output shape at every version."""
    request = parse(data, opset, attributes)
    return finish(_pick(data, request), Request(request.axis, True, request.last))


def squeeze_all(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Implements keepdims=0 as numpy.squeeze of the kept result, dropping every length-1 axis.

    Shape (1, 3) reduced over axis 1 with keepdims=0 answers shape () instead of (1,). Violates
    the output shape at every version."""
    request = parse(data, opset, attributes)
    kept = finish(_pick(data, request), Request(request.axis, True, request.last))
    return kept if request.keepdims else np.squeeze(kept)


def default_keepdims_zero(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Treats an omitted keepdims as 0 (the default of some exporting frameworks).

    keepdims=1 set explicitly is right. Violates the defaults clause at every version."""
    request = _request(data, opset, attributes, keepdims=attributes.get("keepdims", 0))
    return finish(_pick(data, request), request)


def default_axis_last(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Reduces the last axis when axis is omitted (numpy-style "reduce the innermost" habit).

    axis=0 set explicitly is right. Violates the defaults clause at every version."""
    request = _request(data, opset, attributes, axis=attributes.get("axis", -1))
    return finish(_pick(data, request), request)


def default_select_last_one(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Returns the last minimum unless select_last_index=0 is set explicitly.

    At v1 and v11 that is an allowed tie choice; at v12 and v13 an omitted select_last_index
    must act as 0, so it violates the defaults clause there."""
    request = _request(data, opset, attributes, select_last_index=attributes.get("select_last_index", 1))
    return finish(_pick(data, request), request)


def length_one_identity(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Treats a reduction over an axis of length 1 as a no-op and returns the input itself.

    The "indices" are then the data values (in the input's dtype). An int64 input [[5], [7]]
    with axis=1 answers [[5], [7]]: index out of range at every version (for other dtypes the
    output dtype gives it away first)."""
    request = parse(data, opset, attributes)
    if data.shape[request.axis] == 1:
        return data if request.keepdims else np.squeeze(data, request.axis)
    return finish(_pick(data, request), request)


_MAX_RANK = 4


def rank5_unsupported(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Fails with a runtime error on inputs of rank 5 or more (a fixed-size shape buffer).

    Violates the accepts clause at every version."""
    request = parse(data, opset, attributes)
    if data.ndim > _MAX_RANK:
        raise RuntimeError(f"ArgMin: rank {data.ndim} exceeds the kernel's maximum of {_MAX_RANK}")
    return finish(_pick(data, request), request)


def rank5_bad_transpose(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """For rank 5 or more moves the reduced axis last with a permutation that reverses the others.

    Shape (2, 3, 1, 1, 4) over axis 0 answers shape (1, 4, 1, 1, 3). Violates the output shape
    (or, for equal dimensions, the minimum) at every version."""
    request = parse(data, opset, attributes)
    if data.ndim <= _MAX_RANK:
        return finish(_pick(data, request), request)
    others = [i for i in range(data.ndim) if i != request.axis][::-1]
    moved = np.transpose(data, [*others, request.axis])
    return finish(_pick(moved, Request(data.ndim - 1, False, request.last)), request)


def empty_short_circuit(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Answers any zero-size input with an empty 1-D array, whatever shape the output should have.

    Shape (0, 3) over axis 1 answers shape (0,), not (0, 1). Zero-size inputs are undefined at
    v11, so conformant there; violates the zero-size clause at v1, v12 and v13."""
    request = parse(data, opset, attributes)
    if data.size == 0:
        return np.zeros((0,), np.int64)
    return finish(_pick(data, request), request)


def zero_size_raises(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Refuses every zero-size input ("cannot allocate an empty buffer").

    Conformant at v11, where any empty input is undefined; violates the zero-size clause at v1,
    v12 and v13 when the empty dimension is not the reduced one."""
    request = parse(data, opset, attributes)
    if data.size == 0:
        raise ValueError("ArgMin: cannot allocate an empty buffer")
    return finish(_pick(data, request), request)


CHUNK = 512  # slices one pass of the parallel kernel below covers


def _zero_past(limit: int, data: np.ndarray, opset: int, attributes: Mapping[str, int]) -> np.ndarray:
    """The right answer, but 0 for every output element (in C order) past the first ``limit``."""
    request = parse(data, opset, attributes)
    found = np.array(_pick(data, request), dtype=np.int64)
    found.reshape(-1)[limit:] = 0
    return finish(found, request)


def slices_beyond_512_zero(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Answers 0 for every slice beyond the 512th (a parallel kernel whose work split stops there).

    The first 512 slices (output elements, in C order) are right. A (1000, 10) batch of scores
    reduced over its classes answers 0 from row 512 on. Violates the minimum clause at every
    version (the tie clause where index 0 holds a tied minimum and the last one is required)."""
    return _zero_past(CHUNK, data, opset, attributes)


GRID_LIMIT = 65535  # blocks of a one-dimensional GPU grid


def grid_limit_65535(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Answers 0 for every output element past the 65,535th (one GPU block per output, a grid of at most 65,535).

    65,536 slices of [1, 0] answer 0 for the last one. Violates the minimum clause at every
    version (the tie clause where index 0 holds a tied minimum and the last one is required)."""
    return _zero_past(GRID_LIMIT, data, opset, attributes)


TILE_ROWS, TILE_COLUMNS = 16, 1024  # the cache tile of the kernel below: rows of the reduced axis, inner columns


def tile_rows_lost_past_first_column_block(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Reducing an axis longer than 16 with an inner extent over 1024, columns past the 1024th see only 16 rows.

    A cache-tiled kernel walks 16 rows of the reduced axis by 1,024 inner columns (the elements
    after the axis, in C order) and, for the column blocks after the first, never loads the row
    tiles after the first. Shape (17, 1025) with its minimum at [16, 1024] answers 0 there, not
    16. Reducing the last axis (an inner extent of 1) is right. Violates the minimum clause at
    every version (the tie clause where a tied minimum sits in the first 16 rows)."""
    request = parse(data, opset, attributes)
    found = np.array(_pick(data, request), dtype=np.int64)
    inner = math.prod(data.shape[request.axis + 1:])
    if data.shape[request.axis] > TILE_ROWS and inner > TILE_COLUMNS:
        head = np.take(data, np.arange(TILE_ROWS), axis=request.axis)
        seen = np.asarray(_pick(head, request), dtype=np.int64).reshape(-1, inner)
        found.reshape(-1, inner)[:, TILE_COLUMNS:] = seen[:, TILE_COLUMNS:]
    return finish(found, request)


LANES = 8  # elements per vector of the kernel below


def vector_tail_zero(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Reducing a non-last axis, the last dimension's tail after its last multiple of 8 answers 0.

    A vector kernel walks the last dimension 8 columns at a time and forgets the remainder: with a
    last dimension of 8 or more that is not a multiple of 8, its final columns answer 0. Shape (2, 9)
    reduced over axis 0 answers 0 in column 8. Reducing the last axis is right. Violates the
    minimum clause at every version (the tie clause where index 0 holds a tied minimum)."""
    request = parse(data, opset, attributes)
    found = np.array(_pick(data, request), dtype=np.int64)
    width = data.shape[-1] if data.ndim else 0
    if request.axis != data.ndim - 1 and width >= LANES and width % LANES:
        found[..., width - width % LANES:] = 0
    return finish(found, request)


_CACHE: dict[tuple, np.ndarray] = {}
_KEY_BYTES = 16


def stale_cache(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Memoises answers keyed by opset, dtype, shape, effective attributes and the first 16 bytes only.

    A second input that starts like an earlier one of the same shape gets the earlier answer:
    int32 [1, 1, 1, 1, 0, 9] then [1, 1, 1, 1, 9, 0] both answer 4. Violates the minimum clause
    at every version."""
    request = parse(data, opset, attributes)
    key = (opset, data.dtype.str, data.shape, request, np.ascontiguousarray(data).tobytes()[:_KEY_BYTES])
    if key not in _CACHE:
        _CACHE[key] = finish(_pick(data, request), request)
    return _CACHE[key].copy()
