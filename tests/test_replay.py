"""Replay snippets run as files kept in a directory unrelated to the checkout, run from the
checkout's root (as they say: they name no local path), with the interpreter that ran the suite
(isolated: no PYTHONPATH, no user site), and reach the suite's verdict: they fail while the
implementation gets the input wrong and pass where it gets it right. The standalone snippet of a
model-based runtime needs nothing of the suite (run so, the checkout is not on its path)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import spec
from engine import runtimes
from engine.asking.loader import portable, resolve
from engine.asking.worker import call
from engine.judging.judge import judge
from generators import Case
from reports.document.replay import snippet, standalone
from results import Counterexample, Pack, PackNode
from results.tensors import to_tensor

CHECKOUT = Path(__file__).resolve().parent.parent
IMPLS = Path(__file__).parent / "impls"
MODEL = IMPLS / "model_onnxruntime.py"
FLT_MAX = np.finfo(np.float32).max

# (impl, form, version, input, attributes): some the runtime gets right, some it does not.
CASES = [
    ("tract", "symbolic", 13, np.array([np.inf, FLT_MAX], np.float32), {}),  # tract answers 0
    ("tvm", "symbolic", 13, np.array([255, 255], np.uint8), {}),  # TVM answers -1
    ("iree", "static", 13, np.array([1.0, 1 - 1e-12]), {}),  # right: doubles stay doubles
    ("tinygrad", "initializer", 13, np.array([0, 1], np.uint8), {}),  # tinygrad answers 1
    ("onnxruntime", "static", 13, np.array([np.inf, FLT_MAX], np.float32), {}),
    ("openvino", "symbolic", 13, np.array([1.0, 1 - 1e-12]), {}),  # doubles at float32 precision
    ("openvino", "initializer", 13, np.array([[True, False]]), {"axis": 1}),  # bool is outside T
    ("onnxruntime", "symbolic", 13, np.array([[True, False]]), {"axis": 1}),
    ("onnx-reference", "static", 11, np.array([[3, 1, 2]], np.int8), {"axis": 1, "keepdims": 0}),
    (f"model:{MODEL}:compile", "static", 13, np.array([[3, 1, 2]], ml_dtypes.bfloat16), {}),
    ("backend:onnxruntime.backend", "initializer", 12, np.array([2, 1, 1], np.int32), {"select_last_index": 1}),
    (f"{IMPLS / 'plugin_good.py'}:argmin", None, 12, np.array([2, 1, 1], np.int32), {"select_last_index": 1}),
    ("zoo.broken_values:ties_first_always", None, 12, np.array([2, 1, 1], np.int32), {"select_last_index": 1}),
]


def _run(script: str, folder: Path) -> subprocess.CompletedProcess:
    path = folder / "replay.py"
    path.write_text(script, encoding="utf-8")
    return subprocess.run([sys.executable, "-I", str(path)], cwd=CHECKOUT, capture_output=True, text=True,
                          timeout=300, check=False)


def _installed(impl: str) -> bool:
    """The runtime imports here (and tinygrad's CPU device finds its C compiler)."""
    found = runtimes.find(impl)
    if impl == "tinygrad" and shutil.which(os.environ.get("CC", "clang")) is None:
        return False
    return found is None or not found[0].module or importlib.util.find_spec(found[0].module.split(".")[0]) is not None


@pytest.mark.parametrize(("impl", "form", "version", "data", "attributes"), [
    pytest.param(*case, marks=pytest.mark.skipif(not _installed(case[0]), reason=f"{case[0]} is not installed here"))
    for case in CASES], ids=[f"{c[0].split('/')[-1]}-{c[1]}-{c[3].dtype}" for c in CASES])
def test_snippets_reach_the_suites_verdict(tmp_path: Path, impl: str, form: str | None, version: int,
                                          data: np.ndarray, attributes: dict[str, int]) -> None:
    vspec = spec.load(version)
    reply = call(resolve(impl), data, version, attributes, form)
    judged = judge(vspec, Case(version, data, attributes), reply, "property",
                   lambda d, a: call(resolve(impl), d, version, a, form))
    result = judged.result
    ce = judged.evidence(judged.failures[0]) if judged.failures else \
        Counterexample(to_tensor(data), attributes, None, None, "", "")
    scripts = [snippet(portable(impl), version, ce, kind=result.kind, clause=result.clause, form=form)]
    other = standalone(portable(impl), version, ce, kind=result.kind, clause=result.clause, form=form)
    assert (other is None) == (form is None)  # only for runtimes the suite builds models for
    scripts += [other] if other else []
    for script in scripts:
        done = _run(script, tmp_path)
        assert (done.returncode == 0) == (result.outcome == "pass"), (result.outcome, done.stdout, done.stderr)
        if result.outcome in ("fail", "missing-rejection"):
            assert "AssertionError" in done.stderr, done.stderr


# Every way the standalone snippet runs a model, in a form each runtime gets right: a packed
# model's nodes answer differently, so a snippet that read another node's output would fail.
PACKED = [("tract", "symbolic"), ("tvm", "symbolic"), ("iree", "static"), ("tinygrad", "initializer"),
          ("onnxruntime", "static"), ("openvino", "symbolic"), ("onnx-reference", "static"),
          (f"model:{MODEL}:compile", "symbolic"), ("backend:onnxruntime.backend", "initializer")]


@pytest.mark.parametrize(("impl", "form"), [
    pytest.param(*case, marks=pytest.mark.skipif(not _installed(case[0]), reason=f"{case[0]} is not installed here"))
    for case in PACKED], ids=[c[0].split("/")[-1] for c in PACKED])
def test_snippets_of_a_packed_model_check_their_node(tmp_path: Path, impl: str, form: str) -> None:
    datas = [np.array([[1, 2, 3]], np.float32), np.array([[3, 2, 1]], np.float32), np.array([[2, 1, 3]], np.float32)]
    nodes = [PackNode(to_tensor(data), {"axis": 1}) for data in datas]
    for position, answer in ((1, "[[2]]"), (2, "[[1]]")):
        ce = Counterexample(nodes[position].input, {"axis": 1}, None, None, "", "", pack=Pack(form, position, nodes))
        for script in (snippet(portable(impl), 13, ce, form=form), standalone(portable(impl), 13, ce, form=form)):
            done = _run(script, tmp_path)
            assert done.returncode == 0 and done.stdout.split() == [answer], (done.stdout, done.stderr)


# --- reproducers that fail while the bug is there (issues 21 and 22) ---------------------------

MODEL_ZOO = IMPLS / "model_zoo.py"
# (zoo module, entry, version, input, attributes): inputs each entry gets wrong, at versions where
# ties are undefined (so only the index range shows the -1) and where they are defined.
BUGS = [
    ("broken_values", "minus_one_sentinel", 11, np.array([[255, 255], [3, 1]], np.uint8), {"axis": 1}),
    ("broken_rejects", "int32_indices", 13, np.array([2, 1, 1], np.int32), {}),
    ("broken_values", "ties_first_always", 12, np.array([2, 1, 1], np.int32), {"select_last_index": 1}),
]


def _run_with_checkout(script: str, folder: Path) -> subprocess.CompletedProcess:
    """A standalone snippet with the checkout importable: the model plug-in wraps a zoo entry."""
    path = folder / "standalone.py"
    path.write_text(script, encoding="utf-8")
    return subprocess.run([sys.executable, str(path)], cwd=folder, capture_output=True, text=True, timeout=300,
                          check=False, env={"PYTHONPATH": str(Path(__file__).resolve().parent.parent),
                                            "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize(("module", "entry", "version", "data", "attributes"), BUGS,
                         ids=[f"{b[1]}-v{b[2]}-{b[3].dtype}" for b in BUGS])
def test_replays_fail_on_the_bug_and_pass_on_a_correct_implementation(
        tmp_path: Path, module: str, entry: str, version: int, data: np.ndarray, attributes: dict) -> None:
    broken = f"zoo.{module}:{entry}"
    judged = judge(spec.load(version), Case(version, data, attributes),
                   call(resolve(broken), data, version, attributes), "property",
                   lambda d, a: call(resolve(broken), d, version, a))
    assert judged.failures, "the input must show the bug"
    result, ce = judged.result, judged.evidence(judged.failures[0])
    for impl, fails in ((broken, True), ("zoo.correct:numpy_argmin", False)):
        done = _run(snippet(impl, version, ce, kind=result.kind, clause=result.clause), tmp_path)
        assert (done.returncode != 0) == fails and ("AssertionError" in done.stderr) == fails, (impl, done.stderr)
    for name, fails in ((entry, True), ("numpy_argmin", False)):
        script = standalone(f"model:{MODEL_ZOO}:{name}", version, ce, kind=result.kind, clause=result.clause,
                            form="symbolic")
        done = _run_with_checkout(script, tmp_path)
        assert (done.returncode != 0) == fails and ("AssertionError" in done.stderr) == fails, (name, done.stderr)


def test_a_replay_names_no_local_path_and_says_where_it_runs(tmp_path: Path) -> None:
    """The report promises no local path: the replay finds the suite from where it is run, and
    run from anywhere else it says so in one line."""
    ce = Counterexample(to_tensor(np.array([2, 1, 1], np.int32)), {}, None, None, "", "")
    script = snippet("zoo.correct:numpy_argmin", 13, ce, kind="semantic")
    assert str(CHECKOUT) not in script
    path = tmp_path / "replay.py"
    path.write_text(script, encoding="utf-8")
    done = subprocess.run([sys.executable, "-I", str(path)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "run this from the root of the argmin-conformance checkout, or with PYTHONPATH" in done.stderr
    assert _run(script, tmp_path).returncode == 0, "from the checkout's root it runs"


def test_report_texts_enter_a_snippet_as_quoted_values(tmp_path: Path) -> None:
    """Fields of a report (clause, problem, module names) are data: a planted line stays a string."""
    planted = "x'); import os; os.system('touch PLANTED'); ('"
    ce = Counterexample(to_tensor(np.array([[True, False]])), {"axis": 1}, "must raise", None,
                        "missing-rejection\nimport os; os.system('touch PLANTED')", "")
    scripts = [snippet(f"{IMPLS / 'plugin_good.py'}:argmin", 13, ce, kind="rejection", clause=planted),
               standalone(f"backend:{planted}", 13, ce, kind="rejection", clause=planted, form="symbolic"),
               standalone(f"model:{planted}:compile", 13, ce, kind="rejection", clause=planted, form="symbolic")]
    for script in scripts:
        compile(script, "replay.py", "exec")  # still Python
        _run(script, tmp_path)
        assert not (tmp_path / "PLANTED").exists() and not (CHECKOUT / "PLANTED").exists(), script
