"""A report's failures as regression tests in ONNX's backend node-test layout (reports.regressions),
and the runner written beside them (reports.ci_conftest): failures/ holds exactly the failures that
make a headline, each failing on the implementation that failed it and passing on correct ones
(onnxruntime's backend, onnx's reference evaluator), compared exactly; types not implemented and
flaky failures stand apart; crashes on inputs without an answer are tests that must not crash;
a pack keeps its case when a neighbour has no single answer; what the suite did not write is never
deleted; untrusted reports cannot make the export misbehave."""

from __future__ import annotations

import ast
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import unittest
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import onnx.backend.base
import onnx.backend.test.runner
import onnx.checker
import onnx.numpy_helper
import pytest
from onnx.backend.test.loader import load_model_tests

import noxfile
import spec
from engine.config.options import run_info
from engine.judging.run import run_all
from reports import aggregate, write_reports
from reports.__main__ import main
from reports.folders import ci_conftest
from reports.folders.regressions import ELEMENTS_PER_TEST, FOLDER, INDEX, RUNNER, export
from results import CaseResult, CensusRecord, Counterexample, Pack, PackNode, RawRun, Tensor, files, save
from results.digest import input_digest
from results.tensors import to_tensor
from tests.impls import model_packing, model_zoo
from tests.report_fixtures.runs import failing_run, passing_run, refusing_run, tensor
from tests.test_packing import model, settings

CHECKOUT = Path(__file__).resolve().parent.parent
DOCS = CHECKOUT / "docs" / "how-to" / "regressions.md"
IGNORES_SELECT_LAST_INDEX = f"model:{model_zoo.__file__}:ties_first_always"
ONNXRUNTIME = ["--argmin-backend", "onnxruntime.backend"]
REFERENCE = ["--argmin-model-plugin", f"{CHECKOUT / 'tests' / 'impls' / 'model_reference.py'}:compile"]


def plugin(name: str, module: object = model_packing) -> list[str]:
    return ["--argmin-model-plugin", f"{module.__file__}:{name}"]


# --- the runner, as a CI runs it ---------------------------------------------------------------------

def run_tests(folder: Path, *args: str, cwd: Path) -> tuple[int, dict[str, str], str]:
    """``pytest FOLDER ARGS`` in a fresh process, as a runtime's CI runs a set: its exit status,
    each test's outcome by name (``failures/test_...``, ``index``) and its output. The checkout
    is on the path only for the fake runtimes of tests/impls (the runner imports nothing of it)."""
    done = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", str(folder), *args],
                          cwd=cwd, capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "PYTHONPATH": str(CHECKOUT)})
    outcomes = {found[2]: found[1].lower() for found in re.finditer(r"^(PASSED|FAILED|ERROR) \S*::(\S+)",
                                                                      done.stdout, re.MULTILINE)}
    return done.returncode, outcomes, done.stdout + done.stderr


def failure_sections(output: str) -> str:
    """The failures' own sections of pytest's output, without the short summary whose lines
    repeat each message cut to the terminal's width (which differs between machines)."""
    return output.split("short test summary info")[0]


def checked(folder: Path, test: dict, option: str, name: str) -> str | None:
    """The runner's finding on one test, in this process (the runtime named as its options name
    it): for what needs neither pytest nor a child process."""
    backend, model_plugin = (name, None) if option == "--argmin-backend" else (None, name)
    return ci_conftest.check(folder / test["path"], ci_conftest.load_runtime(backend, "CPU", model_plugin))


def index(folder: Path) -> dict:
    return json.loads((folder / INDEX).read_text(encoding="utf-8"))


def in_set(folder: Path, chosen: str) -> list[dict]:
    return [test for test in index(folder)["tests"] if test["set"] == chosen]


def checked_models(folder: Path, chosen: str = "failures") -> list[onnx.ModelProto]:
    """Every model of a set, each through onnx.checker's full check."""
    models = [onnx.load(str(folder / test["path"] / "model.onnx")) for test in in_set(folder, chosen)]
    for built in models:
        onnx.checker.check_model(built, full_check=True)
    return models


def data_set(folder: Path, kind: str) -> list[np.ndarray]:
    found = sorted((folder / "test_data_set_0").glob(f"{kind}_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
    return [onnx.numpy_helper.to_array(onnx.load_tensor(str(path))) for path in found]


def _report(impl: str, tmp_path: Path, packing: str = "off", **values: str) -> Path:
    """The report folder of a run of ``impl`` (one process, the quick profile)."""
    chosen = settings(impl, packing, tmp_path, **values)
    run = run_all(chosen)
    write_reports(RawRun(run_info(chosen, time.time()), {}, run.results, run.census), tmp_path / "report")
    return tmp_path / "report" / FOLDER


def test_a_broken_entrys_failures_fail_under_it_and_pass_under_onnxruntime_and_the_reference(tmp_path: Path) -> None:
    """The entry ignores select_last_index (ArgMin-12 and -13 decide ties by it)."""
    folder = _report(IGNORES_SELECT_LAST_INDEX, tmp_path, versions="12,13", forms="symbolic,static")
    tests = in_set(folder, "failures")
    assert tests and len(tests) == len(index(folder)["tests"]), "every failure makes the headline"
    assert {t["clause"] for t in tests} == {"C6"} and {t["form"] for t in tests} == {"symbolic", "static"}
    assert (folder / RUNNER).read_bytes() == (CHECKOUT / "reports" / "folders" / "ci_conftest.py").read_bytes()
    names = {t["path"] for t in tests}
    status, broken, _ = run_tests(folder, *plugin("ties_first_always", model_zoo), cwd=tmp_path)
    assert status == 1 and broken == {**dict.fromkeys(names, "failed"), "index": "passed"}, broken
    for runtime in (ONNXRUNTIME, REFERENCE):
        status, correct, output = run_tests(folder, *runtime, cwd=tmp_path)
        assert status == 0 and correct == {**dict.fromkeys(names, "passed"), "index": "passed"}, output[-2000:]
    checked_models(folder)


def test_the_runner_needs_nothing_of_the_suite_and_a_set_without_tests_passes(tmp_path: Path) -> None:
    tree = ast.parse((CHECKOUT / "reports" / "folders" / "ci_conftest.py").read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported - set(sys.stdlib_module_names) == {"numpy", "onnx", "pytest"}
    folder = write_reports(passing_run(), tmp_path / "report")["regressions"]
    assert sorted(p.name for p in folder.iterdir()) == [RUNNER, INDEX] and not index(folder)["tests"]
    status, outcomes, output = run_tests(folder, *ONNXRUNTIME, cwd=tmp_path)
    assert status == 0 and outcomes == {"index": "passed"}, output[-2000:]
    status, _, output = run_tests(folder, cwd=tmp_path)
    assert status == 4 and "ERROR: name one runtime: --argmin-backend MODULE" in output, output[-2000:]


def test_a_set_missing_a_test_fails_its_index_test(tmp_path: Path) -> None:
    folder = write_reports(refusing_run(), tmp_path / "report")["regressions"]
    missing = in_set(folder, "failures")[0]["path"]
    shutil.rmtree(folder / missing)
    status, outcomes, output = run_tests(folder, *REFERENCE, cwd=tmp_path)
    assert status == 1 and outcomes == {"index": "failed"} and missing in output


# --- what goes where ----------------------------------------------------------------------------------

def _failure(version: int, data: Tensor, attributes: dict, form: str | None = None, pack: Pack | None = None,
             kind: str = "semantic", clause: str = "C4", outcome: str = "fail", flaky: bool = False,
             actual: Tensor | str | None = None) -> CaseResult:
    ce = Counterexample(data, attributes, None, actual or Tensor("int64", [1], ["9"]), "index-range", "m", pack=pack,
                        flaky=flaky)
    return CaseResult(version, data.type_name, "property", kind, outcome, [clause], clause, [], "t", 0.0, ce,
                      form=form)


def _raw(results: list[CaseResult], census: list[CensusRecord] = ()) -> RawRun:
    raw = failing_run()
    raw.results, raw.census, raw.info.forms = results, list(census), ["symbolic", "static", "initializer"]
    return raw


def test_every_type_version_and_form_exports_a_checked_model_compared_exactly(tmp_path: Path) -> None:
    results = [_failure(version, tensor([2, 1, 3], name), {"axis": 0}, form)
               for version in spec.versions() for name in spec.load(version).type_names
               for form in ("symbolic", "static", "initializer")]
    folder = write_reports(_raw(results), tmp_path)["regressions"]
    tests = in_set(folder, "failures")
    assert len(tests) == len(results) == len(index(folder)["tests"]) and not index(folder)["left_out"]
    assert {t["type"] for t in tests} >= {"float16", "bfloat16", "double", "int8", "uint64", "int64"}
    checked_models(folder)
    for test in tests:
        inputs = data_set(folder / test["path"], "input")
        assert len(inputs) == (0 if test["form"] == "initializer" else 1)
        assert [o.tolist() for o in data_set(folder / test["path"], "output")] == [[1]]
        assert json.loads((folder / test["path"] / "data.json").read_text()) == {"rtol": 0, "atol": 0}
    bfloat16 = next(t for t in tests if t["type"] == "bfloat16" and t["form"] == "static")
    assert data_set(folder / bfloat16["path"], "input")[0].dtype == ml_dtypes.bfloat16


def test_a_failure_without_one_right_answer_is_left_out_and_the_index_says_why(tmp_path: Path) -> None:
    tie = tensor([1.0, 1.0, 2.0], "float")
    results = [_failure(11, tie, {}), _failure(1, tie, {"axis": 0}), _failure(13, tie, {"select_last_index": 1}),
               _failure(13, tensor([1.0, float("nan")], "double"), {}),
               _failure(13, tensor([1], "int32"), {"axis": 3}, kind="rejection", clause="C10",
                        outcome="missing-rejection"),
               _failure(13, Tensor("float", [], ["1.0"]), {"axis": 0}, kind="rejection", clause="C11",
                        outcome="missing-rejection")]
    raw = _raw(results, failing_run().census)
    folder = write_reports(raw, tmp_path)["regressions"]
    said = index(folder)
    assert [t["version"] for t in said["tests"]] == [13], "ArgMin-13 decides ties by select_last_index"
    assert data_set(folder / said["tests"][0]["path"], "output")[0].tolist() == [1]
    why = {(left["version"], left["clause"], left["type"]): left["why"] for left in said["left_out"]}
    assert len(why) == 5, "census observations that took nothing down are never exported, nor listed"
    ties = [w for (version, *_), w in why.items() if version in (1, 11)]
    assert len(ties) == 2 and all(w.startswith("ties: ") and "tied minima" in w for w in ties)
    assert why[13, "C4", "double"].startswith("C14 (") and "defines no answer" in why[13, "C4", "double"]
    assert why[13, "C10", "int32"].startswith("C10 (reject-axis)") and "must be refused" in why[13, "C10", "int32"]
    assert why[13, "C11", "float"].startswith("C11 (reject-rank-0)"), "a rank-0 input's own clause, not C10"
    assert {left["role"] for left in said["left_out"] if left["clause"] in ("C10", "C11")} == {"strictness"}


def test_types_not_implemented_stand_apart_from_the_failures_a_ci_runs(tmp_path: Path) -> None:
    """onnxruntime's shape: no kernel for int16, uint16 (and bfloat16 at 13), float16 broken at 1."""
    folder = write_reports(refusing_run(), tmp_path)["regressions"]
    failures, scope = in_set(folder, "failures"), in_set(folder, "scope")
    assert [(t["version"], t["type"]) for t in failures] == [(1, "float16")]
    assert {(t["version"], t["type"]) for t in scope} == {(1, "int16"), (1, "uint16"), (13, "int16"), (13, "uint16"),
                                                          (13, "bfloat16")}
    assert all(t["role"] == "scope" and "not implemented" in t["reason"] and t["path"].startswith("scope/")
               for t in scope)
    assert sorted(p.name for p in folder.iterdir()) == [RUNNER, "failures", INDEX, "scope"]
    assert "failures" in index(folder)["sets"] and "scope" in index(folder)["sets"]


def test_a_flaky_failure_stands_apart(tmp_path: Path) -> None:
    results = [_failure(13, tensor([2.0, 1.0], "float"), {}, "static"),
               _failure(13, tensor([2.0, 1.0, 3.0], "float"), {}, "static", clause="C5", flaky=True)]
    folder = write_reports(_raw(results), tmp_path)["regressions"]
    assert [t["nodes"] for t in in_set(folder, "failures")] == [1]
    flaky, = in_set(folder, "flaky")
    assert flaky["path"].startswith("flaky/") and "answered right" in flaky["reason"]
    assert data_set(folder / flaky["path"], "output")[0].tolist() == [1]


def test_crashes_without_an_answer_must_not_crash_and_a_crash_fails_its_test_alone(tmp_path: Path) -> None:
    """A NaN input that crashed the runtime (the census), an invalid model that did, and a valid
    input that did (failures/: it has an answer): the first two are a model and inputs without
    outputs; each crasher runs in a child process, so the other tests still run. The fake runtime
    dies on any input of 3 elements: the NaN input and the valid one."""
    nan = CensusRecord(13, "float", "C14", tensor([1.0, float("nan"), 0.5], "float"), {}, "crash: SIGABRT", [],
                       status="crash", deterministic=None, form="static")
    results = [_failure(13, tensor([2.0, 1.0], "float"), {"axis": 5}, "static", kind="rejection", clause="C10",
                        outcome="crash", actual="crash: the worker process died from SIGSEGV"),
               _failure(13, tensor([3.0, 1.0, 2.0], "float"), {}, "symbolic", clause="C1", outcome="crash",
                        actual="crash: the worker process exited with status 3"),
               _failure(13, tensor([2.0, 0.0, 1.0, 3.0], "float"), {}, "static"),
               CaseResult(13, "float", "census", "undefined", "observed", ["C14"], "C14", form="static")]
    folder = write_reports(_raw(results, [nan]), tmp_path)["regressions"]
    crashes = {t["clause"]: t for t in in_set(folder, "must-not-crash")}
    assert crashes.keys() == {"C10", "C14"} and not index(folder)["left_out"]
    assert "invalid model" in crashes["C10"]["reason"] and "SIGSEGV" in crashes["C10"]["reason"]
    assert "defines no answer" in crashes["C14"]["reason"] and crashes["C14"]["suite"] == "census"
    for test in crashes.values():
        assert test["form"] == "static" and not data_set(folder / test["path"], "output")
        assert len(data_set(folder / test["path"], "input")) == 1
    crashed = {crashes["C14"]["path"], in_set(folder, "failures")[0]["path"]}
    assert in_set(folder, "failures")[0]["outcome"] == "crash"
    status, outcomes, output = run_tests(folder, *plugin("crash_on_three"), cwd=tmp_path)
    crashed_lines = failure_sections(output).count("the runtime took its process down (exited with status 3)")
    assert status == 1 and crashed_lines == 2
    assert {name for name, outcome in outcomes.items() if outcome == "failed"} == crashed
    assert len(outcomes) == 5, "the others ran"
    status, outcomes, output = run_tests(folder, *REFERENCE, cwd=tmp_path)
    assert status == 0 and len(outcomes) == 5 and set(outcomes.values()) == {"passed"}, output[-2000:]


def test_census_records_name_the_model_form_they_were_asked_in(tmp_path: Path) -> None:
    run = run_all(settings(model("correct"), "on", tmp_path, forms="static,initializer", versions="13"))
    asked = {result.form for result in run.results if result.suite == "census"}
    assert asked and None not in asked and {record.form for record in run.census} == asked


def test_a_pack_keeps_its_case_when_a_neighbour_has_no_single_answer(tmp_path: Path) -> None:
    """At ArgMin-11 (ties left open): a neighbour with an empty reduced axis goes, one with NaN and
    one with tied minima get stand-in inputs of their shape; the case stays, and so does the bug
    (its node answers wrong beside a node with keepdims=0)."""
    case = PackNode(tensor([3.0, 1.0, 2.0], "float"), {})
    nodes = [PackNode(Tensor("float", [0, 2], []), {"axis": 0}),
             PackNode(tensor([float("nan"), 1.0, 0.5, 2.0], "float", [2, 2]), {"axis": 1, "keepdims": 0}),
             case, PackNode(tensor([2.0, 2.0], "float"), {})]
    failed = _failure(11, case.input, {}, "static", Pack("static", 2, nodes), clause="C5")
    failed.packed = 4
    folder = write_reports(_raw([failed]), tmp_path)["regressions"]
    test, = in_set(folder, "failures")
    assert (test["nodes"], test["position"]) == (3, 1)
    assert [(n["position"], n["done"]) for n in test["neighbours"]] == [(0, "left out"), (1, "stand-in input"),
                                                                         (3, "stand-in input")]
    assert test["neighbours"][1]["why"].startswith("C14 (") and test["neighbours"][2]["why"].startswith("ties: ")
    inputs, outputs = data_set(folder / test["path"], "input"), data_set(folder / test["path"], "output")
    assert [i.shape for i in inputs] == [(2, 2), (3,), (2,)] and inputs[1].tolist() == [3.0, 1.0, 2.0]
    assert [o.tolist() for o in outputs] == [[0, 0], [1], [0]]
    checked_models(folder)
    assert "output 1: 1 of 1 indices differ" in checked(folder, test, *plugin("wrong_beside_keepdims_0"))
    assert checked(folder, test, *plugin("correct")) is None


def test_a_packed_only_failure_exports_its_pack(tmp_path: Path) -> None:
    folder = _report(model("wrong_beside_keepdims_0"), tmp_path, packing="on")
    tests = in_set(folder, "failures")
    assert tests and all(t["nodes"] == 2 and t["form"] == "static" and "neighbours" not in t for t in tests)
    document = json.loads((folder.parent / "report.json").read_text(encoding="utf-8"))
    for test, failure, built in zip(tests, document["failures"], checked_models(folder), strict=True):
        pack = failure["counterexample"]["pack"]
        assert [node.op_type for node in built.graph.node] == ["ArgMin", "ArgMin"]
        assert test["anchor"] == failure["anchor"] and test["position"] == pack["position"]
        inputs, outputs = data_set(folder / test["path"], "input"), data_set(folder / test["path"], "output")
        assert [to_tensor(data).values for data in inputs] == [node["input"]["values"] for node in pack["nodes"]]
        assert len(outputs) == 2, "every node's answer: the test checks the whole model"
    assert all(checked(folder, test, *plugin("wrong_beside_keepdims_0")) for test in tests)
    assert not any(checked(folder, test, *ONNXRUNTIME) for test in tests)


# --- exact comparison, in this runner and in onnx's ----------------------------------------------------

# A runtime that answers the index before the right one (a one-node model, its defaults: axis 0, keepdims 1).
OFF_BY_ONE = "import numpy as np\ndef compile(model):\n    return lambda data: np.argmin(data, 0, keepdims=True) - 1\n"


def test_an_index_off_by_one_fails_where_a_loose_tolerance_would_take_it(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """onnx's runner compares with rtol 1e-3 unless data.json says otherwise: 1000 for 1001 passes
    there without it."""
    data = np.ones(1002, np.float32)
    data[1001] = 0
    folder = write_reports(_raw([_failure(13, to_tensor(data), {}, "static")]), tmp_path / "report")["regressions"]
    test, = in_set(folder, "failures")
    assert data_set(folder / test["path"], "output")[0].tolist() == [1001]
    (tmp_path / "off_by_one.py").write_text(OFF_BY_ONE)
    found = checked(folder, test, "--argmin-model-plugin", f"{tmp_path / 'off_by_one.py'}:compile")
    assert found == "output 0: 1 of 1 indices differ; at (0,) the runtime answered 1000 where 1001 is due"

    runtime: dict = {}
    exec(OFF_BY_ONE, runtime)

    class Rep(onnx.backend.base.BackendRep):
        def __init__(self, model: onnx.ModelProto) -> None:
            self.answer = runtime["compile"](model)

        def run(self, inputs: list, **kwargs: object) -> list:
            return [self.answer(*inputs)]

    class Backend(onnx.backend.base.Backend):
        @classmethod
        def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: object) -> Rep:
            return Rep(model)

        @classmethod
        def supports_device(cls, device: str) -> bool:
            return device == "CPU"

    def onnx_runner() -> unittest.TestResult:
        monkeypatch.setattr(onnx.backend.test.runner, "load_model_tests", lambda **kind: [])  # not ONNX's own
        runner = onnx.backend.test.runner.Runner(Backend)
        for case in load_model_tests(data_dir=str(folder), kind="failures"):
            runner._add_model_test(case, "Regression")  # onnx's own step for each of its folders
        return unittest.TextTestRunner(stream=io.StringIO()).run(runner.test_suite)

    assert len(onnx_runner().failures) == 1, "data.json: rtol 0, atol 0"
    (folder / test["path"] / "data.json").unlink()
    assert onnx_runner().wasSuccessful(), "without it, onnx's default tolerance takes 1000 for 1001"


# --- recorded passing cases ---------------------------------------------------------------------------

def test_recorded_passing_cases_are_exported_on_request(tmp_path: Path) -> None:
    """Passing cases are recorded as digests: the nodes of a recorded pack are the inputs there are."""
    data, attributes = np.array([[3.0, 1.0], [0.5, 2.0]], np.float32), {"keepdims": 0}
    passed = CaseResult(13, "float", "property", "semantic", "pass", ["C1"], None, [], "t", 0.0,
                        input_digest=input_digest(data, attributes), form="static")
    nodes = [PackNode(tensor([2.0, 1.0], "float"), {}), PackNode(to_tensor(data), attributes)]
    failed = _failure(13, nodes[0].input, {}, "static", Pack("static", 0, nodes))
    failed.packed = 2
    save(_raw([passed, failed]), tmp_path / "run")
    out = tmp_path / "out"
    assert main(["export", str(tmp_path / "run"), "--out", str(out), "--passing", "1"]) == 0
    tests = index(out)["tests"]
    assert [(t["set"], t.get("passing", False), t["nodes"]) for t in tests] == [("failures", False, 2),
                                                                                 ("passing", True, 1)]
    assert data_set(out / tests[1]["path"], "output")[0].tolist() == [1, 0]
    assert main(["export", str(tmp_path / "run"), "--out", str(out)]) == 0, "an earlier export is replaced"
    assert len(index(out)["tests"]) == 1 and not (out / "passing").exists()


# --- untrusted reports, the folder, the commands --------------------------------------------------

def test_a_hostile_report_gets_its_cards_left_out_not_a_crash(tmp_path: Path) -> None:
    document = aggregate(failing_run())
    good = next(f for f in document["failures"] if f["kind"] == "semantic" and f["outcome"] == "fail")
    odd = [{"type": "U1000000000", "shape": [2], "values": ["1", "2"]},
           {"type": "float", "shape": [ELEMENTS_PER_TEST + 1], "values": ["1"] * (ELEMENTS_PER_TEST + 1)},
           {"type": "float", "shape": [3], "values": ["1", "2"]},
           {"type": "int8", "shape": [2], "values": ["1", "300"]},
           {"type": "float", "shape": [-1], "values": []},
           "not a tensor"]
    document["failures"] = [{**good, "anchor": f"../../x{i}", "counterexample": {**good["counterexample"], "input": v}}
                            for i, v in enumerate(odd)]
    document["failures"] += [{**good, "anchor": "../..", "counterexample": {**good["counterexample"],
                                                                           "attributes": {"axis": "0; rm -rf"}}},
                             {**good, "version": 99}, {**good, "form": "compiled"}, good, good]
    document["census"] = [{"anchor": "../..", "version": 13, "topic": "C14", "faults": [{"type": "float"}, "odd"]},
                          "odd"]
    said = export(document, tmp_path / "set")
    assert len(said["left_out"]) == len(document["failures"]) - 2 + 1 and len(said["tests"]) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["set"], "nothing written beside the set, whatever the anchors"
    assert len({t["test"] for t in said["tests"]}) == 2, "names made unique"


def test_a_report_folder_may_hold_its_regressions_and_a_killed_write_is_cleaned(tmp_path: Path) -> None:
    write_reports(failing_run(), tmp_path)
    (tmp_path / ".regressions.part-0123456789ab").mkdir()
    files.prepare(tmp_path)
    assert not (tmp_path / ".regressions.part-0123456789ab").exists() and (tmp_path / FOLDER / INDEX).is_file()


def test_export_and_render_write_only_where_the_suite_wrote_before(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    def _refused(args: list[str], kept: Path) -> None:
        """The command exits 2 with one line, and ``kept`` is still there."""
        assert main(args) == 2
        said = capsys.readouterr()
        assert not said.out and len(said.err.splitlines()) == 1 and said.err.startswith("error: "), said.err
        assert kept.exists(), f"{kept} was deleted"

    report = tmp_path / "run"
    write_reports(failing_run(), report)
    foreign = [{"index.json": '{"mine": true}'},  # a file named index.json: not an export's
               {"index.json": json.dumps({"format": "argmin-conformance/regressions/2"}), "notes.txt": "mine"},
               {"index.json": json.dumps({"format": "argmin-conformance/regressions/2"}),
                "failures/test_x/notes.txt": "mine"},
               {"data.csv": "1,2"}]
    for number, held in enumerate(foreign):
        out = tmp_path / f"out{number}"
        for name, text in held.items():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_text(text)
        _refused(["export", str(report), "--out", str(out)], out / next(reversed(held)))
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "out0")
    _refused(["export", str(report), "--out", str(link)], tmp_path / "out0" / "index.json")
    shutil.copytree(tmp_path / "out3", tmp_path / "render" / FOLDER)
    _refused(["render", str(report), "--out", str(tmp_path / "render")], tmp_path / "render" / FOLDER / "data.csv")
    assert sorted(p.name for p in (tmp_path / "render").iterdir()) == [FOLDER], "nothing written beside it"


def test_an_earlier_export_is_replaced_after_pytest_ran_in_it_and_so_is_one_of_the_first_format(tmp_path: Path) -> None:
    report = tmp_path / "run"
    write_reports(refusing_run(), report)
    out = tmp_path / "out"
    assert main(["export", str(report), "--out", str(out)]) == 0
    (out / "__pycache__").mkdir()
    (out / "__pycache__" / "conftest.cpython-311-pytest-9.2.0.pyc").write_bytes(b"")
    (out / ".pytest_cache" / "v" / "cache").mkdir(parents=True)
    (out / ".pytest_cache" / "v" / "cache" / "nodeids").write_text("[]")
    assert main(["export", str(report), "--out", str(out)]) == 0 and not (out / ".pytest_cache").exists()
    first = tmp_path / "first"
    (first / "test_v1_C1_float16" / "test_data_set_0").mkdir(parents=True)
    (first / "test_v1_C1_float16" / "model.onnx").write_bytes(b"")
    (first / "test_v1_C1_float16" / "test_data_set_0" / "output_0.pb").write_bytes(b"")
    (first / INDEX).write_text(json.dumps({"format": "argmin-conformance/regressions/1", "tests": [], "left_out": []}))
    assert main(["export", str(report), "--out", str(first)]) == 0 and (first / "failures").is_dir()
    assert not (first / "test_v1_C1_float16").exists()


def test_a_run_stops_before_the_implementation_where_its_regressions_are_not_the_suites(tmp_path: Path) -> None:
    (tmp_path / FOLDER).mkdir()
    (tmp_path / FOLDER / "mine.txt").write_text("a file of the user's")
    done = subprocess.run([sys.executable, "-m", "suites", "--impl", "tests/impls/plugin_good.py:argmin",
                           "--versions", "13", "--dtypes", "float", "--profile", "quick",
                           "--report-dir", str(tmp_path)], cwd=CHECKOUT, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 2 and "holds files and no index.json" in done.stdout + done.stderr
    assert (tmp_path / FOLDER / "mine.txt").exists() and not (tmp_path / "report.json").exists()


def test_the_export_tool_is_a_nox_session_and_says_what_is_missing_in_one_line(tmp_path: Path) -> None:
    assert "export" in noxfile.nox.registry.get()
    done = subprocess.run([sys.executable, "-m", "reports", "export"], cwd=CHECKOUT, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 2 and not done.stdout and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("error: ")
    (tmp_path / "mine.txt").write_text("a file of the user's")
    write_reports(failing_run(), tmp_path / "run")
    for args in ([str(tmp_path / "run"), "--out", str(tmp_path)], [str(tmp_path / "run"), "--out", "x", "--passing",
                                                                    "many"]):
        assert main(["export", *args]) == 2
    assert (tmp_path / "mine.txt").exists()


# --- the docs' lines, as written --------------------------------------------------------------------

@pytest.mark.e2e
def test_the_docs_run_a_set_as_a_ci_would(tmp_path: Path) -> None:
    """docs/how-to/regressions.md's command, run as written against the report of a real run (its NaN census
    crashes included) of a runtime that aborts on NaN: the reference evaluator passes every test,
    the runtime fails exactly its must-not-crash tests."""
    text = DOCS.read_text(encoding="utf-8")
    block = text[text.index("<!-- regressions -->"):]
    start = block.index("```sh\n") + 6
    command = block[start:block.index("\n```", start)].splitlines()[0].split("#")[0].split()
    assert command[:2] == ["pytest", "runs/latest/regressions"], command
    report = tmp_path / "runs" / "latest"
    done = subprocess.run([sys.executable, "-m", "suites", "--impl", model("abort_on_nan"), "--versions", "13",
                           "--dtypes", "float", "--profile", "quick", "--forms", "static",
                           "--report-dir", str(report)], cwd=CHECKOUT, capture_output=True, text=True, timeout=900,
                          check=False)
    assert done.returncode == 1, done.stdout[-3000:]
    crashes = {t["path"] for t in in_set(report / FOLDER, "must-not-crash")}
    assert crashes and all(t["clause"] == "C14" and t["form"] == "static"
                           for t in in_set(report / FOLDER, "must-not-crash"))
    status, outcomes, output = run_tests(Path(command[1]), *command[2:], cwd=tmp_path)
    assert status == 0 and set(outcomes.values()) == {"passed"}, output[-3000:]
    status, outcomes, _ = run_tests(Path(command[1]), *plugin("abort_on_nan"), cwd=tmp_path)
    assert status == 1 and {name for name, outcome in outcomes.items() if outcome == "failed"} == crashes
