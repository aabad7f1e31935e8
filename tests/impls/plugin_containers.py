"""A right ArgMin whose indices come back as int32 in a JAX-like array (numpy reads it through
``__array__`` only), as JAX's argmin does by default: ONNX requires int64, so it is C2."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from plugin_good import argmin

sys.path.pop(0)


class JaxLike:
    def __init__(self, value: np.ndarray) -> None:
        self._value = value

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._value if dtype is None else self._value.astype(dtype)


def jax_like(data: np.ndarray, *, opset: int, **attributes: int) -> JaxLike:
    return JaxLike(np.asarray(argmin(data, opset=opset, **attributes), np.int32))
