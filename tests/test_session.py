"""The session (engine.judging.session) through its public methods, in-process on the zoo's
plug-ins: it asks a batch, judges each case once, records what passes, stops a search on a
failure and records that failure minimized with its counterexample, and counts its calls."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.config.options import validate
from engine.judging.session import Nonconformance, Session
from generators import Case
from results.outcomes import FAIL, PASS


def _session(impl: str, folder: Path) -> Session:
    return Session(validate({"impl": impl, "isolation": "none", "versions": "13", "profile": "quick",
                             "report_dir": str(folder)}))


def _cases() -> list[Case]:
    tie = np.array([5.0, 1.0, 3.0, 1.0, 1.0, 7.0, 9.0, 2.0], np.float32)
    return [Case(13, np.array([3.0, 1.0, 2.0], np.float32)), Case(13, tie), Case(13, tie)]  # the tie twice


def test_a_batch_of_right_answers_is_judged_once_per_input_and_recorded(tmp_path: Path) -> None:
    session = _session("zoo.correct:numpy_argmin", tmp_path)
    session.begin("t[v13-float]", suite="property")
    session.check_all(_cases(), "property")
    results, census, _, ends = session.take_new()
    assert [r.outcome for r in results] == [PASS, PASS], "the repeated input is judged once"
    assert session.calls >= 2 and not census and not ends
    assert session.take_new()[0] == [], "what was handed out is not handed out again"


def test_a_failure_ends_the_search_and_is_recorded_minimized(tmp_path: Path) -> None:
    session = _session("zoo.broken_values:ties_last_always", tmp_path)
    session.begin("t[v13-float]", suite="property")
    with pytest.raises(Nonconformance, match="C6"):
        session.check_all(_cases(), "property")
    session.found()
    failure, = [r for r in session.take_new()[0] if r.outcome == FAIL]
    ce = failure.counterexample
    assert failure.clause == "C6" and ce.minimized and len(ce.input.values) <= 3, ce.input
    assert ce.again is not None and not ce.flaky, "asked once more, the same way: the same wrong answer"
    since = session.delivered()
    session.ended("property:v13-float", (0, 0))
    assert session.take_new()[3][0].results == since[0], "the end mark counts every record the test made"
