"""The implementation under test is untrusted: each test runs the hostile plug-in
that broke an earlier version of the suite and shows the attack no longer works. Only data
crosses from the worker, the verdict comes from what the owning process judged, the verdict is
the same in both isolation modes, and workers leave nothing behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import spec
from engine.asking import arena, protocol, sandbox, worker_process
from engine.asking.calls import Reply
from engine.asking.isolation import Runner
from engine.judging.judge import judge
from generators import Case
from results import raw_path, read_json

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = "tests/impls/plugin_hostile.py"
FORGER = "tests/impls/plugin_forger.py"
SANDBOXED = pytest.mark.skipif(sandbox.available().mechanism is None,
                               reason=f"no sandbox on this machine: {sandbox.available().reason}")
UINT8 = np.array([[3, 1, 2]], dtype=np.uint8)
ROW = {"axis": 1}


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the hostile plug-ins leave their marks (passed down to workers in the environment)."""
    folder = tmp_path / "marks"
    folder.mkdir()
    monkeypatch.setenv("ARGMIN_HOSTILE_MARKS", str(folder))
    return folder


def _front_door(report_dir: Path, impl: str, *extra: str, **environment: str) -> tuple[subprocess.CompletedProcess,
                                                                                      dict]:
    result = subprocess.run([sys.executable, "-m", "suites", "--impl", impl, "--versions", "13", "--dtypes", "uint8",
                             "--profile", "quick", "--seed", "5", "--report-dir", str(report_dir), *extra],
                            cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, **environment})
    return result, read_json(report_dir / "report.json")


# --- 1. data, not objects, crosses from the worker -------------------------------------------

@pytest.mark.parametrize("isolation", ["process", "none"])
def test_an_object_answer_that_runs_code_when_unpickled_runs_none_in_the_owner(isolation: str, marks: Path) -> None:
    with Runner(f"{HOSTILE}:runs_code_where_unpickled", isolation=isolation) as runner:
        reply = runner.call(UINT8, 13, ROW)
    assert reply.status == "ok" and reply.value.dtype == object and reply.value.shape == (1,)
    assert "._RunsOnUnpickle object at 0x" in reply.value[0]
    assert not (marks / str(os.getpid())).exists(), "the plug-in's code ran in the process that owns the run"


def test_an_answer_that_hangs_when_printed_is_a_timeout_in_the_worker() -> None:
    """time.sleep in the element's code hung the process that owns the run, beyond --timeout."""
    start = time.monotonic()
    with Runner(f"{HOSTILE}:slow_to_print", timeout=1.0) as runner:
        reply = runner.call(UINT8, 13, ROW)
    assert reply.status == "timeout" and time.monotonic() - start < 30


@pytest.mark.e2e
def test_a_python_int_too_long_to_print_is_a_recorded_c2_failure(tmp_path: Path) -> None:
    """10**5000 made results.digest's repr() raise: the run ended with exit 2 and a report that
    said CONFORMANT, with no C2 failure recorded."""
    result, report = _front_door(tmp_path, f"{HOSTILE}:huge_python_int")
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    assert report["run"]["complete"] and report["versions"][0]["verdict"] == "non-conformant"
    c2, = [f for f in report["failures"] if f["clause"] == "C2" and f["type"] == "uint8"]
    raw = read_json(raw_path(tmp_path))
    actual, = {r["counterexample"]["actual"]["values"][0] for r in raw["results"]
               if r["clause"] == "C2" and r["counterexample"]}
    assert actual == "<int: unprintable, ValueError>", c2


def test_malformed_replies_are_refused_not_read() -> None:
    good = protocol.encode(Reply("ok", np.array([[1]], dtype=np.int64), None, 0.001, False, None))
    read = protocol.decode(good)
    assert (read.status, read.value.tolist()) == ("ok", [[1]])
    object_dtype = good.replace(b"<i8|int64", b"|O|object")
    for forged in [good[:-1], good + b"x", b"\xff" + good[1:], object_dtype + b"\x1fmore", b""]:
        with pytest.raises(protocol.Malformed):
            protocol.decode(forged)


@pytest.mark.parametrize("value", [np.array([[1], [0]]), np.array([10**5000, 1], dtype=object),
                                   np.array([1.5, -0.0], dtype=ml_dtypes.bfloat16), np.arange(6, dtype=">i8")[::2],
                                   np.array(["opset=13"])], ids=lambda v: str(v.dtype))
def test_in_process_answers_are_the_data_a_worker_would_send(value: np.ndarray) -> None:
    """--isolation none skips the bytes (protocol.detached), not what they carry."""
    outcome = Reply("ok", value, None, 0.001, True, None)
    sent, kept = protocol.decode(protocol.encode(outcome)), protocol.detached(outcome)
    assert sent.value.dtype == kept.value.dtype and sent.value.shape == kept.value.shape
    assert sent.value.tolist() == kept.value.tolist() and replace(sent, value=None) == replace(kept, value=None)
    assert kept.value is not value and kept.value.flags.writeable


def test_records_with_an_object_field_cross_as_objects() -> None:
    record = np.array([(1, "a")], dtype=[("x", "i8"), ("y", "O")])
    value = protocol.decode(protocol.encode(Reply("ok", record, None, 0.0, False, None))).value
    assert value.dtype == object and value.shape == (1,) and "'a'" in value[0]


def test_an_object_answer_of_millions_of_elements_crosses_as_a_bounded_description() -> None:
    many = np.empty(3_000_000, dtype=object)
    many.fill("x" * 1000)
    reply = protocol.decode(protocol.encode(Reply("ok", many, None, 0.0, True, None)))  # no packed model
    assert reply.value.shape == (3_000_000,) and reply.value[0] == "'" + "x" * 78 + "…"
    assert reply.value[protocol.OBJECT_TEXTS] == "…"


# --- 2. the verdict comes from what the owner judged ------------------------------------------

@pytest.mark.e2e
@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_plugin_that_swaps_the_results_stream_cannot_forge_the_verdict(tmp_path: Path, xdist: list[str]) -> None:
    """It replaced .stream/main.jsonl under the run and answered int32: the report said CONFORMANT.
    Unsandboxed it still can, and the run says so; under xdist the records come to the controller
    with the test reports, as before."""
    result, report = _front_door(tmp_path, f"{FORGER}:int32_for_uint8", "--sandbox", "off", *xdist,
                                 ARGMIN_FORGE_DIR=str(tmp_path))
    assert report["versions"][0]["verdict"] == "non-conformant"
    assert any(f["clause"] == "C2" and f["type"] == "uint8" for f in report["failures"])
    assert not report["run"]["complete"] and "changed while it ran" in report["run"]["incomplete_reason"]
    assert report["certificate"]["status"] != "certificate"
    assert "results stream on disk was changed" in result.stderr


@pytest.mark.e2e
@SANDBOXED
def test_a_sandboxed_plugin_cannot_touch_the_results_stream(tmp_path: Path) -> None:
    """The same plug-in, told where the report folder is, in the sandbox: the folder is not there
    to write (nor to read), the stream stays whole and the run complete."""
    result, report = _front_door(tmp_path, f"{FORGER}:int32_for_uint8", "--pass-env", "ARGMIN_FORGE_DIR",
                                 ARGMIN_FORGE_DIR=str(tmp_path))
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    assert report["run"]["complete"] and report["versions"][0]["verdict"] == "non-conformant"
    assert f"forger: no results stream in {tmp_path} from here" in (tmp_path / "implementation.log").read_text()


# --- 3. one verdict whatever the isolation mode -----------------------------------------------

@pytest.mark.parametrize("plugin", ["writes_into_its_input", "answers_in_its_input"])
def test_writing_into_the_input_gets_the_same_answer_in_both_modes(plugin: str) -> None:
    data = np.array([[5, 1, 7], [0, 9, 2]], dtype=np.int64)  # small: pickled, read-only once unpickled
    replies = {}
    for mode in ("process", "none"):
        with Runner(f"{HOSTILE}:{plugin}", isolation=mode) as runner:
            replies[mode] = runner.call(data, 13, ROW)
    assert replies["process"].status == replies["none"].status == "ok", replies
    assert replies["process"].value.tolist() == replies["none"].value.tolist() == [[1], [0]]
    assert data.tolist() == [[5, 1, 7], [0, 9, 2]]


# --- 4. clean workers ---------------------------------------------------------------------------

def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _carrying(marks: Path) -> set[int]:
    """Live processes whose environment holds this test's marks folder: the workers it started
    and whatever they forked (a child inherits its parent's environment)."""
    token = f"ARGMIN_HOSTILE_MARKS={marks}\0".encode()
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token in (entry / "environ").read_bytes() and _alive(int(entry.name)):
                    found.add(int(entry.name))
            except OSError:  # gone meanwhile
                continue
    return found


def _none_left(marks: Path) -> bool:
    deadline = time.monotonic() + 5
    while _carrying(marks) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _carrying(marks)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see the child")
@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_a_child_the_plugin_forks_ends_with_its_worker(marks: Path, sandbox: str) -> None:
    with Runner(f"{HOSTILE}:forks_a_lingering_child", sandbox_mode=sandbox, pass_env=["ARGMIN_HOSTILE_MARKS"]) \
            as runner:
        runner.load()
        worker = _carrying(marks)  # the worker (and in a sandbox, bwrap's two processes)
        assert runner.call(UINT8, 13, ROW).status == "ok"
        assert len(_carrying(marks) - worker) == 1, "the worker's child"
    assert _none_left(marks), "the forked child outlived the run and holds its stdout"


@pytest.mark.e2e
def test_a_pipe_reader_is_not_kept_waiting_by_a_forked_child(tmp_path: Path, marks: Path) -> None:
    """``python -m suites ... | cat`` lasted as long as the child (ten minutes)."""
    start = time.monotonic()
    piped = subprocess.run(f"{sys.executable} -m suites --impl {ROOT / HOSTILE}:forks_a_lingering_child --versions 13 "
                           f"--dtypes uint8 --profile quick --report-dir {tmp_path / 'run'} | cat",
                           shell=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                           capture_output=True, text=True, timeout=300)
    assert piped.returncode == 0 and "ArgMin-13: NON-CONFORMANT" in piped.stdout, piped.stdout[-2000:]
    assert time.monotonic() - start < 120
    assert _none_left(marks)


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[arena.Arena]:
    """The shared-memory arenas the Runners of a test create (other runs on the machine make theirs)."""
    arenas: list[arena.Arena] = []

    class Recorded(arena.Arena):
        def __init__(self) -> None:
            super().__init__()
            arenas.append(self)

    monkeypatch.setattr(worker_process, "Arena", Recorded)
    return arenas


@SANDBOXED
def test_a_worker_that_kills_its_parent_is_reported_truthfully(made: list[arena.Arena]) -> None:
    """With a forkserver, killing it made the exit status unreadable (reported as 255) and left
    the 32 MiB arena in /dev/shm. In the sandbox its parent is the sandbox's first process,
    which survives the signal and reports the status."""
    with Runner(f"{HOSTILE}:kills_its_parent_and_exits_3", timeout=5) as runner:
        reply = runner.call(UINT8, 13, ROW)
        assert (reply.status, reply.error) == ("crash", "the worker process exited with code 3")
        answer = runner.call(UINT8.astype(np.int8), 13, ROW)
        assert (answer.status, answer.value.tolist()) == ("ok", [[1]])
    assert len(made) >= 2 and all(arena.view is None for arena in made)  # the worker, its successor, a spare


@pytest.mark.e2e
@SANDBOXED
def test_a_run_reads_the_exit_status_of_a_worker_that_kills_its_parent(tmp_path: Path) -> None:
    result, _ = _front_door(tmp_path, f"{HOSTILE}:kills_its_parent_and_exits_3", "--timeout", "5")
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    raw = read_json(raw_path(tmp_path))
    seen = [str(r["counterexample"]["actual"]) for r in raw["results"] if r["counterexample"]]
    seen += [str(c["observed"]) for c in raw["census"]]  # the one crash may come from a census input
    crashes = {text for text in seen if "worker process" in text}
    assert crashes == {"crash: the worker process exited with code 3"}, crashes


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_worker_that_never_starts_leaves_nothing_behind(made: list[arena.Arena],
                                                          monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """Sandboxed, a worker's scratch is the sandbox's own tmpfs: no folder on the host at all."""
    scratch: list[str] = []
    folder = tempfile.mkdtemp

    def recorded(*args: object, **options: object) -> str:
        scratch.append(folder(*args, **options))
        return scratch[-1]

    def refuse(*args: object, **options: object) -> None:
        raise OSError("no process")

    monkeypatch.setattr(worker_process.tempfile, "mkdtemp", recorded)
    monkeypatch.setattr(worker_process.subprocess, "Popen", refuse)
    with pytest.raises(OSError, match="no process"):
        Runner(f"{HOSTILE}:leak", sandbox_mode=mode)
    assert len(made) == 1 and made[0].view is None and made[0].descriptor is None
    sandboxed = sandbox.choose(mode).mechanism is not None
    assert len(scratch) == (0 if sandboxed else 1) and not any(Path(folder).exists() for folder in scratch)


def test_an_exit_status_is_reported_as_it_was() -> None:
    with Runner("tests/impls/plugin_faulty.py:by_value") as runner:
        reply = runner.call(np.array([[1, 0, 5]], dtype=np.int64), 13, {})  # EXIT: os._exit(3)
    assert (reply.status, reply.error) == ("crash", "the worker process exited with code 3")


def test_a_deterministic_object_answer_is_not_called_nondeterministic() -> None:
    """The census compared the pointer bytes of two object arrays."""
    data = np.array([np.nan, 1.0, 0.5], dtype=np.float32)  # NaN: a census input, asked twice
    with Runner(f"{HOSTILE}:same_objects") as runner:
        def again(values: np.ndarray, attributes: dict) -> Reply:
            return runner.call(values, 13, attributes)
        judgement = judge(spec.load(13), Case(13, data, {}), runner.call(data, 13, {}), "census", again)
    assert judgement.census and all(record.deterministic for record in judgement.census)


def test_the_worker_first_message_is_json_not_a_pickle() -> None:
    with Runner("tests/impls/plugin_good.py:argmin") as runner:
        description = runner.load()
    assert json.loads(json.dumps(description)) == description
