"""The judge (engine.judging.judge) on hand-made cases and replies, without an implementation:
what a valid input's answer comes to, which clause a wrong one breaks, how a refusal of an
invalid model reads, and what it asks again to sharpen the blame."""

from __future__ import annotations

import numpy as np

import spec
from engine.asking.calls import Reply
from engine.judging.judge import Ask, judge, verdict
from generators import Case
from results.outcomes import ERROR, FAIL, MISSING_REJECTION, OBSERVED, OK, PASS, RAISED, UNSUPPORTED
from results.records import ANOTHER_PROCESS

V13 = spec.load(13)


def _reply(value: object = None, status: str = OK, error: str | None = None) -> Reply:
    return Reply(status, None if value is None else np.asarray(value), error, 0.0)


def _refuses(data: np.ndarray, attributes: dict) -> Reply:
    return _reply(status=RAISED, error="not asked again here")


def _as_before(reply: Reply):
    """A re-ask that answers as the first ask did (the judge asks again to sharpen the blame)."""
    return lambda data, attributes: reply


def test_a_right_answer_passes_and_a_wrong_one_names_its_clause() -> None:
    case = Case(13, np.array([3.0, 1.0, 1.0], np.float32), {"select_last_index": 1})
    assert judge(V13, case, _reply([2]), "property", _refuses).result.outcome == PASS
    wrong = judge(V13, case, _reply([1]), "property", _as_before(_reply([1])))
    assert wrong.result.outcome == FAIL and (wrong.failures[0].clause, wrong.failures[0].problem) == ("C6", "wrong-tie")
    flaky = judge(V13, case, _reply([1]), "property", _refuses)
    assert flaky.failures[0].problem == "nondeterministic", "asked again, it answered otherwise"
    shape = judge(V13, case, _reply([[2]]), "property", _as_before(_reply([[2]])))
    assert shape.failures[0].problem == "shape"
    dtype = judge(V13, case, _reply(np.array([2], np.int32)), "property", _as_before(_reply(np.array([2], np.int32))))
    assert dtype.failures[0].problem == "dtype"


def test_a_valid_input_refused_is_an_error_and_unsupported_is_scope() -> None:
    case = Case(13, np.array([1, 2], np.int16))
    refused = judge(V13, case, _reply(status=RAISED, error="ValueError: no"), "property", _refuses)
    assert refused.result.outcome == ERROR and refused.failures[0].clause == "C1"
    unsupported = judge(V13, case, _reply(status=UNSUPPORTED, error="NotImplementedError"), "property", _refuses)
    assert unsupported.result.outcome == UNSUPPORTED


def test_an_invalid_model_refused_passes_and_computed_is_lenient() -> None:
    case = Case(13, np.array([1.0, 2.0], np.float32), {"axis": 1}, intent="rejection")
    assert judge(V13, case, _reply(status=RAISED, error="axis"), "rejection", _refuses).result.outcome == PASS
    assert judge(V13, case, _reply([0]), "rejection", _refuses).result.outcome == MISSING_REJECTION


def test_an_undefined_input_is_observed_and_asked_a_second_time() -> None:
    case = Case(13, np.array([np.nan, 1.0], np.float32), intent="undefined")
    asked = []

    def again() -> tuple[Reply, str]:
        asked.append(True)
        return _reply([0]), "same process"

    judged = judge(V13, case, _reply([0]), "census", _refuses, again)
    assert judged.result.outcome == OBSERVED and not judged.failed and asked and judged.census


# --- verdict: the judge asks nothing, it says what it needs asked -----------------------------

def test_verdict_names_each_ask_a_wrong_answer_needs_and_judges_once_given_them() -> None:
    """A wrong answer to an input with an omitted attribute: the same call again first, then the
    variant with the defaults written out, twice where it passes; given those answers, the blame
    moves to the defaults clause (C7). Nothing is asked by the judge itself."""
    case = Case(13, np.array([3.0, 1.0], np.float32), {})
    wrong, right = _reply([0]), _reply([1])
    first = verdict(V13, case, wrong, "property")
    assert first == Ask({}), "first the same call again"
    variant = verdict(V13, case, wrong, "property", [wrong])
    assert isinstance(variant, Ask) and not variant.second and variant.attributes == {
        "axis": 0, "keepdims": 1, "select_last_index": 0}
    assert verdict(V13, case, wrong, "property", [wrong, right]) == variant, "a passing variant is asked twice"
    judged = verdict(V13, case, wrong, "property", [wrong, right, right])
    assert not isinstance(judged, Ask)
    assert (judged.failures[0].clause, judged.failures[0].problem) == ("C7", "not-a-minimum")


def test_verdict_asks_a_census_input_a_second_time_and_records_where() -> None:
    case = Case(13, np.array([np.nan, 1.0], np.float32), intent="undefined")
    answer = _reply([0])
    assert verdict(V13, case, answer, "census") == Ask({}, second=True)
    judged = verdict(V13, case, answer, "census", second=(_reply([1]), ANOTHER_PROCESS))
    assert judged.result.outcome == OBSERVED
    assert {(record.deterministic, record.again) for record in judged.census} == {(False, ANOTHER_PROCESS)}
    assert verdict(V13, case, answer, "census", second=(answer, ANOTHER_PROCESS)).census[0].deterministic


def test_verdict_on_a_right_answer_asks_nothing() -> None:
    judged = verdict(V13, Case(13, np.array([3, 1, 2], np.int8)), _reply([1]), "property")
    assert not isinstance(judged, Ask) and judged.result.outcome == PASS
