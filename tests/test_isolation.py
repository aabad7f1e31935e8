"""Fault isolation: the same statuses in both modes, crashes and hangs contained in process
mode, and exact round trips of every dtype through the worker."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from benchmarks.bench_isolation import benchmark
from engine.asking import pool
from engine.asking.calls import Reply
from engine.asking.isolation import Runner
from engine.asking.loader import UsageError
from engine.config.options import validate
from engine.judging.bookkeeping import FAULTS_PER_TEST
from results.outcomes import UNASKED
from tests.suite_runs import suite_session

IMPLS = Path(__file__).parent / "impls"
FAULTY = f"{IMPLS / 'plugin_faulty.py'}:by_value"
GOOD = IMPLS / "plugin_good.py"
TIMEOUT = 1.0

# The codes plugin_faulty.by_value reads from the first element of its input.
EXIT, ABORT, SEGFAULT, HANG, UNSUPPORTED, RAISE, RAGGED, UNCONVERTIBLE, SYS_EXIT, UNPICKLABLE, LEAVE_TEMP = range(1, 12)


def code(value: int) -> np.ndarray:
    return np.array([[value, 0, 5]], dtype=np.int64)


@pytest.fixture(scope="module")
def process_runner() -> Iterator[Runner]:
    with Runner(FAULTY, isolation="process", timeout=TIMEOUT) as runner:
        yield runner


@pytest.fixture(scope="module")
def inprocess_runner() -> Iterator[Runner]:
    with Runner(FAULTY, isolation="none") as runner:
        yield runner


@pytest.fixture(params=["process", "none"])
def runner(request: pytest.FixtureRequest) -> Runner:
    return request.getfixturevalue("process_runner" if request.param == "process" else "inprocess_runner")


def assert_ok(reply: Reply, expected: list) -> None:
    assert (reply.status, reply.error) == ("ok", None)
    assert reply.value is not None and reply.value.tolist() == expected


# --- the same statuses in both modes --------------------------------------------------------

def test_ok(runner: Runner) -> None:
    reply = runner.call(code(0), 13, {"axis": 1})
    assert_ok(reply, [[0]])
    assert reply.value is not None and reply.value.dtype == np.int64
    assert 0 <= reply.seconds < TIMEOUT
    assert not reply.by_value, "a numpy array carries the integer type the implementation chose"


def test_an_answer_that_is_no_numpy_array_is_marked_for_reading_by_value(runner: Runner) -> None:
    reply = runner.call(code(RAGGED), 13, {})
    assert reply.status == "ok" and reply.by_value  # a list, whatever numpy makes of it


def test_not_implemented_is_unsupported(runner: Runner) -> None:
    reply = runner.call(code(UNSUPPORTED), 13, {})
    assert (reply.status, reply.value) == ("unsupported", None)
    assert reply.error == "NotImplementedError: no kernel for this input"


def test_other_exceptions_are_raised(runner: Runner) -> None:
    reply = runner.call(code(RAISE), 13, {})
    assert (reply.status, reply.error) == ("raised", "ValueError: axis out of range")


def test_a_return_numpy_holds_only_as_objects_is_an_answer(runner: Runner) -> None:
    reply = runner.call(code(RAGGED), 13, {})
    assert reply.status == "ok"
    assert reply.value is not None and reply.value.dtype == object


def test_a_return_numpy_refuses_is_raised(runner: Runner) -> None:
    reply = runner.call(code(UNCONVERTIBLE), 13, {})
    assert (reply.status, reply.error) == (
        "raised", "TypeError: returned Unconvertible, which numpy.asarray does not accept")


def test_sys_exit_is_a_crash_in_both_modes(runner: Runner) -> None:
    reply = runner.call(code(SYS_EXIT), 13, {})
    assert reply.status == "crash"
    assert reply.error is not None and "sys.exit(4)" in reply.error
    assert_ok(runner.call(code(0), 13, {"axis": 1}), [[0]])


@pytest.mark.parametrize("isolation", ["process", "none"])
def test_attributes_arrive_exactly_as_set(isolation: str) -> None:
    with Runner(f"{GOOD}:echo", isolation=isolation) as runner:
        assert_ok(runner.call(code(0), 11, {}), ["opset=11"])
        assert_ok(runner.call(code(0), 12, {"select_last_index": 0, "axis": -1}),
                  ["opset=12", "axis=-1", "select_last_index=0"])


@pytest.mark.parametrize("isolation", ["process", "none"])
def test_the_callers_array_is_never_written(isolation: str) -> None:
    data = np.array([[3, 1], [2, 4]], dtype=np.int32)
    with Runner(f"{GOOD}:scribble", isolation=isolation) as runner:
        assert_ok(runner.call(data, 13, {}), [[1, 0]])
    assert data.tolist() == [[3, 1], [2, 4]]


# --- faults contained in process mode -------------------------------------------------------

@pytest.mark.parametrize(("value", "death"), [
    (EXIT, "exited with code 3"),
    (ABORT, "SIGABRT"),
    (SEGFAULT, "SIGSEGV"),
])
def test_crash_then_carry_on(process_runner: Runner, value: int, death: str) -> None:
    restarts = process_runner.restarts
    reply = process_runner.call(code(value), 13, {})
    assert (reply.status, reply.value) == ("crash", None)
    assert reply.error is not None and death in reply.error
    assert_ok(process_runner.call(code(0), 13, {"axis": 1}), [[0]])
    assert process_runner.restarts == restarts + 1


def test_after_a_crash_the_next_worker_is_started_ahead() -> None:
    """A fresh worker takes a fresh interpreter in a fresh sandbox (a second or so with a runtime):
    once the implementation has crashed, the next one loads while the current one works."""
    with Runner(FAULTY, timeout=TIMEOUT) as runner:
        assert_ok(runner.call(code(0), 13, {"axis": 1}), [[0]])
        assert runner.pool.spare is None  # nothing crashed: nothing started ahead
        assert runner.call(code(EXIT), 13, {}).status == "crash"
        assert_ok(runner.call(code(0), 13, {"axis": 1}), [[0]])
        spare = runner.pool.spare
        assert spare is not None and spare.process.poll() is None
        assert runner.call(code(EXIT), 13, {}).status == "crash"
        assert_ok(runner.call(code(0), 13, {"axis": 1}), [[0]])
        assert runner.pool.current is spare and runner.restarts == 2
    assert spare.process.poll() is not None and runner.pool.spare is None


def test_a_worker_started_ahead_that_could_not_load_is_replaced() -> None:
    """An implementation that loads in one process at a time (a device): the worker started
    ahead fails to load while the current one holds the device; when it is needed, one started
    then loads."""
    with Runner(f"{IMPLS / 'plugin_exclusive.py'}:by_value", timeout=TIMEOUT) as runner:
        for _ in range(3):
            assert runner.call(code(EXIT), 13, {}).status == "crash"
            assert_ok(runner.call(code(0), 13, {"axis": 1}), [[0]])


def test_what_a_dead_worker_left_in_its_temporary_folder_is_removed() -> None:
    """A runtime that writes models to temporary files (tract, tinygrad) leaves them behind when
    its worker crashes; the worker's temporary folder is its own, and goes with it. Unsandboxed
    it is a folder on the host; in a sandbox, the sandbox's own /tmp, never on the host."""
    with Runner(f"{IMPLS / 'plugin_faulty.py'}:by_value", timeout=TIMEOUT, sandbox_mode="off") as runner:
        left = Path(runner.call(code(LEAVE_TEMP), 13, {}).error.split(": ", 1)[1])
        assert left.is_dir() and left.parent.name.startswith(f"argmin-worker-{os.getpid()}-")
        assert runner.call(code(EXIT), 13, {}).status == "crash"
        assert not left.exists() and not left.parent.exists()
    with Runner(f"{IMPLS / 'plugin_faulty.py'}:by_value", timeout=TIMEOUT) as runner:
        inside = Path(runner.call(code(LEAVE_TEMP), 13, {}).error.split(": ", 1)[1])
        if runner.sandbox.mechanism is not None:
            assert inside.parent == Path("/tmp") and runner.pool.current.scratch is None and not inside.exists()


def test_hang_is_a_timeout_then_carry_on(process_runner: Runner) -> None:
    assert_ok(process_runner.call(code(0), 13, {"axis": 1}), [[0]])  # a worker started and loaded: not timed
    start = time.perf_counter()
    reply = process_runner.call(code(HANG), 13, {})
    elapsed = time.perf_counter() - start
    assert (reply.status, reply.value) == ("timeout", None)
    assert reply.error is not None and f"{TIMEOUT:g} s" in reply.error
    assert TIMEOUT <= elapsed < TIMEOUT + 1.0
    assert_ok(process_runner.call(code(0), 13, {"axis": 1}), [[0]])


def test_a_batch_stops_once_it_crashed_or_hung_as_often_as_allowed(process_runner: Runner) -> None:
    calls = [(code(value), 13, {}, None) for value in (0, HANG, EXIT, HANG, 0, EXIT)]
    replies = process_runner.call_many(calls, faults=2)
    assert [r.status for r in replies] == ["ok", "timeout", "crash", UNASKED, UNASKED, UNASKED]
    assert [r.status for r in process_runner.call_many(calls[:3], faults=None)] == ["ok", "timeout", "crash"]


@pytest.mark.e2e
def test_a_hanging_implementation_costs_a_test_no_more_timeouts_than_it_judges(tmp_path: Path) -> None:
    """A batch asked ahead stops at the test's fault budget. One more may come: a case's state
    twin is asked right after it, and hangs with it, though only the case is judged."""
    chosen = validate({"impl": "zoo.faulty:hang_on_rank4", "versions": "13", "dtypes": "float", "profile": "quick",
                       "seed": "1", "timeout": "1", "report_dir": str(tmp_path)})
    session, failed = suite_session(chosen, "property")
    assert failed == 1
    assert 0 < session.timeouts <= FAULTS_PER_TEST + 1


def test_objects_travel_back_as_their_descriptions_in_both_modes(runner: Runner) -> None:
    """No object crosses from the worker: an object answer arrives as one short text per element
    (so a function, which pickle would refuse, is an answer like any other object)."""
    reply = runner.call(code(UNPICKLABLE), 13, {})
    assert reply.status == "ok" and reply.value is not None and reply.value.dtype == object
    assert reply.value.shape == (1,) and reply.value[0].startswith("<function by_value.<locals>.<lambda> at 0x")


ROUND_TRIP = [
    np.array([1.0, -0.0, np.nan, np.inf, -np.inf, 1e-40, 3e38], dtype=ml_dtypes.bfloat16),
    np.array([np.nan, -0.0, 6e-8, 65504], dtype=np.float16),
    np.array([0.5, -0.0, np.nan], dtype=ml_dtypes.float8_e4m3fn),
    np.array([2**64 - 1, 2**63 + 1], dtype=np.uint64),
    np.array([-(2**63), 2**63 - 1], dtype=np.int64),
    np.array([[True, False]]),
    np.array([1 + 2j], dtype=np.complex128),
    np.zeros((0, 3, 0), dtype=np.float32),
    np.array(7.0, dtype=np.float64),
]


@pytest.mark.parametrize("data", ROUND_TRIP, ids=lambda a: f"{a.dtype}{list(a.shape)}")
def test_exact_round_trip(data: np.ndarray, identity_runner: Runner) -> None:
    reply = identity_runner.call(data, 13, {})
    assert reply.status == "ok" and reply.value is not None
    assert (reply.value.dtype, reply.value.shape) == (data.dtype, data.shape)
    assert reply.value.tobytes() == data.tobytes()


@pytest.fixture(scope="module")
def identity_runner() -> Iterator[Runner]:
    with Runner(f"{GOOD}:identity", isolation="process") as runner:
        yield runner


# --- set-up errors and lifecycle ------------------------------------------------------------

def test_bad_impl_is_a_usage_error_before_any_worker_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[object] = []
    monkeypatch.setattr(pool, "WorkerProcess", lambda *args: started.append(args))
    with pytest.raises(UsageError, match="has no ':function' part"):
        Runner("foo")
    assert started == []


@pytest.mark.parametrize(("options", "problem"), [
    ({"isolation": "thread"}, "--isolation 'thread' is not a mode"),
    ({"timeout": 0}, "--timeout 0 is not a positive number"),
])
def test_bad_options_are_usage_errors(options: dict, problem: str) -> None:
    with pytest.raises(UsageError, match=problem):
        Runner(f"{GOOD}:argmin", **options)


def test_close_ends_the_worker() -> None:
    runner = Runner(f"{GOOD}:argmin", isolation="process")
    assert_ok(runner.call(code(0), 13, {"axis": 1}), [[0]])
    worker = runner.pool.current
    assert worker is not None and worker.process.poll() is None and Path(f"/proc/{worker.pid}").exists()
    runner.close()
    assert worker.process.poll() is not None and not Path(f"/proc/{worker.pid}").exists()
    assert worker.scratch is None or not Path(worker.scratch).exists()


def test_the_worker_loads_paths_as_the_parent_saw_them(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(IMPLS.parent)
    with Runner("impls/plugin_faulty.py:by_value", isolation="process", timeout=TIMEOUT) as runner:
        monkeypatch.chdir(tmp_path)  # a restarted worker must still find the file
        assert runner.call(code(EXIT), 13, {}).status == "crash"
        assert_ok(runner.call(code(0), 13, {"axis": 1}), [[0]])


def test_benchmark_reports_medians() -> None:
    figures = benchmark(calls=20, starts=2)
    assert set(figures) == {"process_s", "none_s", "overhead_s", "ratio", "start_s"}
    assert 0 < figures["none_s"] < figures["process_s"] < 0.05 < figures["start_s"]
