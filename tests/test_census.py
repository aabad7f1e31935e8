"""A census that tells garbage from policy: each undefined input is asked in two worker
processes; answers that differ between them, values that cannot index the input and shapes no
reading gives are flagged (warnings, never violations); a deterministic rule the census does not
list is described with its examples, and only answers that follow different listed rules on
inputs those rules tell apart are incoherent."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from functools import cache
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import spec
from engine.config.options import run_info, validate
from engine.judging import census
from engine.judging.run import run_all
from generators import profiles
from reports import aggregate
from reports.document.census import NO_LISTED_POLICY, entries
from reports.document.census import _examples as census_examples
from reports.pages.i18n import Translator
from reports.pages.render import render_report
from reports.pages.standing import type_policy
from reports.pytest_plugin import summary_lines
from results import CensusRecord, RawRun, RunInfo
from results.records import ANOTHER_PROCESS, SAME_PROCESS
from results.tensors import to_tensor
from results.verdict import CONFORMANT, verdicts

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "reports" / "document" / "report.schema.json").read_text("utf-8"))
PLUGINS = "tests/impls/plugin_census.py"
NAN = np.nan


@cache
def _document(impl: str, versions: str, dtypes: str, isolation: str = "none") -> tuple[RawRun, dict]:
    profiles.register()
    settings = validate({"impl": impl, "profile": "quick", "seed": "2", "isolation": isolation, "timeout": "5",
                         "versions": versions, "dtypes": dtypes})
    session = run_all(settings)
    raw = RawRun(run_info(settings, 0.0), {"impl": impl}, session.results, session.census)
    document = aggregate(raw)
    jsonschema.validate(document, SCHEMA)
    return raw, document


def _topic(document: dict, version: int, topic: str) -> dict:
    found, = (c for c in document["census"] if c["version"] == version and c["topic"] == topic)
    return found


# --- the engine: policies and flags of one observation ----------------------------------------------

def _fits(version: int, topic: str, data: list | np.ndarray, status: str, answer: list | None,
          **attributes: int) -> list[str]:
    vspec = spec.load(version)
    clause = next(c for c in vspec.clauses if c.id == topic)
    data = np.asarray(data, np.float32)
    value = None if answer is None else np.asarray(answer, np.int64)
    return census.policies(vspec, clause, data, attributes, status, value)


@pytest.mark.parametrize(("data", "answer", "fits"), [
    ([NAN, 1.0], [0], ["nan-first-only", "nan-is-min"]),  # onnxruntime: NaN at index 0 wins
    ([2.0, NAN, 1.0], [2], ["nan-first-only", "nan-ignored"]),  # ... and is skipped anywhere else
    ([1.0, NAN], [1], ["nan-is-min"]),
    ([NAN, 1.0], [1], ["nan-ignored"]),
    ([1.0, NAN, 0.0], [0], []),  # min-then-match: 0 whenever the slice holds NaN
])
def test_nan_observations_fit_the_named_rules(data: list, answer: list, fits: list[str]) -> None:
    assert sorted(_fits(13, "C14", data, "ok", answer)) == fits


def test_raising_exactly_on_an_empty_reduced_axis_is_a_rule_at_argmin_11() -> None:
    empty_axis, empty_rows = np.zeros((0, 3)), np.zeros((0, 3))
    assert census.RAISES_ON_EMPTY_AXIS in _fits(11, "C16", empty_axis, "raised", None, axis=0)
    assert census.RAISES_ON_EMPTY_AXIS in _fits(11, "C16", empty_rows, "ok", np.zeros((0, 1)), axis=1)
    assert census.RAISES_ON_EMPTY_AXIS not in _fits(11, "C16", empty_rows, "raised", None, axis=1)
    assert census.RAISES_ON_EMPTY_AXIS not in _fits(11, "C16", empty_axis, "ok", [[0, 0, 0]], axis=0)
    assert census.RAISES_ON_EMPTY_AXIS not in _fits(11, "C16", empty_rows, "ok", np.zeros((0, 3)), axis=1)


@pytest.mark.parametrize(("version", "data", "attributes", "answer", "flags"), [
    (13, np.zeros((0, 3), np.uint8), {}, [[-1966026992, 21905, 1]], ["not-an-index"]),  # OpenVINO's garbage
    (13, np.zeros((0, 3), np.uint8), {}, [[0, 0, 0]], ["not-an-index"]),  # no index of an empty axis at all
    (13, np.zeros((0, 3), np.uint8), {"axis": 1}, np.zeros((0, 1)), []),  # an empty answer holds no value
    (13, np.ones((2, 3), np.float32), {"keepdims": 2}, [[0, 0, 0]], []),  # read as keepdims=1
    (13, np.ones((2, 3), np.float32), {"keepdims": 2}, [0, 0, 0], []),  # read as keepdims=0
    (13, np.ones((2, 3), np.float32), {"keepdims": 2}, np.zeros((2, 3)), ["wrong-shape"]),
    (13, np.ones((2, 3), np.float32), {"keepdims": 2}, [[0, 2, 0]], ["not-an-index"]),
    (1, np.ones((2, 3), np.float32), {"axis": -5}, [[0], [2]], []),  # ArgMin-1: any axis may be meant
    (1, np.ones((2, 3), np.float32), {"axis": -5}, [[0], [3]], ["not-an-index"]),
    (1, np.ones((2, 3), np.float32), {"axis": -1}, [[0, 0, 0]], []),  # -1 read as axis 0
    (1, np.array(1.0, np.float32), {}, 0, []),  # rank 0: index 0, of shape () or (1,)
    (1, np.array(1.0, np.float32), {}, [0], []),
    (1, np.array(1.0, np.float32), {}, [[0]], ["wrong-shape"]),
    (1, np.array(1.0, np.float32), {}, [1], ["not-an-index"]),
])
def test_answers_that_cannot_be_an_answer_are_flagged(version: int, data: np.ndarray, attributes: dict,
                                                      answer: object, flags: list[str]) -> None:
    value = np.asarray(answer, np.int64)
    assert census.flags(spec.load(version), data, attributes, "ok", value) == flags


def test_an_oversize_answer_is_flagged_as_a_wrong_shape_and_errors_are_not_flagged() -> None:
    vspec, data = spec.load(13), np.zeros((0, 3), np.uint8)
    assert census.flags(vspec, data, {}, "oversize", None) == ["wrong-shape"]
    assert census.flags(vspec, data, {}, "raised", None) == []


# --- the report: reading a type's observations ------------------------------------------------------

def _record(type_name: str, fits: list[str], deterministic: bool | None = True, again: str | None = ANOTHER_PROCESS,
            flags: tuple[str, ...] = (), status: str = "returned") -> CensusRecord:
    return CensusRecord(13, type_name, "C14", to_tensor(np.zeros(2, np.float32)), {}, None, fits, status, None,
                        deterministic, again, list(flags))


def _entry(*records: CensusRecord) -> dict:
    run = RawRun(RunInfo("x", [13], None, "quick", 1, "2026-12-01T00:00:00+00:00"), {}, [], list(records))
    entry, = entries(run, lambda tensor: tensor, lambda version, topic: None)
    return entry


def test_answers_fitting_one_named_rule_follow_it() -> None:
    entry = _entry(_record("float", ["nan-first-only", "nan-is-min"]), _record("float", ["nan-first-only"]))
    assert (entry["policy"], entry["coherent"], entry["warnings"]) == (["nan-first-only"], True, [])


def test_deterministic_answers_outside_the_listed_rules_are_a_rule_of_their_own_with_examples() -> None:
    entry = _entry(*[_record("float", []) for _ in range(4)])
    assert (entry["policy"], entry["coherent"], entry["warnings"]) == ([NO_LISTED_POLICY], True, [])
    assert [e["fits"] for e in entry["examples"][:3]] == [[], [], []]  # up to three that fit nothing, first


def test_a_policy_with_exceptions_is_counted_shown_and_not_coherent() -> None:
    """OpenVINO 2024.4's int32 ties at ArgMin-11: 270 first-index answers, 2 that fit no rule."""
    entry = _entry(*[_record("int32", ["first"]) for _ in range(270)], _record("int32", []), _record("int32", []),
                   _record("float", ["first"]))
    int32, = (t for t in entry["types"] if t["type"] == "int32")
    assert (int32["policy"], int32["answers"], int32["exceptions"], int32["coherent"]) == (["first"], 272, 2, False)
    assert (entry["coherent"], entry["warnings"], entry["flagged"]) == (False, ["exceptions"], {"exceptions": 2})
    assert [(e["type"], e["fits"]) for e in entry["examples"][:2]] == [("int32", []), ("int32", [])]
    assert type_policy(Translator("en"), int32) == "first minimum, 270 of 272; 2 answer(s) fit no rule"
    assert all(t["coherent"] and t["exceptions"] == 0 for t in entry["types"] if t["type"] == "float")


def test_answers_following_two_listed_rules_where_they_differ_are_incoherent() -> None:
    entry = _entry(_record("float", ["nan-is-min"]), _record("float", ["nan-ignored"]), _record("float", []))
    assert (entry["policy"], entry["coherent"], entry["warnings"]) == ([], False, ["incoherent"])


def test_answers_differing_between_processes_are_told_apart_from_those_differing_within_one() -> None:
    across = _entry(_record("float", ["nan-is-min"]), _record("float", [], deterministic=False))
    assert across["warnings"] == ["differs-between-processes"] and not across["coherent"]
    assert (across["flagged"], across["asked_again"]) == ({"differs-between-processes": 1}, ANOTHER_PROCESS)
    within = _entry(_record("float", ["nan-is-min"], again=SAME_PROCESS),
                    _record("float", [], deterministic=False, again=SAME_PROCESS))
    assert within["warnings"] == ["nondeterministic"] and within["asked_again"] == SAME_PROCESS


# --- whole runs ---------------------------------------------------------------------------------------

@pytest.mark.e2e
def test_per_process_random_answers_on_an_empty_axis_are_flagged_across_processes_and_conformant() -> None:
    raw, document = _document("zoo.correct:random_on_empty_axis", "12,13", "float,int32", "process")
    assert verdicts(raw.results, (12, 13)) == {12: CONFORMANT, 13: CONFORMANT}
    for version in (12, 13):
        empty_axis = _topic(document, version, "C15")
        assert {"differs-between-processes", "not-an-index"} <= set(empty_axis["warnings"]), empty_axis["warnings"]
        assert empty_axis["flagged"]["differs-between-processes"] > 0 and not empty_axis["coherent"]
        assert empty_axis["asked_again"] == ANOTHER_PROCESS and "nondeterministic" not in empty_axis["warnings"]
        assert any(e["deterministic"] is False and e["again"] == ANOTHER_PROCESS for e in empty_axis["examples"])


def test_in_one_process_the_same_answers_look_stable_and_the_report_says_why() -> None:
    _, document = _document("zoo.correct:random_on_empty_axis", "13", "float,int32")
    empty_axis = _topic(document, 13, "C15")
    assert empty_axis["asked_again"] == SAME_PROCESS and empty_axis["warnings"] == ["not-an-index"]
    assert empty_axis["policy"] == ["returned"] and empty_axis["coherent"]


def test_a_sentinel_on_an_empty_axis_is_not_an_index() -> None:
    raw, document = _document(f"{PLUGINS}:minus_one_on_empty_axis", "13", "float,uint8", "process")
    empty_axis = _topic(document, 13, "C15")
    assert empty_axis["warnings"] == ["not-an-index"] and empty_axis["flagged"]["not-an-index"] > 0
    assert empty_axis["policy"] == ["returned"] and empty_axis["coherent"]  # the same -1 in every process
    assert all(r.outcome in ("pass", "observed") for r in raw.results if r.kind == "semantic")


def test_a_shape_no_keepdims_gives_is_flagged() -> None:
    _, document = _document(f"{PLUGINS}:input_shaped_for_odd_keepdims", "13", "float")
    keepdims = _topic(document, 13, "C17")
    assert "wrong-shape" in keepdims["warnings"] and keepdims["flagged"]["wrong-shape"] > 0


def test_two_nan_rules_chosen_by_the_input_are_incoherent() -> None:
    _, document = _document(f"{PLUGINS}:nan_rule_by_length", "13", "float")
    nan = _topic(document, 13, "C14")
    assert "incoherent" in nan["warnings"] and not nan["coherent"]


def test_tie_answers_with_exceptions_are_not_coherent_and_the_terminal_shows_them() -> None:
    raw, document = _document(f"{PLUGINS}:middle_of_three_tied", "11", "int32")
    topic = spec.load(11).clause_for_check("ties").id
    ties = _topic(document, 11, topic)
    exceptions = sum(1 for r in raw.census if r.topic == topic and r.status == "returned" and not r.fits)
    int32, = ties["types"]
    assert exceptions > 0 and (int32["policy"], int32["exceptions"], int32["coherent"]) == (["first"], exceptions,
                                                                                           False)
    assert not ties["coherent"] and "exceptions" in ties["warnings"] and "incoherent" not in ties["warnings"]
    assert not ties["examples"][0]["fits"]
    lines = summary_lines(raw, {}, document)
    shown = f"int32: first minimum, {int32['answers'] - exceptions} of {int32['answers']}; {exceptions} answer(s) fit"
    assert any(line.strip().startswith(shown) and "e.g. [" in line for line in lines), lines
    assert shown.split(": ", 1)[1] in render_report(document)


def test_an_observation_whose_input_was_not_kept_is_no_example() -> None:
    """A large census input is recorded without its tensor: shown as an example it would read
    "None -> None"."""
    kept = CensusRecord(13, "float", "C14", to_tensor(np.array([np.nan], np.float32)), {},
                        to_tensor(np.array([1])), [])
    large = CensusRecord(13, "float", "C14", None, {"axis": 0}, None, [], flags=["not-an-index"])
    examples = census_examples([large, kept], {"float"})
    assert examples == [kept]


def test_the_examples_do_not_depend_on_the_order_records_arrive_in() -> None:
    """Test processes hand their records over in the order they finish, which differs from run
    to run: the same records must show the same examples."""
    rng = np.random.default_rng(0)
    records = [CensusRecord(13, type_name, "C14", to_tensor(rng.random(2).astype(np.float32)), {"axis": axis},
                            to_tensor(np.array([0])), ["first"], form=form)
               for type_name in ("float", "double") for axis in (0, -1) for form in ("symbolic", "static")]
    shown = _entry(*records)["examples"]
    assert len(shown) < len(records)
    for seed in range(5):
        shuffled = list(records)
        random.Random(seed).shuffle(shuffled)
        assert _entry(*shuffled)["examples"] == shown


def test_tie_answers_that_all_follow_one_policy_are_coherent() -> None:
    _, document = _document("tests/impls/plugin_good.py:argmin", "11", "int32")
    ties = _topic(document, 11, spec.load(11).clause_for_check("ties").id)
    assert (ties["policy"], ties["coherent"], ties["warnings"]) == (["first"], True, [])
    assert ties["types"][0]["exceptions"] == 0 and ties["types"][0]["answers"] > 0


def test_a_deterministic_nan_rule_is_not_incoherent() -> None:
    _, document = _document("zoo.correct:sticky_first_nan", "13", "float")
    nan = _topic(document, 13, "C14")
    assert (nan["policy"], nan["coherent"], nan["warnings"]) == (["nan-first-only"], True, [])


def test_a_nan_rule_that_a_listed_one_covers_only_in_part_has_exceptions() -> None:
    """min_then_match answers 0 for any slice holding NaN: NaN at index 0 wins (as nan-first-only
    says), NaN elsewhere gives 0 too, which no listed rule gives."""
    _, document = _document("zoo.correct:min_then_match", "13", "float")
    nan = _topic(document, 13, "C14")
    assert "nan-first-only" in nan["policy"] and nan["flagged"]["exceptions"] > 0 and not nan["coherent"]
    assert "exceptions" in nan["warnings"] and "incoherent" not in nan["warnings"]


@pytest.mark.e2e
def test_onnxruntimes_nan_and_empty_input_rules_at_argmin_11_are_named_not_incoherent(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "suites", "--impl", "onnxruntime", "--versions", "11",
                             "--profile", "quick", "--seed", "3", "--report-dir", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode in (0, 1), result.stderr[-2000:]
    document = json.loads((tmp_path / "report.json").read_text("utf-8"))
    for topic, policy in (("C14", "nan-first-only"), ("C16", census.RAISES_ON_EMPTY_AXIS)):
        entry = _topic(document, 11, topic)
        assert entry["coherent"] and "incoherent" not in entry["warnings"], entry["warnings"]
        assert entry["policy"] == [policy] and entry["asked_again"] == ANOTHER_PROCESS
        assert not any(t["policy"] == [NO_LISTED_POLICY] for t in entry["types"])


def test_an_implementation_that_loads_in_one_process_only_is_asked_again_in_that_process() -> None:
    _, document = _document("tests/impls/plugin_exclusive.py:argmin", "13", "float,uint8", "process")
    assert {c["asked_again"] for c in document["census"] if c["asked_again"]} == {SAME_PROCESS}
    assert not any("differs-between-processes" in c["warnings"] for c in document["census"])
