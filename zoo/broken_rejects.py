"""Broken ArgMin implementations that accept what they must reject, refuse what they must
compute, or answer in the wrong index dtype."""

from __future__ import annotations

import numpy as np

from ._rules import TYPES, Request, check_attributes, check_type, finish, first_min, last_min, parse


def _pick(data: np.ndarray, request: Request) -> np.ndarray:
    return (last_min if request.last else first_min)(data, request.axis)


def axis_wraps_modulo(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Takes the axis modulo the rank without a range check, so axis=r reduces axis 0.

    Computes an invalid model: lenient on the axis rejection clause at every version (strictness, not a failure)."""
    check_type(data, opset)
    attrs = check_attributes(opset, attributes)
    request = Request(attrs["axis"] % data.ndim, bool(attrs["keepdims"]), bool(attrs.get("select_last_index", 0)))
    return finish(_pick(data, request), request)


def scalar_as_vector(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Treats a rank-0 input as a vector of length 1 and answers 0.

    Rank 0 is undefined at v1, so conformant there; from v11 on a rank-0 input must be rejected."""
    if data.ndim == 0:
        check_type(data, opset)
        check_attributes(opset, attributes)
        return np.zeros((), np.int64)
    request = parse(data, opset, attributes)
    return finish(_pick(data, request), request)


def no_type_check(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Runs any element type numpy can order: complex, bool, float8, bfloat16 before v13.

    Computes an invalid model: lenient on the type rejection clause at every version (strictness, not a failure)."""
    request = parse(data, opset, attributes, types={opset: (data.dtype.name,)})
    return finish(_pick(data, request), request)


def bool_as_uint8(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Accepts bool input by viewing it as uint8 (False < True).

    Computes an invalid model: lenient on the type rejection clause at every version (strictness, not a failure)."""
    if data.dtype == np.bool_:
        data = data.view(np.uint8)
    request = parse(data, opset, attributes)
    return finish(_pick(data, request), request)


_WITH_BFLOAT16 = {opset: tuple({*names, "bfloat16"}) for opset, names in TYPES.items()}


def bfloat16_registered_early(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Registers its bfloat16 kernel for every opset, though bfloat16 joined T only at v13.

    Violates the type rejection clause at v1, v11 and v12; conformant at v13."""
    request = parse(data, opset, attributes, types=_WITH_BFLOAT16)
    return finish(_pick(data, request), request)


def select_last_index_everywhere(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Accepts (and applies) select_last_index at every opset, though v1 and v11 do not declare it.

    Violates the attribute rejection clause at v1 and v11; conformant at v12 and v13."""
    request = parse(data, opset, attributes, declared_at=max(opset, 12))
    return finish(_pick(data, request), request)


_NO_KERNEL = ("uint16", "uint32", "uint64")


def missing_unsigned_kernels(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Has no uint16, uint32 or uint64 kernel and says so with NotImplementedError.

    Those types are in T at every version, refused for every input: not implemented (scope), named
    beside a CONFORMANT headline; a failure of the accepts clause only under --claim all."""
    request = parse(data, opset, attributes)
    if data.dtype.name in _NO_KERNEL:
        raise NotImplementedError(f"ArgMin has no {data.dtype.name} kernel")
    return finish(_pick(data, request), request)


def float16_dropped_after_11(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Registered its float16 kernel for opsets 1-11 only and forgot it when adding opset 12.

    Conformant at v1 and v11; at v12 and v13 float16 is not implemented (scope, beside the headline)."""
    request = parse(data, opset, attributes)
    if data.dtype == np.float16 and opset >= 12:
        raise NotImplementedError(f"ArgMin-{opset} has no float16 kernel")
    return finish(_pick(data, request), request)


def int32_indices(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Answers int32 indices (a backend without 64-bit integers).

    Violates the output dtype clause at every version."""
    request = parse(data, opset, attributes)
    return finish(_pick(data, request), request).astype(np.int32)


def _empty_axis_zeros(data: np.ndarray, request: Request) -> np.ndarray:
    """Zeros in the shape of the answer: what a kernel returns when its loop over an empty
    reduced axis never runs and it reports the initial index."""
    shape = [1 if i == request.axis else n for i, n in enumerate(data.shape)]
    zeros = np.zeros(shape, np.int64)
    return zeros if request.keepdims else np.squeeze(zeros, request.axis)


def two_kernels_missing_zeros_on_empty(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Has no int16 or uint16 kernel (NotImplementedError); answers zeros on an empty reduced axis.

    The missing kernels are a matter of scope at every version (CONFORMANT for the other types). The
    zeros on empty axes are one coherent census policy: the refused types must not be counted against it."""
    request = parse(data, opset, attributes)
    if data.dtype.name in ("int16", "uint16"):
        raise NotImplementedError(f"ArgMin has no {data.dtype.name} kernel")
    if data.shape[request.axis] == 0:
        return _empty_axis_zeros(data, request)
    return finish(_pick(data, request), request)


def computes_invalid_models(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Computes every invalid model it can read: bool as uint8, any type numpy orders, rank 0 as 0,
    undeclared attributes ignored.

    Right on every valid input, so CONFORMANT; lenient on the type (C12), attribute (C13) and,
    from v11 on, rank-0 (C11) rejection clauses."""
    if data.dtype == np.bool_:
        data = data.view(np.uint8)
    if data.ndim == 0:
        return np.zeros((), np.int64)
    known = ("axis", "keepdims", "select_last_index") if opset >= 12 else ("axis", "keepdims")
    declared = {name: value for name, value in attributes.items() if name in known}
    request = parse(data, opset, declared, types={opset: (data.dtype.name,)})
    return finish(_pick(data, request), request)


def float16_refused_from_rank_3(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Says float16 is not supported (NotImplementedError) for inputs of rank 3 or more only.

    A type computed for some valid inputs and refused for others is not a matter of scope: violates
    the accepts clause at every version."""
    request = parse(data, opset, attributes)
    if data.dtype == np.float16 and data.ndim >= 3:
        raise NotImplementedError("ArgMin's float16 kernel handles ranks 1 and 2 only")
    return finish(_pick(data, request), request)
