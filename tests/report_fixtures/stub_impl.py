"""A tiny ArgMin implementation (numpy) for replaying report snippets in tests."""

import numpy as np


def fn(data: np.ndarray, opset: int, axis: int = 0, keepdims: int = 1, select_last_index: int = 0) -> np.ndarray:
    if select_last_index:
        flipped = np.flip(data, axis=axis)
        index = data.shape[axis] - 1 - np.argmin(flipped, axis=axis, keepdims=bool(keepdims))
    else:
        index = np.argmin(data, axis=axis, keepdims=bool(keepdims))
    return np.asarray(index, dtype=np.int64)
