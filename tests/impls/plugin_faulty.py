"""One plug-in with every kind of misbehaviour, chosen by the first element of the input, so a
single worker process can be made to crash, hang, raise or answer oddly in turn."""

from __future__ import annotations

import ctypes
import os
import sys
import tempfile
import time

import numpy as np

EXIT, ABORT, SEGFAULT, HANG, UNSUPPORTED, RAISE, RAGGED, UNCONVERTIBLE, SYS_EXIT, UNPICKLABLE, LEAVE_TEMP = range(1, 12)


class Unconvertible:
    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("no array here")


def by_value(data: np.ndarray, *, opset: int, **attributes: int) -> object:
    code = int(data.flat[0]) if data.size else 0
    if code == EXIT:
        os._exit(3)
    if code == ABORT:
        os.abort()
    if code == SEGFAULT:
        ctypes.string_at(0)
    if code == LEAVE_TEMP:  # a runtime's scratch files, never removed: their folder is named in the error
        raise RuntimeError(tempfile.mkdtemp())
    if code == HANG:
        time.sleep(600)
    if code == UNSUPPORTED:
        raise NotImplementedError("no kernel for this input")
    if code == RAISE:
        raise ValueError("axis out of range")
    if code == RAGGED:
        return [[1], [1, 2]]
    if code == UNCONVERTIBLE:
        return Unconvertible()
    if code == SYS_EXIT:
        sys.exit(4)
    if code == UNPICKLABLE:
        return [lambda: 0]
    return np.argmin(data, axis=attributes.get("axis", 0), keepdims=bool(attributes.get("keepdims", 1)))
