"""Well-behaved plug-ins for the plug-in and isolation tests (path form and module form)."""

from __future__ import annotations

import numpy as np

NOT_CALLABLE = 42


def argmin(data: np.ndarray, *, opset: int, axis: int = 0, keepdims: int = 1, select_last_index: int = 0) -> np.ndarray:
    """A plain numpy ArgMin; the last minimum via the reversed axis."""
    if select_last_index:
        flipped = np.flip(data, axis=axis)
        found = data.shape[axis] - 1 - np.argmin(flipped, axis=axis, keepdims=bool(keepdims))
        return found.astype(np.int64)
    return np.argmin(data, axis=axis, keepdims=bool(keepdims)).astype(np.int64)


def echo(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """What the plug-in received, as strings: shows that omitted attributes stay absent."""
    return np.array([f"opset={opset}", *(f"{k}={v}" for k, v in sorted(attributes.items()))])


def identity(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """The input itself, so a round trip through the worker can be compared bit for bit."""
    return data


def scribble(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """A right answer from an implementation that then writes over its input."""
    found = np.argmin(data, axis=0, keepdims=True).astype(np.int64)
    data[...] = 0
    return found
