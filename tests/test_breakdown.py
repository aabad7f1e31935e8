"""The cost breakdown's bookkeeping (benchmarks/bench_breakdown.py), on a fake clock: exclusive
stages, the implementation's time moved out of the transfer, medians per case, and the
instrumentation restored after use. No timing is asserted."""

from __future__ import annotations

import itertools

import pytest

from benchmarks.bench_breakdown import STAGES, Breakdown, Stopwatch, chosen, instrumented, summarize, table
from engine.asking.calls import Reply
from engine.judging import judge, session


def _clock(*ticks: float):
    times = iter(ticks)
    return lambda: next(times)


def test_nested_stages_are_exclusive() -> None:
    watch = Stopwatch(_clock(0.0, 1.0, 4.0, 6.0))
    watch.enter("generate")
    watch.enter("judge")  # at 1: generate ran 1 s
    watch.leave()  # at 4: judge ran 3 s
    watch.leave()  # at 6: generate ran 2 s more
    assert dict(watch.totals) == {"generate": 3.0, "judge": 3.0}


def test_move_charges_time_to_another_stage() -> None:
    watch = Stopwatch(_clock(0.0, 10.0))
    with watch.stage("transfer"):
        pass
    watch.move(7.0, "transfer", "implementation")
    assert dict(watch.totals) == {"transfer": 3.0, "implementation": 7.0}


def test_timed_wraps_a_function_and_returns_its_value() -> None:
    watch = Stopwatch(_clock(0.0, 2.0))
    assert watch.timed(lambda x: x + 1, "oracle")(1) == 2
    assert watch.totals["oracle"] == 2.0


def test_a_stage_ends_when_its_function_raises() -> None:
    watch = Stopwatch(_clock(0.0, 1.0, 5.0, 6.0))

    def fails() -> None:
        raise ValueError

    with watch.stage("generate"), pytest.raises(ValueError):
        watch.timed(fails, "judge")()
    assert dict(watch.totals) == {"generate": 2.0, "judge": 4.0}


def test_summarize_takes_medians_per_case() -> None:
    samples = [(100, {"generate": 0.01, "implementation": 0.02}),
               (100, {"generate": 0.03, "implementation": 0.02}),
               (100, {"generate": 0.02, "implementation": 0.08})]
    result = summarize("x", samples)
    assert result.cases == 100
    assert result.micros["generate"] == pytest.approx(200.0)
    assert result.micros["implementation"] == pytest.approx(200.0)
    assert result.micros["oracle"] == 0.0
    assert result.share("implementation") == pytest.approx(0.5)


def test_table_lists_every_stage_and_the_implementation_share() -> None:
    micros = dict.fromkeys(STAGES, 10.0)
    lines = table([Breakdown("onnxruntime", 5, micros)])
    assert all(stage in lines[0] for stage in STAGES)
    assert "onnxruntime: 70 us per case in all, the implementation 14% of it, the suite 60 us" in lines[-1]


def test_impls_plus_adds_to_the_default_list() -> None:
    installed, missing = chosen("+zoo.correct:python_loop")
    assert installed[:2] == ["onnxruntime", "zoo.correct:numpy_argmin"]
    assert "zoo.correct:python_loop" in installed
    assert not set(installed) & set(missing)


def test_instrumented_restores_the_engine() -> None:
    before = (session.Session.call_many, session.verdict, judge.expect, judge.input_digest)
    with instrumented(Stopwatch(itertools.count().__next__)):
        assert session.verdict is not before[1]
    assert (session.Session.call_many, session.verdict, judge.expect, judge.input_digest) == before


def test_call_many_moves_the_workers_time_to_the_implementation() -> None:
    class Fake(session.Session):
        def __init__(self) -> None:
            pass

    def replies(self, calls, runner=None):
        return [Reply("ok", None, None, 2.0), Reply("ok", None, None, 3.0)]

    original = session.Session.call_many
    session.Session.call_many = replies
    try:
        with instrumented(Stopwatch(_clock(0.0, 10.0))) as watch:
            Fake().call_many([])
    finally:
        session.Session.call_many = original
    assert dict(watch.totals) == {"transfer": 5.0, "implementation": 5.0}
