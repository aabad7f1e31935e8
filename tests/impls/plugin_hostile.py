"""Plug-ins that attack the process running them through what they return or allocate: the
suite must judge them and carry on with its own memory intact. Each answers correctly except
for its one misbehaviour."""

from __future__ import annotations

import gc
from multiprocessing.connection import Connection

import numpy as np

LEAK_BYTES = 32 << 20
_leaked: list[np.ndarray] = []


def _argmin(data: np.ndarray, attributes: dict[str, int]) -> np.ndarray:
    return np.argmin(data, axis=attributes.get("axis", 0), keepdims=bool(attributes.get("keepdims", 1)))


def huge_for_uint8(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """20000 x 20000 int64 indices (3.2 GB) for any uint8 input. np.zeros leaves the pages
    untouched until something reads them, so only a process that copies the answer pays."""
    if data.dtype == np.uint8:
        return np.zeros((20000, 20000), dtype=np.int64)
    return _argmin(data, attributes)


def leak(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Keeps LEAK_BYTES of memory it has written to on every call."""
    _leaked.append(np.ones(LEAK_BYTES, dtype=np.uint8))
    return _argmin(data, attributes)


def hog(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Takes ever more memory within one call, 64 MB at a time, up to 1 GB (so that a suite
    that fails to stop it still leaves the machine usable), then answers."""
    _held = [np.ones(64 << 20, dtype=np.uint8) for _ in range(16)]
    return _argmin(data, attributes)


def long_message(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    raise ValueError("x" * 10_000_000)


def heavy_objects(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """One element, as objects: 8 bytes of array holding 80 MB of text."""
    return np.array(["x" * 80_000_000], dtype=object)


def flood_the_pipe(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """For uint8 inputs, writes 80 MB into the worker's own connection to the parent first."""
    if data.dtype == np.uint8:
        for thing in gc.get_objects():
            if isinstance(thing, Connection) and not thing.closed:
                thing.send_bytes(bytes(80_000_000))
    return _argmin(data, attributes)

