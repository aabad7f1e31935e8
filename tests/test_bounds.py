"""Nothing an implementation returns or allocates takes the run's memory: answers far larger
than the output are judged on their shape (C3) without crossing to the main process, no reply
over the cap is read, and the worker's memory limit turns a leak into a crash, "out of memory",
after which the worker restarts and the run goes on."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import spec
from engine.asking import protocol, worker
from engine.asking.calls import Reply
from engine.asking.isolation import Runner
from engine.asking.loader import UsageError
from engine.config.options import memory_limit
from engine.judging.judge import Judgement, judge
from generators import Case
from results import raw_path, read_json
from tests.impls.plugin_hostile import LEAK_BYTES

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = "tests/impls/plugin_hostile.py"
DATA = np.array([[3, 1, 2]], dtype=np.uint8)
ROW = {"axis": 1}


@pytest.fixture(params=["process", "none"])
def huge_runner(request: pytest.FixtureRequest) -> Iterator[Runner]:
    with Runner(f"{HOSTILE}:huge_for_uint8", isolation=request.param) as runner:
        yield runner


def test_an_answer_far_larger_than_the_output_is_described_not_kept(huge_runner: Runner) -> None:
    reply = huge_runner.call(DATA, 13, ROW)
    assert (reply.status, reply.value) == ("oversize", None)
    assert reply.error == ("returned int64 values of shape (20000, 20000) (2.98 GiB), far larger than the expected "
                           "output (1 int64 element); not kept")
    answer = huge_runner.call(DATA.astype(np.int8), 13, ROW)
    assert (answer.status, answer.value.tolist()) == ("ok", [[1]])


@pytest.mark.parametrize(("shape", "attributes", "elements"), [
    ((4, 5, 6), {}, 30),
    ((4, 5, 6), {"axis": -1}, 20),
    ((0, 5), {"axis": 0}, 5),  # an empty reduced axis still has one output per slice
    ((3, 0), {"axis": 0}, 0),
    ((), {}, 1),  # rank 0: no valid axis, bounded by the input
    ((7, 0, 2), {"axis": 5}, 14),
])
def test_the_expected_output_size_is_known_before_the_call(shape: tuple, attributes: dict, elements: int) -> None:
    assert worker.expected_elements(shape, attributes) == elements


def test_every_answer_of_the_right_size_is_kept_and_every_limit_under_the_cap() -> None:
    for shape in [(1,), (2, 3), (100_000, 1), (1, 100_000), (512, 256), (10_000_000, 2)]:
        for axis in range(len(shape)):
            right = 8 * worker.expected_elements(shape, {"axis": axis})
            limit = worker.answer_limit(shape, {"axis": axis})
            assert limit <= protocol.ANSWER_CAP
            assert right <= limit or limit == protocol.ANSWER_CAP


@pytest.mark.parametrize("isolation", ["process", "none"])
def test_heavy_objects_cross_as_short_descriptions(isolation: str) -> None:
    with Runner(f"{HOSTILE}:heavy_objects", isolation=isolation) as runner:
        reply = runner.call(DATA, 13, ROW)
    assert reply.status == "ok" and reply.value.dtype == object and reply.value.shape == (1,)
    assert reply.value[0] == "'" + "x" * 78 + "…"


def test_a_reply_over_the_cap_is_never_read() -> None:
    """The plug-in writes past the worker's own checks, into the pipe itself."""
    with Runner(f"{HOSTILE}:flood_the_pipe") as runner:
        reply = runner.call(DATA, 13, ROW)
        assert (reply.status, reply.value) == ("crash", None)
        assert reply.error.startswith("the worker sent more than the 64.1 MiB a reply may take")
        answer = runner.call(DATA.astype(np.int8), 13, ROW)
        assert (answer.status, answer.value.tolist(), runner.restarts) == ("ok", [[1]], 1)


@pytest.mark.parametrize("isolation", ["process", "none"])
def test_an_exception_text_is_cut(isolation: str) -> None:
    with Runner(f"{HOSTILE}:long_message", isolation=isolation) as runner:
        reply = runner.call(DATA, 13, ROW)
    assert reply.status == "raised"
    assert reply.error.startswith("ValueError: xxx") and reply.error.endswith("... (10000000 characters)")
    assert len(reply.error) < 2100


def test_a_leak_is_an_out_of_memory_crash_and_the_worker_restarts() -> None:
    limit = 256 << 20
    with Runner(f"{HOSTILE}:leak", memory_limit=limit) as runner:
        replies = [runner.call(DATA, 13, ROW) for _ in range(limit // LEAK_BYTES + 2)]
        statuses = [reply.status for reply in replies]
        assert "crash" in statuses and set(statuses) == {"ok", "crash"}, statuses
        crash = replies[statuses.index("crash")]
        # Seen after the call by the worker, or during it by the parent: either way, out of memory.
        assert crash.error.startswith("out of memory: the worker process held ")
        assert ", over its --memory-limit of 256 MiB" in crash.error
        assert runner.restarts >= 1
        answer = runner.call(DATA, 13, ROW)  # a fresh worker, without the leak
        assert (answer.status, answer.value.tolist()) == ("ok", [[1]])


def test_a_call_that_takes_ever_more_memory_is_stopped_while_it_runs() -> None:
    with Runner(f"{HOSTILE}:hog", memory_limit=256 << 20) as runner:
        reply = runner.call(DATA, 13, ROW)
        assert (reply.status, reply.value) == ("crash", None)
        # Stopped by the suite's watch, or first by the kernel where a control group bounds the worker.
        assert reply.error.startswith(("out of memory: the worker process held ", "out of memory: the kernel ended"))
        assert "--memory-limit of 256 MiB" in reply.error
        answer = runner.call(DATA.astype(np.int8), 13, ROW)
        assert answer.status == "crash"  # the next worker's call is stopped the same way: the run goes on


def test_without_a_limit_memory_is_not_watched() -> None:
    with Runner(f"{HOSTILE}:leak", memory_limit=None) as runner:
        assert {runner.call(DATA, 13, ROW).status for _ in range(10)} == {"ok"}


def test_runtimes_that_reserve_memory_without_using_it_stay_within_the_limit() -> None:
    """onnxruntime gives every session threads whose stacks reserve address space: the limit
    counts what a worker holds, so none of that is a crash."""
    with Runner("onnxruntime", memory_limit=256 << 20) as runner:
        for axis in range(-3, 3):
            for keepdims in (0, 1):
                data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
                assert runner.call(data, 13, {"axis": axis, "keepdims": keepdims}).status == "ok"


@pytest.mark.parametrize(("text", "size"), [("4G", 4 << 30), ("512M", 512 << 20), ("1.5g", 3 << 29),
                                            ("8GiB", 8 << 30), ("2048MB", 2 << 30), ("none", None)])
def test_memory_limit_values(text: str, size: int | None) -> None:
    assert memory_limit(text) == size


@pytest.mark.parametrize(("text", "problem"), [("lots", "is not a size"), ("inf", "is not a size"),
                                              ("100M", "too small"), ("0", "too small")])
def test_bad_memory_limits_are_usage_errors(text: str, problem: str) -> None:
    with pytest.raises(UsageError, match=problem):
        memory_limit(text)


# --- judging an oversize answer ---------------------------------------------------------------

def _never(data: np.ndarray, attributes: dict) -> Reply:
    raise AssertionError("judging an oversize answer asks the implementation nothing more")


def _judge(case: Case, again=_never) -> Judgement:
    outcome = worker.call(lambda data, **_: np.zeros((20000, 20000), np.int64), case.data, case.version,
                          case.attributes)
    return judge(spec.load(case.version), case, outcome, "property", again)


def test_on_a_valid_input_an_oversize_answer_fails_the_output_shape_clause() -> None:
    judgement = _judge(Case(13, np.zeros((3, 4), np.uint8)))
    result, counterexample = judgement.result, judgement.evidence(judgement.failures[0])
    assert (result.outcome, result.clause) == ("fail", spec.load(13).clause_for_check("output-shape").id)
    assert counterexample.problem == "shape"
    assert counterexample.actual.startswith("oversize: returned int64 values of shape (20000, 20000)")
    assert counterexample.expected.shape == [1, 4]


def test_on_an_input_that_must_be_rejected_an_oversize_answer_is_a_missing_rejection() -> None:
    judgement = _judge(Case(13, np.zeros(3, np.bool_)))
    assert judgement.result.outcome == "missing-rejection"


@pytest.mark.parametrize(("data", "attributes", "fits"), [
    (np.array([1.0, np.nan], np.float32), {}, []),  # no NaN policy fits an answer of the wrong shape
    (np.array([1.0, 0.0], np.float32), {"keepdims": 2}, ["returned"]),
])
def test_on_an_undefined_input_an_oversize_answer_is_observed_as_returned(data, attributes, fits) -> None:
    asked = []

    def again(data: np.ndarray, attributes: dict) -> Reply:  # the census asks once more: same answer
        asked.append(attributes)
        return worker.call(lambda data, **_: np.zeros((20000, 20000), np.int64), data, 13, attributes)

    judgement = _judge(Case(13, data, attributes), again)
    record, = judgement.census
    assert record.fits == fits and record.observed.startswith("oversize: ")
    assert asked == [attributes] and record.status == "returned" and record.deterministic


# --- through the front door -------------------------------------------------------------------

def _front_door(tmp_path: Path, impl: str, *extra: str) -> tuple[subprocess.CompletedProcess, int, dict]:
    """``python -m suites`` on uint8 at ArgMin-13; (the process, the peak RSS in bytes of the
    process that owns the run, its raw.json)."""
    probe = ("import resource, sys\nfrom suites.__main__ import main\ncode = main(sys.argv[1:])\n"
             "print('peak-rss', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
             "sys.exit(code)")
    result = subprocess.run([sys.executable, "-c", probe, "--impl", impl, "--versions", "13", "--dtypes", "uint8",
                             "--profile", "quick", "--seed", "5", "--report-dir", str(tmp_path), *extra],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    peak = int(next(line for line in result.stderr.splitlines() if line.startswith("peak-rss")).split()[1]) * 1024
    return result, peak, read_json(raw_path(tmp_path))


@pytest.mark.e2e
def test_a_huge_answer_leaves_the_run_and_its_memory_intact(tmp_path: Path) -> None:
    result, peak, raw = _front_door(tmp_path, f"{HOSTILE}:huge_for_uint8")
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert raw["info"]["complete"] and (tmp_path / "report.html").is_file()
    failure, = [r for r in raw["results"] if r["test"].startswith("suites/test_semantic.py")
                and r["outcome"] == "fail" and r["counterexample"]]  # the others are its occurrences
    assert failure["clause"] == "C3" and "shape (20000, 20000)" in failure["counterexample"]["actual"]
    # Every call returned 3.2 GB: a copy of one answer would take the process far past this.
    assert peak < 1 << 30, f"peak RSS {peak >> 20} MiB"


@pytest.mark.e2e
def test_a_leaking_implementation_is_stopped_by_the_memory_limit(tmp_path: Path) -> None:
    result, _, raw = _front_door(tmp_path, f"{HOSTILE}:leak", "--memory-limit", "256M")
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert raw["info"]["complete"] and raw["info"]["memory_limit_bytes"] == 256 << 20
    crashes = [r for r in raw["results"] if r["outcome"] == "crash" and r["counterexample"]]  # the others:
    assert crashes, "the leak was never stopped"  # occurrences of a crash already shown in the same test
    assert all(r["counterexample"]["actual"].startswith("crash: out of memory") for r in crashes)
    assert all(r["counterexample"]["input"]["values"] is not None for r in crashes)  # with the input
    assert any(r["outcome"] == "pass" for r in raw["results"]), "the run did not go on"
