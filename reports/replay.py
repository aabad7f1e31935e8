"""Exact display of recorded tensors and the copy-paste Python snippet that replays a failure.

Values are recorded as exact strings; arrays are rebuilt from those strings (floats through
float64, which holds every float16, bfloat16 and float32 value exactly; integers through Python
ints, so uint64 and int64 extremes survive), never from a rounded printout."""

from __future__ import annotations

import keyword
import re

import spec
from results import Counterexample, Tensor

_WRAPPED = re.compile(r"^(?:np|numpy|ml_dtypes)\.\w+\((.*)\)$")
_BOOLS = {"np.True_": "True", "np.False_": "False", "numpy.True_": "True", "numpy.False_": "False"}
_LINE_BREAKS = str.maketrans(dict.fromkeys("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", " "))
DISPLAY_LIMIT = 512


def plain(value: str) -> str:
    """'np.float16(1.5)' -> '1.5': the value as written, without numpy's scalar wrapper."""
    value = str(value).strip()
    if value in _BOOLS:
        return _BOOLS[value]
    match = _WRAPPED.match(value)
    return match[1] if match else value


def display_values(tensor: Tensor) -> str:
    """Nested-list text of the exact values (C order), cut after DISPLAY_LIMIT values."""
    values = [plain(v) for v in tensor.values]
    shape = [int(n) for n in tensor.shape]
    if len(values) > DISPLAY_LIMIT or (shape and _product(shape) != len(values)):
        shown = ", ".join(values[:DISPLAY_LIMIT])
        rest = len(values) - DISPLAY_LIMIT
        return f"[{shown}{f', … ({rest} more)' if rest > 0 else ''}] (flat)"
    if not shape:
        return values[0] if values else "[]"
    return _nest(values, shape) if values else "[]"


def _product(shape: list[int]) -> int:
    total = 1
    for n in shape:
        total *= n
    return total


def _nest(values: list[str], shape: list[int]) -> str:
    if len(shape) == 1:
        return "[" + ", ".join(values) + "]"
    step = _product(shape[1:])
    parts = [_nest(values[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]
    return "[" + ", ".join(parts) + "]"


def _dtype_expression(name: str) -> tuple[str, str]:
    """(Python expression for the dtype, family) of an ONNX type name from the catalogue."""
    entry = spec.catalogue().get(name)
    if entry is None:
        return f"np.dtype({name!r})", "other"
    numpy_name = entry.dtype.name
    if entry.dtype.kind == "V" or entry.family in ("float8",) or numpy_name == "bfloat16":
        return f"ml_dtypes.{numpy_name}", entry.family
    return f"np.dtype({numpy_name!r})", entry.family


def build_expression(tensor: Tensor) -> str:
    """Python expression rebuilding the tensor exactly from the list named ``values``."""
    dtype, family = _dtype_expression(tensor.type_name)
    shape = tuple(int(n) for n in tensor.shape)
    if family in ("float", "float8"):
        array = f"np.array([float(v) for v in values], dtype=np.float64).astype({dtype})"
    elif family in ("signed", "unsigned"):
        array = f"np.array([int(v) for v in values], dtype={dtype})"
    elif family == "bool":
        array = f"np.array([v in ('1', 'True', 'true') for v in values], dtype={dtype})"
    elif family == "complex":
        array = f"np.array([complex(v) for v in values], dtype={dtype})"
    else:
        array = f"np.array(values).astype({dtype})"
    return f"{array}.reshape({shape!r})"


def _values_literal(values: list[str]) -> str:
    items = [repr(plain(v)) for v in values]
    lines, line = [], ""
    for item in items:
        if line and len(line) + len(item) > 90:
            lines.append(line)
            line = ""
        line += item + ", "
    if line:
        lines.append(line)
    if len(lines) <= 1:
        return "[" + "".join(lines).rstrip(", ") + "]"
    return "[\n" + "".join(f"    {chunk.rstrip()}\n" for chunk in lines) + "]"


def _comment(label: str, value: Tensor | str | None) -> str:
    text = display_values(value) if isinstance(value, Tensor) else str(value)
    text = text.translate(_LINE_BREAKS)
    if len(text) > 300:
        text = text[:300] + " …"
    return f"# {label}: {text}"


def _call_arguments(version: int, attributes: dict) -> str:
    named = [f"opset={int(version)}"]
    odd = {}
    for name, value in attributes.items():
        if str(name).isidentifier() and not keyword.iskeyword(str(name)) and name != "opset":
            named.append(f"{name}={value!r}")
        else:
            odd[str(name)] = value
    if odd:
        named.append(f"**{odd!r}")
    return ", ".join(named)


def snippet(impl: str, version: int, ce: Counterexample) -> str:
    """A Python script that replays one counterexample at ArgMin-``version``; run it from the
    suite's checkout."""
    return "\n".join([
        "# Run from the argmin-conformance checkout.",
        "import ml_dtypes",
        "import numpy as np",
        "",
        "from engine.plugins import resolve",
        "",
        f"fn = resolve({str(impl)!r})",
        f"values = {_values_literal(ce.input.values)}",
        f"data = {build_expression(ce.input)}",
        f"print(fn(data, {_call_arguments(version, ce.attributes)}))",
        _comment("expected", ce.expected),
        _comment("recorded", ce.actual),
        "",
    ])
