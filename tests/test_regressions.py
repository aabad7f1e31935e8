"""A report's failures as regression tests in ONNX's backend node-test layout (reports.regressions):
each loads in onnx.backend.test's runner, fails on the implementation that failed it and passes on
a correct one; every model passes onnx.checker's full check; a failure only packed models show
exports its pack; a failure without one right answer (ties left open, NaN) is left out and the
index says why; untrusted reports cannot make the export misbehave."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
import unittest
from collections.abc import Callable
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import onnx.backend.base
import onnx.backend.test.runner
import onnx.checker
import onnx.numpy_helper
import onnxruntime.backend
import pytest
from onnx.backend.test.loader import load_model_tests

import noxfile
import spec
from engine.config.options import run_info
from engine.judging.run import run_all
from reports import aggregate, write_reports
from reports.__main__ import main
from reports.regressions import ELEMENTS_PER_TEST, FOLDER, INDEX, export
from results import CaseResult, Counterexample, Pack, PackNode, RawRun, Tensor, files, save
from results.digest import input_digest
from results.tensors import to_tensor
from tests.impls import model_packing, model_zoo
from tests.report_fixtures.runs import failing_run, tensor
from tests.test_packing import model, settings

CHECKOUT = Path(__file__).resolve().parent.parent
DOCS = CHECKOUT / "docs" / "how-to" / "regressions.md"
IGNORES_SELECT_LAST_INDEX = f"model:{model_zoo.__file__}:ties_first_always"


# --- running a set with onnx.backend.test -----------------------------------------------------------

def plugin_backend(compile: Callable) -> type[onnx.backend.base.Backend]:
    """An ONNX Backend API module over a model-level plug-in (a model -> a callable of its inputs)."""
    class Rep(onnx.backend.base.BackendRep):
        def __init__(self, run: Callable) -> None:
            self.run_model = run

        def run(self, inputs: list, **kwargs: object) -> list:
            outputs = self.run_model(*inputs)
            return list(outputs) if isinstance(outputs, list) else [outputs]

    class PluginBackend(onnx.backend.base.Backend):
        @classmethod
        def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: object) -> Rep:
            return Rep(compile(model))

        @classmethod
        def supports_device(cls, device: str) -> bool:
            return device == "CPU"
    return PluginBackend


def run_set(backend: object, folder: Path, monkeypatch: pytest.MonkeyPatch) -> unittest.TestResult:
    """``folder``'s tests through onnx.backend.test's runner, as docs/how-to/regressions.md runs them; ONNX's
    own cases, which the runner loads first, are left out (they are no concern of these tests and
    take seconds to build: the e2e test runs the docs' lines as written)."""
    monkeypatch.setattr(onnx.backend.test.runner, "load_model_tests", lambda **kind: [])
    runner = onnx.backend.test.runner.Runner(backend)
    cases = load_model_tests(data_dir=str(folder.parent), kind=folder.name)
    assert cases, f"no test in {folder}"
    for case in cases:
        runner._add_model_test(case, "Regression")
    return unittest.TextTestRunner(stream=io.StringIO()).run(runner.test_suite)


def index(folder: Path) -> dict:
    return json.loads((folder / INDEX).read_text(encoding="utf-8"))


def checked_models(folder: Path) -> list[onnx.ModelProto]:
    """Every model of the set, each through onnx.checker's full check."""
    models = [onnx.load(str(folder / test["test"] / "model.onnx")) for test in index(folder)["tests"]]
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


# --- a zoo entry's failures -------------------------------------------------------------------------

def test_a_broken_entrys_set_fails_on_it_and_passes_on_onnxruntime(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry ignores select_last_index (ArgMin-12 and -13 decide ties by it)."""
    folder = _report(IGNORES_SELECT_LAST_INDEX, tmp_path, versions="12,13", forms="symbolic,static")
    tests = index(folder)["tests"]
    assert tests and {t["clause"] for t in tests} == {"C6"} and {t["form"] for t in tests} == {"symbolic", "static"}
    broken = run_set(plugin_backend(model_zoo.ties_first_always), folder, monkeypatch)
    assert broken.testsRun == 2 * len(tests) and len(broken.failures) == len(tests) and not broken.errors
    correct = run_set(onnxruntime.backend, folder, monkeypatch)
    assert correct.wasSuccessful() and len(correct.skipped) == len(tests), "CUDA skipped, CPU passed"
    checked_models(folder)


def test_a_packed_only_failure_exports_its_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _report(model("wrong_beside_keepdims_0"), tmp_path, packing="on")
    tests = index(folder)["tests"]
    assert tests and all(t["nodes"] == 2 and t["form"] == "static" for t in tests)
    document = json.loads((folder.parent / "report.json").read_text(encoding="utf-8"))
    for test, failure, built in zip(tests, document["failures"], checked_models(folder), strict=True):
        pack = failure["counterexample"]["pack"]
        assert [node.op_type for node in built.graph.node] == ["ArgMin", "ArgMin"]
        assert test["anchor"] == failure["anchor"] and test["position"] == pack["position"]
        inputs, outputs = data_set(folder / test["test"], "input"), data_set(folder / test["test"], "output")
        assert [to_tensor(data).values for data in inputs] == [node["input"]["values"] for node in pack["nodes"]]
        assert len(outputs) == 2, "every node's answer: the test checks the whole model"
    assert not run_set(plugin_backend(model_packing.wrong_beside_keepdims_0), folder, monkeypatch).wasSuccessful()
    assert run_set(plugin_backend(model_packing.correct), folder, monkeypatch).wasSuccessful()
    assert run_set(onnxruntime.backend, folder, monkeypatch).wasSuccessful()


# --- every type, version and form; what has no single answer ---------------------------------------

def _failure(version: int, data: Tensor, attributes: dict, form: str | None = None, pack: Pack | None = None,
             kind: str = "semantic") -> CaseResult:
    ce = Counterexample(data, attributes, None, Tensor("int64", [1], ["9"]), "index-range", "m", pack=pack)
    return CaseResult(version, data.type_name, "property", kind, "fail", ["C4"], "C4", [], "t", 0.0, ce, form=form)


def _raw(results: list[CaseResult]) -> RawRun:
    raw = failing_run()
    raw.results, raw.census, raw.info.forms = results, [], ["symbolic", "static", "initializer"]
    return raw


def test_every_type_version_and_form_exports_a_checked_model(tmp_path: Path) -> None:
    results = [_failure(version, tensor([2, 1, 3], name), {"axis": 0}, form)
               for version in spec.versions() for name in spec.load(version).type_names
               for form in ("symbolic", "static", "initializer")]
    folder = write_reports(_raw(results), tmp_path)["regressions"]
    tests = index(folder)["tests"]
    assert len(tests) == len(results) and not index(folder)["left_out"]
    assert {t["type"] for t in tests} >= {"float16", "bfloat16", "double", "int8", "uint64", "int64"}
    checked_models(folder)
    for test in tests:
        inputs = data_set(folder / test["test"], "input")
        assert len(inputs) == (0 if test["form"] == "initializer" else 1)
        assert [o.tolist() for o in data_set(folder / test["test"], "output")] == [[1]]
    bfloat16 = next(t for t in tests if t["type"] == "bfloat16" and t["form"] == "static")
    assert data_set(folder / bfloat16["test"], "input")[0].dtype == ml_dtypes.bfloat16


def test_a_failure_without_one_right_answer_is_left_out_and_the_index_says_why(tmp_path: Path) -> None:
    tie = tensor([1.0, 1.0, 2.0], "float")
    results = [_failure(11, tie, {}), _failure(1, tie, {"axis": 0}), _failure(13, tie, {"select_last_index": 1}),
               _failure(13, tensor([1.0, float("nan")], "double"), {}),
               _failure(13, tensor([1], "int32"), {"axis": 3}, kind="rejection")]
    raw = _raw(results)
    raw.census = failing_run().census
    folder = write_reports(raw, tmp_path)["regressions"]
    said = index(folder)
    assert [t["version"] for t in said["tests"]] == [13], "ArgMin-13 decides ties by select_last_index"
    assert data_set(folder / said["tests"][0]["test"], "output")[0].tolist() == [1]
    why = {(left["version"], left["type"], left["anchor"]): left["why"] for left in said["left_out"]}
    assert len(why) == 4, "census observations are never exported, nor listed"
    ties = [w for (version, *_), w in why.items() if version in (1, 11)]
    assert len(ties) == 2 and all(w.startswith("ties: ") and "tied minima" in w for w in ties)
    assert any(w.startswith("C14 (") and "defines no answer" in w for w in why.values()), why
    assert any("must be refused" in w for w in why.values())


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
    assert [(t.get("passing", False), t["nodes"]) for t in tests] == [(False, 2), (True, 1)]
    assert data_set(out / tests[1]["test"], "output")[0].tolist() == [1, 0]
    assert main(["export", str(tmp_path / "run"), "--out", str(out)]) == 0, "an earlier export is replaced"
    assert len(index(out)["tests"]) == 1


# --- untrusted reports, the folder, the commands --------------------------------------------------

def test_a_hostile_report_gets_its_cards_left_out_not_a_crash(tmp_path: Path) -> None:
    document = aggregate(failing_run())
    good = next(f for f in document["failures"] if f["kind"] == "semantic")
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
    said = export(document, tmp_path / "set")
    assert len(said["left_out"]) == len(document["failures"]) - 2 and len(said["tests"]) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["set"], "nothing written beside the set, whatever the anchors"
    assert len({t["test"] for t in said["tests"]}) == 2, "names made unique"


def test_a_report_folder_may_hold_its_regressions_and_a_killed_write_is_cleaned(tmp_path: Path) -> None:
    write_reports(failing_run(), tmp_path)
    (tmp_path / ".regressions.part-0123456789ab").mkdir()
    files.prepare(tmp_path)
    assert not (tmp_path / ".regressions.part-0123456789ab").exists() and (tmp_path / FOLDER / INDEX).is_file()


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
def test_the_docs_run_a_set_with_onnx_backend_test(tmp_path: Path) -> None:
    """docs/how-to/regressions.md's runner file, saved as a user would and run by pytest against the report of
    an entry that ignores select_last_index: onnxruntime, which does not, passes every test."""
    text = DOCS.read_text(encoding="utf-8")
    block = text[text.index("<!-- regressions -->"):]
    start = block.index("```python\n") + 10
    code = block[start:block.index("\n```", start)]
    folder = _report(IGNORES_SELECT_LAST_INDEX, tmp_path, versions="13", forms="symbolic")
    runner = tmp_path / "test_regressions_ci.py"
    runner.write_text(code.replace("runs/latest", str(folder.parent)) + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(runner)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    tests = len(index(folder)["tests"])
    assert done.returncode == 0 and f"{tests} passed" in done.stdout, done.stdout[-3000:]
