"""Judging work done ahead, while the worker answers: what a case derives (its key, twin, the
oracle's expectation, its input digest) is computed once and kept with it, a prepared case is
judged exactly as an unprepared one, and a run under process isolation (which prepares in a
thread) records the very results of an in-process run (which does not)."""

from __future__ import annotations

import numpy as np
import pytest

import spec
from engine.asking.calls import Reply
from engine.config.options import validate
from engine.judging import judge as judging
from engine.judging.judge import expected, judge, prepare
from engine.judging.run import run_all
from generators import Case, profiles
from generators.twin import twin
from results.digest import results_digest
from spec.oracle import expect

DATA = np.array([[3, 1, 1], [0, 2, 0]], np.int32)


def _case() -> Case:
    return Case(13, DATA, {"axis": 1, "select_last_index": 1})


def test_a_memo_is_computed_once() -> None:
    case, calls = _case(), []
    for _ in range(2):
        assert case.memo("_answer", lambda: calls.append(1) or 42) == 42
    assert calls == [1]


def test_a_twin_is_made_once() -> None:
    case = next(c for c in (Case(13, np.arange(n, dtype=np.float32)) for n in range(2, 200))
                if twin(c, c.key()) is not None)
    assert twin(case, case.key()) is twin(case, case.key())


def test_the_expectation_is_the_oracles_and_kept_per_spec_object() -> None:
    vspec, case = spec.load(13), _case()
    first, oracle = expected(vspec, case), expect(vspec, DATA, case.attributes)
    assert expected(vspec, case) is first
    assert (first.kind, first.tie_rule, first.first) == (oracle.kind, oracle.tie_rule, None)
    assert np.array_equal(first.last, oracle.last) and first.last.tolist() == [[2], [2]]
    other = spec.load(12)  # another spec object: not the kept expectation
    assert expected(other, case) is not first


def test_a_prepared_case_is_judged_as_an_unprepared_one() -> None:
    vspec = spec.load(13)
    reply = Reply("ok", np.array([[2], [2]]), None, 0.0)
    prepared, plain = _case(), _case()
    prepare([prepared])
    assert "_expectation" in prepared.__dict__ and "_input_digest" in prepared.__dict__
    one, other = (judge(vspec, c, reply, "property", None) for c in (prepared, plain))
    assert one.result == other.result and one.failures == other.failures


def test_prepare_leaves_a_failing_case_to_the_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise ValueError("the oracle failed")

    monkeypatch.setattr(judging, "expect", broken)
    case = _case()
    prepare([case])  # does not raise
    with pytest.raises(ValueError, match="the oracle failed"):
        judge(spec.load(13), case, Reply("ok", np.array([[2], [2]]), None, 0.0), "property", None)


def test_process_isolation_records_what_an_in_process_run_records(tmp_path) -> None:
    profiles.register()
    digests = set()
    for isolation in ("process", "none"):
        settings = validate({"impl": "zoo.correct:numpy_argmin", "isolation": isolation, "seed": "3",
                             "versions": "13", "dtypes": "float16,int64", "profile": "quick",
                             "report_dir": str(tmp_path / isolation)})
        digests.add(results_digest(run_all(settings).results))
    assert len(digests) == 1
