"""An answer is judged by the element type it carries, whatever holds it: int32 indices in a
memoryview, an array.array, a list of numpy scalars or a JAX-like array are C2, as they are in
an ndarray; only plain Python ints (and lists of them) have no type of their own. Each
container is asked through the worker's own ``call`` (both isolation modes share it), as a plain
function's answer and as a model plug-in's, and judged by the oracle as the session judges."""

from __future__ import annotations

import array
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spec
from engine.adapters.run_model import ModelPluginArgMin
from engine.asking.isolation import Runner
from engine.asking.protocol import detached, typeless
from engine.asking.worker import call
from engine.contract.forms import SYMBOLIC
from spec.oracle import expect, violations

ROOT = Path(__file__).resolve().parent.parent
CONTAINERS_PLUGIN = ROOT / "tests" / "impls" / "plugin_containers.py"
DATA = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, 0.25]], np.float32)
ATTRIBUTES = {"axis": 1, "keepdims": 0}  # a rank-1 answer, which every container can hold
TYPECODES = {np.dtype(np.int64): "q", np.dtype(np.int32): "i", np.dtype(np.int16): "h", np.dtype(np.uint8): "B",
             np.dtype(np.float64): "d"}


class ArrayLike:
    """A JAX-, CuPy- or torch-like array: numpy reads it through ``__array__`` only."""

    def __init__(self, value: np.ndarray) -> None:
        self._value = value

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._value if dtype is None else self._value.astype(dtype)


class InterfaceOnly:
    """numpy reads it through ``__array_interface__`` only."""

    def __init__(self, value: np.ndarray) -> None:
        self._value = value
        self.__array_interface__ = value.__array_interface__


class DLPackOnly:
    """A tensor that offers DLPack and nothing else numpy.asarray reads."""

    def __init__(self, value: np.ndarray) -> None:
        self._value = value

    def __dlpack__(self, **options: Any) -> Any:
        return self._value.__dlpack__(**options)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._value.__dlpack_device__()


class Subclass(np.ndarray):
    pass


CONTAINERS: dict[str, Callable[[np.ndarray], object]] = {
    "ndarray": lambda value: value,
    "ndarray-subclass": lambda value: value.view(Subclass),
    "memoryview": memoryview,
    "array.array": lambda value: array.array(TYPECODES[value.dtype], value.tolist()),
    "list-of-numpy-scalars": list,
    "tuple-of-numpy-scalars": tuple,
    "__array__": ArrayLike,
    "__array_interface__": InterfaceOnly,
    "dlpack": DLPackOnly,
}
EMPTY_CONTAINERS = [name for name in CONTAINERS if "scalars" not in name]  # an empty list is just []


def _judged(data: np.ndarray, attributes: dict[str, int], answer: object, model: bool = False) -> list[tuple]:
    """(clause, problem) of every violation of ``answer``, asked as the worker asks a plain
    function (or, with ``model``, a model plug-in whose callable returns it)."""
    if model:
        fn = ModelPluginArgMin(lambda _: lambda *inputs: answer)
        reply = detached(call(fn, data, 13, attributes, form=SYMBOLIC))
    else:
        reply = detached(call(lambda _data, **_: answer, data, 13, attributes))
    status, value, by_value = reply.status, reply.value, reply.by_value
    assert status == "ok", reply
    vspec = spec.load(13)
    return [(v.clause.id, v.problem) for v in violations(vspec, expect(vspec, data, attributes), data, value,
                                                         by_value=by_value)]


def _right(dtype: type) -> np.ndarray:
    return np.argmin(DATA, axis=1).astype(dtype)


@pytest.mark.parametrize("model", [False, True], ids=["function", "model-plugin"])
@pytest.mark.parametrize("container", CONTAINERS)
@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.uint8, np.float64])
def test_a_wrong_element_type_is_c2_in_every_container(container: str, dtype: type, model: bool) -> None:
    assert _judged(DATA, ATTRIBUTES, CONTAINERS[container](_right(dtype)), model)[:1] == [("C2", "dtype")]


@pytest.mark.parametrize("model", [False, True], ids=["function", "model-plugin"])
@pytest.mark.parametrize("container", CONTAINERS)
def test_int64_indices_pass_in_every_container(container: str, model: bool) -> None:
    assert _judged(DATA, ATTRIBUTES, CONTAINERS[container](_right(np.int64)), model) == []


@pytest.mark.parametrize("container", EMPTY_CONTAINERS)
def test_an_empty_answer_of_the_wrong_shape_fails_in_every_container(container: str) -> None:
    empty = np.zeros((0, 3), np.float32)  # reduced over axis 1: a (0, 1) answer is due
    answer = CONTAINERS[container](np.zeros(0, np.int64))
    assert _judged(empty, {"axis": 1}, answer) == [("C3", "shape")]
    assert _judged(DATA, ATTRIBUTES, answer) == [("C3", "shape")]  # two indices are due


@pytest.mark.parametrize(("answer", "expected"), [
    (1, True), ([1, 0], True), ((1, [2, 3]), True), ([], True), ([[], []], True),
    (True, False), (np.int64(1), False), ([np.int64(1)], False), ([1, np.int32(0)], False),
    (memoryview(np.zeros(2, np.int64)), False), (1.0, False), ("1", False),
])
def test_only_plain_python_ints_are_typeless(answer: object, expected: bool) -> None:
    assert typeless(answer) is expected


def test_a_list_subclass_runs_nothing_and_has_a_type() -> None:
    class Sneaky(list):
        def __len__(self) -> int:
            raise AssertionError("the implementation's code ran in typeless()")

    assert not typeless(Sneaky([1, 2]))


def test_a_jax_like_array_from_a_sandboxed_worker_is_c2() -> None:
    """Through the worker process: the container's type is read where the plug-in ran."""
    with Runner(f"{CONTAINERS_PLUGIN}:jax_like") as runner:
        reply = runner.call(DATA, 13, ATTRIBUTES)
    assert (reply.status, reply.by_value, reply.value.dtype) == ("ok", False, np.dtype(np.int32))
    vspec = spec.load(13)
    assert violations(vspec, expect(vspec, DATA, ATTRIBUTES), DATA, reply.value, by_value=reply.by_value)[0] \
        .clause.id == "C2"


def test_a_jax_like_plugin_is_non_conformant_on_c2(tmp_path: Path) -> None:
    """The whole run: once it read CONFORMANT (exit 0) with a certificate."""
    done = subprocess.run([sys.executable, "-m", "suites", "--impl", f"{CONTAINERS_PLUGIN}:jax_like", "--versions",
                           "13", "--dtypes", "float", "--profile", "quick", "--seed", "1", "--report-dir",
                           str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "ArgMin-13: NON-CONFORMANT (C2: float wrong answer)" in done.stdout, done.stdout
