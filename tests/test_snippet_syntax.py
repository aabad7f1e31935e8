"""Every snippet a report can carry is Python: the replay and the standalone reproducer compile
for every type the catalogue knows (bfloat16 and the float8 types need ml_dtypes), every kind of
failure, every model form, one-node or packed, and every way of naming an implementation. A
sample of them then runs (as files, in fresh interpreters) against a correct and a broken
implementation and must pass on the first and fail on the second."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import spec
from engine import runtimes
from reports.document.replay import snippet, standalone
from results import Counterexample, Pack, PackNode
from results.tensors import to_tensor

CHECKOUT = Path(__file__).resolve().parent.parent
IMPLS = Path(__file__).parent / "impls"
MODEL_ZOO = IMPLS / "model_zoo.py"
FORMS = ("symbolic", "static", "initializer")
# Every way of naming a model-based runtime: each built-in word, a backend module, a model plug-in.
MODEL_IMPLS = [*(w for w in runtimes.BY_WORD if w != "backend"), "backend:onnxruntime.backend",
               f"model:{MODEL_ZOO}:numpy_argmin"]
FUNCTION_IMPLS = ["zoo.correct:numpy_argmin", f"{IMPLS / 'plugin_good.py'}:argmin"]


def _input(type_name: str) -> np.ndarray:
    """[2, 1, 1] (a tie) in ``type_name``: every catalogue type holds these values."""
    dtype = spec.catalogue()[type_name].dtype
    return np.array([True, False, False]) if dtype.kind == "b" else np.array([2, 1, 1]).astype(dtype)


def _counterexample(type_name: str, attributes: dict[str, int]) -> Counterexample:
    data = _input(type_name)
    return Counterexample(to_tensor(data), attributes, to_tensor(np.array(2, np.int64)),
                          to_tensor(np.array(1, np.int64)), "wrong-tie", "returned 1")


def _cases() -> list[tuple[int, str, str]]:
    """(version, type, kind): semantic and undefined failures on T's types, rejections on all."""
    cases = []
    for version in spec.versions():
        in_t = spec.load(version).type_names
        for type_name in spec.catalogue():
            kinds = ("semantic", "undefined", "rejection") if type_name in in_t else ("rejection",)
            cases += [(version, type_name, kind) for kind in kinds]
    return cases


def test_the_cases_cover_the_types_that_need_ml_dtypes() -> None:
    needing = {name for name, entry in spec.catalogue().items() if entry.dtype.name.startswith(("bfloat16", "float8"))}
    assert {"bfloat16", "float8e4m3fn"} <= needing <= {t for _, t, _ in _cases()}


@pytest.mark.parametrize(("version", "type_name", "kind"), _cases(), ids=lambda v: str(v))
def test_every_snippet_compiles(version: int, type_name: str, kind: str) -> None:
    ce = _counterexample(type_name, {"axis": 0})
    scripts = [snippet(impl, version, ce, kind=kind, clause="C1") for impl in FUNCTION_IMPLS]
    for impl in MODEL_IMPLS:
        for form in FORMS:
            packed = Pack(form, 1, [PackNode(ce.input, {}), PackNode(ce.input, {"axis": 0})])
            for shown in (ce, dataclasses.replace(ce, pack=packed)):
                scripts.append(snippet(impl, version, shown, kind=kind, clause="C1", form=form))
                scripts.append(standalone(impl, version, shown, kind=kind, clause="C1", form=form))
    for script in filter(None, scripts):
        compile(script, "snippet.py", "exec")


def _run(script: str, folder: Path) -> subprocess.CompletedProcess:
    """The script as a file, its own interpreter, the checkout importable (the model plug-in
    wraps zoo entries), a directory of its own."""
    path = folder / "snippet.py"
    path.write_text(script, encoding="utf-8")
    return subprocess.run([sys.executable, str(path)], cwd=folder, capture_output=True, text=True, timeout=300,
                          check=False, env={"PYTHONPATH": str(CHECKOUT), "PATH": "/usr/bin:/bin"})


# (version, input, attributes, kind, broken zoo entry): a bfloat16 tie the broken entry answers
# with the first minimum; a float8 input outside T that the broken entry computes.
SAMPLES = [
    (13, np.array([2, 1, 1], ml_dtypes.bfloat16), {"select_last_index": 1}, "semantic",
     "broken_values:ties_first_always"),
    (13, np.array([2, 1, 1], ml_dtypes.float8_e4m3fn), {}, "rejection", "broken_rejects:no_type_check"),
]


@pytest.mark.e2e
@pytest.mark.parametrize(("version", "data", "attributes", "kind", "broken"), SAMPLES,
                         ids=[f"{s[1].dtype}-{s[3]}" for s in SAMPLES])
def test_a_sample_passes_on_a_correct_implementation_and_fails_on_a_broken_one(
        tmp_path: Path, version: int, data: np.ndarray, attributes: dict, kind: str, broken: str) -> None:
    ce = Counterexample(to_tensor(data), attributes, None, None, "", "")
    for entry, fails in (("correct:numpy_argmin", False), (broken, True)):
        scripts = [snippet(f"zoo.{entry}", version, ce, kind=kind, clause="C1")]
        scripts += [standalone(f"model:{MODEL_ZOO}:{entry.split(':')[1]}", version, ce, kind=kind, clause="C1",
                               form=form) for form in FORMS]
        for script in scripts:
            done = _run(script, tmp_path)
            assert (done.returncode != 0) == fails, (entry, done.stdout, done.stderr)
            assert ("AssertionError" in done.stderr) == fails, (entry, done.stderr)
