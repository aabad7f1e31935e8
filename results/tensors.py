"""Arrays written exactly as strings and read back, so a counterexample survives JSON and a
replay snippet rebuilds the very same bits (float16, bfloat16, -0.0, NaN, 64-bit integers)."""

from __future__ import annotations

import numpy as np

from spec import catalogue, type_of

from .records import Tensor


def _float_texts(flat: np.ndarray) -> list[str]:
    """Short forms (e.g. '0.1') where they read back to the same bits, else the exact float64 repr."""
    texts = [str(v) for v in flat]
    readback = np.array([float(text) for text in texts]).astype(flat.dtype)
    unsigned = f"u{flat.dtype.itemsize}"
    for i in np.flatnonzero(readback.view(unsigned) != flat.view(unsigned)):
        texts[i] = repr(float(flat[i]))
    return texts


def to_tensor(array: np.ndarray) -> Tensor:
    array = np.asarray(array)
    tensor_type = type_of(array.dtype)
    name = tensor_type.name if tensor_type else str(array.dtype)
    flat = array.reshape(-1)
    if tensor_type is not None and tensor_type.family in ("float", "float8"):
        values = _float_texts(np.ascontiguousarray(flat))
    elif array.dtype.kind in "iu":
        values = list(map(str, flat.tolist()))  # Python ints: exact, and far quicker than numpy scalars
    elif array.dtype.kind == "b":
        values = [str(int(v)) for v in flat]
    else:
        values = [str(v) for v in flat]
    return Tensor(type_name=name, shape=list(array.shape), values=values)


def from_tensor(tensor: Tensor) -> np.ndarray:
    """The array a Tensor describes (the inverse of to_tensor for the catalogue's types)."""
    dtype = catalogue()[tensor.type_name].dtype if tensor.type_name in catalogue() else np.dtype(tensor.type_name)
    if dtype.kind in "iu":
        flat = np.array([int(v) for v in tensor.values], dtype=dtype)
    elif dtype.kind == "b":
        flat = np.array([v not in ("0", "False") for v in tensor.values], dtype=dtype)
    elif dtype.kind == "c":
        flat = np.array([complex(v) for v in tensor.values], dtype=dtype)
    else:
        flat = np.array([float(v) for v in tensor.values], dtype=np.float64).astype(dtype)
    return flat.reshape(tensor.shape)
