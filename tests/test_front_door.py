"""End to end: ``python -m suites`` (what ``nox -s conformance`` runs) with its exit codes,
one-line errors, built-in adapters, the path form of --impl, faults, and pytest-xdist."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from results import IMPLEMENTATION_LOG, RunInfo, load, raw_path, read_json, stream

ROOT = Path(__file__).resolve().parent.parent
QUICK = ["--profile", "quick", "--seed", "3"]


def run(*args: str, cwd: Path = ROOT, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "suites", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def verdict_lines(output: str) -> list[str]:
    return [line.strip() for line in output.splitlines() if line.strip().startswith("ArgMin-")]


@pytest.mark.parametrize(("args", "words"), [
    (["--impl", "numpy_argmin"], ["has no ':function' part"]),
    (["--impl", "no_such_module_xyz:fn"], ["No module named", "no_such_module_xyz"]),
    (["--impl", "zoo.correct:no_such_function"], ["no_such_function"]),
    (["--impl", "zoo.correct:no_such_function", "--isolation", "none"], ["no_such_function"]),  # loaded in-process
    (["--impl", "zoo.registry:ENTRIES"], ["not callable"]),
    (["--impl", "tests/impls/missing_file.py:fn"], ["missing_file.py"]),
    (["--versions", "14"], ["unknown ArgMin version 14"]),
    (["--dtypes", "float33"], ["unknown element type 'float33'"]),
    (["--profile", "huge"], ["unknown profile 'huge'"]),
    (["--memory-limit", "lots"], ["--memory-limit 'lots' is not a size"]),
    (["--impl", "openvino@2023.0.0"], ["supports openvino 2023.1.0 and later"]),
    (["--impl", "onnxruntime@1.16.0"], ["is installed here, not 1.16.0", "nox -s conformance"]),  # loaded in a worker
    (["--impl", "onnxruntime", "--isa", "avx2"], ["'onnxruntime' offers no cap", "offer one: openvino"]),
    (["--impl", "zoo.correct:numpy_argmin", "--isa", "avx2"], ["is a plug-in", "offer one: openvino"]),
])
def test_unusable_runs_exit_2_with_one_line(args: list[str], words: list[str], tmp_path: Path) -> None:
    result = run(*args, "--report-dir", str(tmp_path))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    for word in words:
        assert word in lines[0]


def test_a_second_run_into_a_report_dir_in_use_exits_2_with_one_line(tmp_path: Path) -> None:
    held = stream.start(tmp_path, RunInfo(impl="x:y", versions=[13], type_names=None, profile="quick", seed=1,
                                          started="2026-01-02T03:04:05+00:00"), {})
    try:
        result = run("--impl", "zoo.correct:numpy_argmin", "--isolation", "none", "--report-dir", str(tmp_path), *QUICK)
    finally:
        held.close()
    assert result.returncode == 2
    line, = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and "another run is writing its results there" in line
    assert stream.exists(tmp_path), "the running run's stream was touched"


def test_without_report_dir_a_run_writes_where_it_was_started_one_folder_per_implementation(tmp_path: Path) -> None:
    """Started in a vendor's folder, the reports go to argmin-reports/<implementation> there, and
    the first line says which folder and why. The same implementation again replaces its report,
    saying so; another one whose folder would be the same (a plug-in file of the same name) is
    refused, in one line naming --report-dir, and the report there is left as it was."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        shutil.copy(ROOT / "tests" / "impls" / "path_form_argmin.py", tmp_path / name / "impl.py")
    folder = tmp_path / "argmin-reports" / "impl-argmin"
    common = ["--versions", "13", "--dtypes", "float", "--isolation", "none", "-n", "0", *QUICK]

    def started_here(impl: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "suites", "--impl", impl, *common], cwd=tmp_path,
                              capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})

    first = started_here("a/impl.py:argmin")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    assert first.stdout.splitlines()[0] == (f"report folder: {folder} (the default: argmin-reports/ in the folder the "
                                            f"run was started in, one folder per implementation; --report-dir DIR "
                                            f"writes elsewhere)")
    again = started_here("a/impl.py:argmin")
    assert again.returncode == 0
    assert again.stdout.splitlines()[0].endswith("; this run replaces its earlier report there")
    written = (folder / "report.json").read_bytes()
    other = started_here("b/impl.py:argmin")
    assert other.returncode == 2
    line, = other.stderr.strip().splitlines()
    assert line.startswith(f"error: {folder}, the default report folder of --impl 'b/impl.py:argmin', holds the report "
                           f"of 'a/impl.py:argmin'") and "--report-dir DIR" in line
    assert (folder / "report.json").read_bytes() == written


def test_a_spec_file_that_breaks_its_schema_exits_2(tmp_path: Path) -> None:
    for folder in ("spec", "generators", "engine", "results", "suites", "reports", "zoo"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__", "out"))
    broken = tmp_path / "spec" / "argmin-12.yaml"
    broken.write_text(broken.read_text(encoding="utf-8").replace("kind: rejection", "kind: rejected", 1),
                      encoding="utf-8")
    result = run("--impl", "zoo.correct:numpy_argmin", cwd=tmp_path)
    assert result.returncode == 2
    line, = result.stderr.strip().splitlines()
    assert "argmin-12.yaml" in line and "kind" in line and "rejected" in line


def test_a_correct_path_form_implementation_is_conformant_exit_0(tmp_path: Path) -> None:
    result = run("--impl", "tests/impls/path_form_argmin.py:argmin", "--versions", "12,13", "--dtypes", "float,uint8",
                 "--isolation", "none", "--report-dir", str(tmp_path), *QUICK)
    assert result.returncode == 0, result.stdout[-3000:]
    lines = verdict_lines(result.stdout)
    claimed = "CONFORMANT; scope: 2 of the 2 types claimed (--dtypes) implemented"
    assert lines == [line for line in lines if claimed in line]
    assert len(lines) == 2
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert {v["verdict"] for v in report["versions"]} == {"conformant"}


@pytest.mark.e2e
def test_what_the_implementation_prints_goes_to_a_log_beside_the_report(tmp_path: Path) -> None:
    result = run("--impl", "tests/impls/chatty.py:argmin", "--versions", "11", "--dtypes", "float",
                 "--report-dir", str(tmp_path), *QUICK)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "CHATTY" not in result.stdout + result.stderr
    log = (tmp_path / "implementation.log").read_text(encoding="utf-8")
    assert all(f"CHATTY-{kind}" in log for kind in ("STDOUT", "STDERR", "NATIVE"))
    last = result.stdout.strip().splitlines()[-1]
    assert last == f"  implementation output (its stdout and stderr): {tmp_path / 'implementation.log'}"


def test_a_broken_implementation_exits_1_with_the_violated_versions(tmp_path: Path) -> None:
    result = run("--impl", "zoo.broken_values:ties_last_always", "--dtypes", "int32", "--isolation", "none",
                 "--report-dir", str(tmp_path), *QUICK)
    assert result.returncode == 1
    lines = verdict_lines(result.stdout)
    assert [line.split(":")[0] for line in lines if "NON-CONFORMANT" in line] == ["ArgMin-12", "ArgMin-13"]
    assert all("C6" in line for line in lines if "NON-CONFORMANT" in line)


@pytest.mark.e2e
@pytest.mark.parametrize("spread", [["-n", "2"], ["--tx", "popen", "--tx", "popen", "--dist", "load"]],
                         ids=["n2", "two-popen-gateways"])
def test_xdist_gives_the_same_verdicts_and_counts(spread: list[str], tmp_path: Path) -> None:
    """Spread over xdist workers (local ones, or gateways as on other machines: their records
    travel with their test reports), a run judges the same cases and gives the same verdicts."""
    args = ["--impl", "zoo.broken_values:ties_last_always", "--dtypes", "int8,float", "--isolation", "none", *QUICK]
    serial = run(*args, "--report-dir", str(tmp_path / "serial"))
    parallel = run(*args, "--report-dir", str(tmp_path / "parallel"), *spread)
    assert serial.returncode == parallel.returncode == 1, parallel.stdout[-2000:] + parallel.stderr[-2000:]
    assert verdict_lines(serial.stdout) == verdict_lines(parallel.stdout)


def _imports(tmp_path: Path, *extra: str) -> tuple[int, list[list[str]]]:
    """Run the recording plug-in; (the front door's pid, [pid, process name] of each import),
    from what the plug-in printed: the worker's log, or the run's own output."""
    process = subprocess.Popen([sys.executable, "-m", "suites", "--impl", "tests/impls/import_recorder.py:argmin",
                                "--versions", "13", "--dtypes", "float", "--report-dir", str(tmp_path / "out"),
                                *QUICK, *extra], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode in (0, 1), stderr[-2000:]
    log = tmp_path / "out" / IMPLEMENTATION_LOG  # none in-process
    printed = stdout + (log.read_text(encoding="utf-8") if log.exists() else "")
    return process.pid, [line.split()[1:] for line in printed.splitlines() if line.startswith("imported-by ")]


@pytest.mark.e2e
@pytest.mark.parametrize("extra", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_under_process_isolation_the_plugin_is_imported_only_in_workers(extra: list[str], tmp_path: Path) -> None:
    pid, importers = _imports(tmp_path, *extra)
    assert importers, "the plug-in was never imported"
    assert all(name == "argmin-impl-worker" for _, name in importers), importers
    assert str(pid) not in {importer for importer, _ in importers}


def test_with_isolation_none_the_plugin_is_imported_in_the_run_itself(tmp_path: Path) -> None:
    """The other side of the test above: the log does tell where the plug-in was imported."""
    pid, importers = _imports(tmp_path, "--isolation", "none", "-s")
    assert importers == [[str(pid), "MainProcess"]]


def test_a_plugin_that_fails_to_import_in_its_worker_exits_2_with_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken_import.py"
    broken.write_text("raise ImportError('the vendor SDK is missing')\n", encoding="utf-8")
    result = run("--impl", f"{broken}:argmin", "--report-dir", str(tmp_path / "out"), *QUICK)
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    line, = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and "the vendor SDK is missing" in line


@pytest.mark.parametrize("isolation", ["process", "none"])
def test_a_plugin_with_the_wrong_signature_exits_2_before_judging(tmp_path: Path, isolation: str) -> None:
    plugin = tmp_path / "wrong_signature.py"
    plugin.write_text("import numpy\n\ndef argmin(data, axis=0):\n    return numpy.argmin(data, axis=axis)\n",
                      encoding="utf-8")
    out = tmp_path / "out"
    result = run("--impl", f"{plugin}:argmin", "--versions", "13", "--profile", "quick", "--isolation", isolation,
                 "--report-dir", str(out))
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    line, = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and "argmin(data, axis=0) cannot be called as fn(data, *, opset" in line
    assert "got an unexpected keyword argument 'opset'" in line and "def argmin(data, *, opset, **attributes)" in line
    assert not (out / "report.json").exists()  # stopped before any case was judged


def test_a_model_plugin_whose_compile_takes_two_models_exits_2_before_judging(tmp_path: Path) -> None:
    """A ``compile`` the suite cannot call with one model would have every case refused (C1)."""
    plugin = tmp_path / "myrt.py"
    plugin.write_text("def compile(model, providers):\n    raise TypeError('never')\n", encoding="utf-8")
    out = tmp_path / "out"
    result = run("--impl", f"model:{plugin}:compile", "--versions", "13", "--profile", "quick",
                 "--report-dir", str(out))
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    line, = result.stderr.strip().splitlines()
    assert "compile(model, providers) cannot be called as compile(model)" in line, line
    assert "define it as def compile(model)" in line and not (out / "report.json").exists()


@pytest.mark.e2e
def test_the_default_run_judges_onnxruntime(tmp_path: Path) -> None:
    """onnxruntime has no kernel for uint16, uint32, uint64, int16 (nor bfloat16 at 13): scope,
    named beside a CONFORMANT headline at ArgMin-11 to -13. At ArgMin-1 every float16 model fails
    with an invalid Cast it inserts itself: NON-CONFORMANT through C1 only (its empty float16
    inputs fail the same way, so C9 is not listed). The terminal ends with the verdict lines and
    where the reports are, without pytest's FAILED summary."""
    result = run("--report-dir", str(tmp_path), *QUICK)
    assert result.returncode == 1, result.stdout[-3000:]
    lines = verdict_lines(result.stdout)
    assert [line.split(":")[0] for line in lines] == ["ArgMin-1", "ArgMin-11", "ArgMin-12", "ArgMin-13"]
    assert lines[0].startswith("ArgMin-1: NON-CONFORMANT (C1: float16 raised an error); scope: 7 of 11 types of T "
                               "implemented; not implemented: "), lines[0]
    assert all(" CONFORMANT; scope: 7 of " in line for line in lines[1:]), lines
    assert "not implemented: uint16, uint32, uint64, int16, bfloat16" in lines[3]
    tail = result.stdout.strip().splitlines()[-5:]
    assert [line.split()[0] for line in tail] == ["raw", "html", "json", "junit", "regression"], tail
    assert "FAILED" not in result.stdout and "Nonconformance" not in result.stdout
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["run"]["impl"] == "onnxruntime"
    assert [v["failing_clauses"] for v in report["versions"]] == [["C1"], [], [], []]
    assert {v["strictness"]["level"] for v in report["versions"]} == {"strict"}


@pytest.mark.e2e
def test_onnx_reference_is_conformant_and_lenient(tmp_path: Path) -> None:
    """onnx.reference computes types outside T and rank-0 inputs, and is right on every valid one."""
    result = run("--impl", "onnx-reference", "--report-dir", str(tmp_path), *QUICK)
    assert result.returncode == 0, result.stdout[-3000:]
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert {v["verdict"] for v in report["versions"]} == {"conformant"}
    assert {v["strictness"]["level"] for v in report["versions"]} == {"lenient"}
    progress = [line for line in result.stdout.splitlines() if re.fullmatch(r"[.FEsx]+(\s+\[\s*\d+%\])?", line)]
    assert progress and not any("F" in line for line in progress), progress  # strictness is no pytest failure
    certificate = report["certificate"]  # "cases judged": one meaning on the terminal, the page and the JSON
    assert certificate["census_inputs"] > 0
    assert sum(v["judged"] for v in report["versions"]) == certificate["cases"]
    for line, version in zip(verdict_lines(result.stdout), report["versions"], strict=True):
        assert line.endswith(f"({version['judged']} cases judged)"), line


@pytest.mark.e2e
def test_backend_api_module(tmp_path: Path) -> None:
    result = run("--impl", "backend:onnxruntime.backend", "--versions", "13", "--dtypes", "float,int64",
                 "--report-dir", str(tmp_path), *QUICK)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "CONFORMANT" in verdict_lines(result.stdout)[0]


@pytest.mark.e2e
@pytest.mark.parametrize("impl", ["zoo.faulty:exit_on_long_axis", "zoo.faulty:hang_on_rank4"])
def test_crash_and_hang_still_give_a_complete_report(impl: str, tmp_path: Path) -> None:
    result = run("--impl", impl, "--versions", "13", "--dtypes", "float", "--timeout", "1",
                 "--report-dir", str(tmp_path), *QUICK)
    assert result.returncode == 1, result.stdout[-3000:]
    raw = load(tmp_path)
    assert raw.info.complete
    assert {r.outcome for r in raw.results} & {"crash", "timeout"}


def _as_from_a_terminal() -> None:
    """A run started from a terminal takes Ctrl-C; one started by a process that ignores SIGINT
    (pytest-xdist's workers, a background job) would inherit the ignoring, as Unix has it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _under_way(command: list[str], report_dir: Path, **popen: object) -> subprocess.Popen:
    """Start a run and return once it has streamed records to disk (it is then mid-run)."""
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=_as_from_a_terminal, **popen)
    deadline = time.monotonic() + 300
    while _streamed(report_dir) < 1:
        assert process.poll() is None, "the run ended before it could be interrupted: " + process.stderr.read()[-2000:]
        assert time.monotonic() < deadline, "the run streamed nothing within 300 s"
        time.sleep(0.2)
    return process


def _streamed(report_dir: Path, kind: str = "") -> int:
    """Complete records in the run's stream (of one kind, when given)."""
    lines = [line for path in (report_dir / ".stream").glob("*.jsonl")
             for line in path.read_text(encoding="utf-8").splitlines() if line.endswith("}")]
    return sum(f'"kind": "{kind}"' in line for line in lines) if kind else len(lines)


# A hang mid-run; the first records stream once the first batch, hangs included, is judged.
HANGING = ["--impl", "zoo.faulty:hang_on_rank4", "--timeout", "5", *QUICK]


def _assert_incomplete(process: subprocess.Popen, report_dir: Path, cause: str) -> None:
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 2, stdout[-2000:] + stderr[-2000:]
    document = read_json(raw_path(report_dir))
    assert document["info"]["complete"] is False
    assert document["info"]["incomplete_reason"] == f"interrupted by {cause} before the end"
    assert document["results"], "the cases judged before the interrupt were lost"
    assert (report_dir / "report.html").exists()
    assert not (report_dir / ".stream").exists()
    for version in read_json(report_dir / "report.json")["versions"]:  # one the interrupt came before is not judged
        if not version["judged"] and not version["not_passed"]:
            assert (version["verdict"], version["reason"]) == ("not-judged", "reason-interrupted"), version
    for line in verdict_lines(stdout):  # NON-CONFORMANT only for something found before the interrupt
        assert "NON-CONFORMANT" not in line or "NON-CONFORMANT (C" in line, line


@pytest.mark.e2e
def test_ctrl_c_still_leaves_a_report_marked_incomplete(tmp_path: Path) -> None:
    process = _under_way([sys.executable, "-m", "suites", *HANGING, "--report-dir", str(tmp_path)], tmp_path)
    process.send_signal(signal.SIGINT)
    _assert_incomplete(process, tmp_path, "Ctrl-C")


@pytest.mark.e2e
def test_sigterm_leaves_a_report_marked_incomplete(tmp_path: Path) -> None:
    """How CI systems and `timeout` cancel a job."""
    process = _under_way([sys.executable, "-m", "suites", *HANGING, "--report-dir", str(tmp_path)], tmp_path)
    process.terminate()
    _assert_incomplete(process, tmp_path, "SIGTERM")


@pytest.mark.e2e
def test_ctrl_c_through_nox_leaves_a_report_marked_incomplete(tmp_path: Path) -> None:
    """Ctrl-C in a terminal signals the whole foreground process group: nox, the suite and its
    workers. The session runs in this environment (--no-venv --no-install) instead of building
    its own; the signal handling under test is the same."""
    nox = [sys.executable, "-m", "nox", "--no-venv", "--no-install", "-f", str(ROOT / "noxfile.py"), "-s",
           "conformance", "--"]
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])  # its `python` is ours
    process = _under_way([*nox, *HANGING, "--report-dir", str(tmp_path)], tmp_path, start_new_session=True,
                         env={**os.environ, "PATH": path})
    os.killpg(process.pid, signal.SIGINT)
    _assert_incomplete(process, tmp_path, "Ctrl-C")


@pytest.mark.e2e
def test_after_sigkill_rebuild_recovers_every_streamed_result(tmp_path: Path) -> None:
    """SIGKILL (or the OOM killer) gives the run no chance to write anything more: what it
    streamed becomes a report marked incomplete. Killed once a failure is found, while Hypothesis
    shrinks it, the failure is among what is kept."""
    # Types after the first keep the run going once the first failure is found: a quick run of
    # one type can end before the poll below sees it.
    command = [sys.executable, "-m", "suites", "--impl", "zoo.broken_values:ties_last_always", "--versions", "12",
               "--dtypes", "int32,float,double,int64,uint8", "--isolation", "none", *QUICK, "--report-dir",
               str(tmp_path)]
    process = _under_way(command, tmp_path)
    deadline = time.monotonic() + 300
    while not _streamed(tmp_path, "found") and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    process.kill()
    process.communicate()
    assert process.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    streamed = _streamed(tmp_path, "result") + _streamed(tmp_path, "census")
    rebuild = subprocess.run([sys.executable, "-m", "reports", "rebuild", str(tmp_path)], cwd=ROOT,
                             capture_output=True, text=True, timeout=300)
    assert rebuild.returncode == 0, rebuild.stderr
    folder, = tmp_path.glob("incomplete-*")
    raw = read_json(raw_path(folder))
    assert raw["info"]["complete"] is False and "SIGKILL" in raw["info"]["incomplete_reason"]
    assert len(raw["results"]) + len(raw["census"]) >= streamed > 0
    assert any(r["outcome"] == "fail" and r["clause"] == "C6" for r in raw["results"]), "the failure found was lost"
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert {v["verdict"] for v in report["versions"]} == {"non-conformant"}


def test_the_next_run_sets_a_killed_run_aside(tmp_path: Path) -> None:
    killed = RunInfo(impl="zoo.correct:numpy_argmin", versions=[13], type_names=None, profile="quick", seed=1,
                     started="2026-01-02T03:04:05+00:00")
    stream.start(tmp_path, killed, {}).close()  # the header a killed run leaves, its lock released
    result = run("--impl", "zoo.correct:numpy_argmin", "--versions", "13", "--dtypes", "float", "--isolation", "none",
                 "--report-dir", str(tmp_path), *QUICK)
    assert result.returncode == 0, result.stdout[-3000:]
    folder = tmp_path / "incomplete-20260102-030405"
    assert f"its results are in {folder}, report marked incomplete" in result.stdout
    assert json.loads((folder / "report.json").read_text(encoding="utf-8"))["run"]["complete"] is False
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["run"]["complete"] is True
