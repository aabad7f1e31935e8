"""A self-contained correct ArgMin, loaded by path (``tests/impls/path_form_argmin.py:argmin``)
the way a vendor's file outside any package would be. Like any third-party implementation it
hard-codes the standard's rules itself."""

import ml_dtypes
import numpy as np

TYPES = {np.dtype(t) for t in ("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
                               "float16", "float32", "float64")}


def argmin(data: np.ndarray, *, opset: int, axis: int = 0, keepdims: int = 1, **rest: int) -> np.ndarray:
    allowed = TYPES | ({np.dtype(ml_dtypes.bfloat16)} if opset >= 13 else set())
    if data.dtype not in allowed:
        raise TypeError(f"ArgMin-{opset} does not take {data.dtype}")
    if set(rest) - ({"select_last_index"} if opset >= 12 else set()):
        raise TypeError(f"unknown attributes {sorted(rest)}")
    if not -data.ndim <= axis < data.ndim:
        raise ValueError(f"axis {axis} out of range for rank {data.ndim}")
    if rest.get("select_last_index", 0):
        flipped = np.flip(data, axis)
        result = data.shape[axis] - 1 - np.argmin(flipped, axis=axis)
    else:
        result = np.argmin(data, axis=axis)
    result = np.asarray(result, dtype=np.int64)
    return np.expand_dims(result, axis) if keepdims else result
