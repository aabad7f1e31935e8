"""A correct ArgMin that talks: it prints on every call, to stdout and stderr, from Python and
through the file descriptors (as native code would). A runtime's warnings must not fill the
suite's terminal: they go to the report folder's implementation.log."""

import os
import sys

import numpy as np


def argmin(data: np.ndarray, *, opset: int, axis: int = 0, keepdims: int = 1, **rest: int) -> np.ndarray:
    print("CHATTY-STDOUT: computing ArgMin")
    print("CHATTY-STDERR: a runtime warning", file=sys.stderr)
    os.write(2, b"CHATTY-NATIVE: a native warning\n")
    if data.dtype != np.float32 or rest or data.ndim == 0 or not -data.ndim <= axis < data.ndim:
        raise TypeError("only valid float32 models")
    result = np.asarray(np.argmin(data, axis=axis), dtype=np.int64)
    return np.expand_dims(result, axis) if keepdims else result
