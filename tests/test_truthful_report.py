"""A truthful certificate, proven on zoo entries: no bug masks another, counterexamples are the
smallest, the census keeps every status apart and reads policies per type, clauses say where
they were never exercised, and every report.json validates against its schema."""

from __future__ import annotations

import json
import time
from functools import cache
from pathlib import Path

import jsonschema
import pytest

from engine.config.options import run_info, validate
from engine.judging.run import run_all
from generators import profiles
from reports import aggregate
from results import RawRun

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "reports" / "document" / "report.schema.json")
                    .read_text("utf-8"))


@cache
def report(impl: str, versions: str, dtypes: str, isolation: str = "none", claim: str = "implemented") \
        -> tuple[RawRun, dict]:
    """The raw run and the report document of a quick run (cached: several tests read one run)."""
    profiles.register()
    settings = validate({"impl": impl, "profile": "quick", "seed": "1", "isolation": isolation, "timeout": "2",
                         "versions": versions, "dtypes": dtypes, "claim": claim})
    started = time.time()
    session = run_all(settings)
    raw = RawRun(run_info(settings, started), {"impl": impl}, session.results, session.census)
    document = aggregate(raw)
    jsonschema.validate(document, SCHEMA)
    return raw, document


def census_of(document: dict, version: int, topic: str) -> list[dict]:
    return [c for c in document["census"] if c["version"] == version and c["topic"] == topic]


def standing(document: dict) -> dict[int, dict]:
    return {v["version"]: v for v in document["versions"]}


def verdicts(document: dict) -> dict[int, str]:
    return {v["version"]: v["verdict"] for v in document["versions"]}


def test_two_independent_bugs_are_both_reported_each_with_its_counterexample() -> None:
    _, document = report("zoo.broken_values:int32_answers_and_doubles_as_float", "1,11,12,13", "double")
    for version in (1, 11, 12, 13):
        assert {"C2", "C5"} <= set(standing(document)[version]["failing_clauses"]), version
        shown = {(f["clause"], f["problem"]) for f in document["failures"] if f["version"] == version}
        assert {("C2", "dtype"), ("C5", "not-a-minimum")} <= shown, (version, shown)
    minimum = next(f for f in document["failures"] if f["clause"] == "C5")
    assert len(minimum["counterexample"]["input"]["values"]) == 2  # e.g. [1.0, 0.9999999999999999]


@pytest.mark.parametrize("type_name", ["int64", "uint32", "uint64"])
def test_a_narrowing_bug_gets_a_counterexample_of_at_most_two_elements_at_every_version(type_name: str) -> None:
    _, document = report("zoo.broken_values:wide_ints_narrowed_to_int32", "1,11,12,13", type_name)
    shown = [f for f in document["failures"] if f["clause"] == "C5"]
    assert {f["version"] for f in shown} == {1, 11, 12, 13}
    for failure in shown:
        ce = failure["counterexample"]
        assert len(ce["input"]["values"]) <= 2 and ce["minimized"], (failure["version"], ce["input"])


def test_types_refused_outright_are_scope_and_stay_out_of_the_census_and_the_output_clauses() -> None:
    """Refusing int16 and uint16 for every input is a statement of scope: CONFORMANT for the other
    types, the two named as not implemented, never a failure card."""
    _, document = report("zoo.broken_rejects:two_kernels_missing_zeros_on_empty", "1,13", "float,int16,uint16,int8")
    assert verdicts(document) == {1: "conformant", 13: "conformant"}
    for version in (1, 13):
        scope = standing(document)[version]["scope"]
        assert scope["not_implemented"] == ["uint16", "int16"] and set(scope["implemented"]) == {"float", "int8"}
        assert not standing(document)[version]["causes"]
        assert {c["role"] for c in document["cards"]} == {"scope"}
        empty_axis, = census_of(document, version, "C15")
        assert set(empty_axis["refused_types"]) == {"int16", "uint16"}
        assert empty_axis["coherent"] and empty_axis["policy"] == ["returned"], empty_axis
        assert {t["type"] for t in empty_axis["types"]} == {"float", "int8"}
        rows = {c["id"]: c for c in document["clauses"] if c["version"] == version}
        for clause in ("C2", "C3", "C4", "C5"):
            assert set(rows[clause]["not_exercised"]) == {"int16", "uint16"}, rows[clause]
        assert rows["C1"]["not_exercised"] == []


def test_claiming_all_types_makes_a_type_not_implemented_a_failure() -> None:
    _, document = report("zoo.broken_rejects:two_kernels_missing_zeros_on_empty", "13", "float,int16", claim="all")
    assert verdicts(document) == {13: "non-conformant"}
    entry = standing(document)[13]
    assert entry["failing_clauses"] == ["C1"] and entry["scope"]["claim"] == "all"
    assert [t["type"] for t in entry["causes"][0]["types"]] == ["int16"]


def test_computing_every_invalid_model_is_lenient_and_conformant() -> None:
    """bool inputs computed, undeclared attributes ignored, rank 0 answered: the ONNX text never
    makes refusing an invalid model an implementation's duty, so the headline stays CONFORMANT and
    the strictness says lenient, naming what it computes."""
    _, document = report("zoo.broken_rejects:computes_invalid_models", "1,11,13", "float,int8")
    assert verdicts(document) == {1: "conformant", 11: "conformant", 13: "conformant"}
    for version, expected in ((1, {"C12", "C13"}), (11, {"C11", "C12", "C13"}), (13, {"C11", "C12", "C13"})):
        strictness = standing(document)[version]["strictness"]
        assert strictness["level"] == "lenient"
        assert {e["clause"] for e in strictness["clauses"] if e["computed"]} == expected, strictness
        assert not standing(document)[version]["causes"]
    assert {c["role"] for c in document["cards"]} == {"strictness"}


def test_refusing_a_type_only_for_some_valid_inputs_is_a_failure() -> None:
    _, document = report("zoo.broken_rejects:float16_refused_from_rank_3", "13", "float,float16")
    assert verdicts(document) == {13: "non-conformant"}
    entry = standing(document)[13]
    assert entry["failing_clauses"] == ["C1"] and entry["scope"]["not_implemented"] == []
    assert entry["causes"][0]["types"][0]["type"] == "float16"


@pytest.mark.e2e
def test_aborting_on_an_axis_out_of_range_is_non_conformant() -> None:
    """Refusing an invalid model is strictness, but one that takes the process down fails the
    headline: the suite's own position."""
    _, document = report("zoo.faulty:abort_on_axis_out_of_range", "13", "float", isolation="process")
    assert verdicts(document) == {13: "non-conformant"}
    entry = standing(document)[13]
    assert [(c["clause"], c["outcome"]) for c in entry["causes"]] == [("C10", "crash")]


@pytest.mark.e2e
def test_aborting_on_v1_negative_axes_is_a_crash_in_the_census_and_non_conformant() -> None:
    """ArgMin-1 leaves negative axes undefined, but a crash on any input fails the headline."""
    _, document = report("zoo.faulty:abort_on_v1_negative_axis", "1", "float,int8", isolation="process")
    assert verdicts(document) == {1: "non-conformant"}
    crashed = [c for c in census_of(document, 1, "C19") if c["statuses"]["crash"]]
    assert crashed and all(c["statuses"]["raised"] == 0 and "crashes" in c["warnings"] for c in crashed)
    cause, = standing(document)[1]["causes"]
    assert cause["census"] and cause["clause"] == "C19" and cause["outcome"] == "crash"


def test_v1_negative_axes_within_the_rank_are_apart_from_those_below_it() -> None:
    _, document = report("zoo.correct:numpy_argmin", "1", "float,int8,uint8,int32")
    groups = {c["group"]: c for c in census_of(document, 1, "C19")}
    assert "counts-from-end" in groups["axis in [-r, -1]"]["policy"]
    assert groups["axis below -r"]["policy"] == ["raised"] and groups["axis below -r"]["coherent"]


def test_a_wrong_output_type_does_not_hide_the_nan_policy() -> None:
    _, document = report("zoo.broken_rejects:int32_indices", "13", "float")
    nan, = census_of(document, 13, "C14")
    assert nan["coherent"] and "nan-is-min" in nan["policy"]


def test_undefined_ties_show_their_census_in_the_clause_table() -> None:
    _, document = report("zoo.correct:python_loop", "1", "int32")
    ties, = (c for c in document["clauses"] if c["version"] == 1 and c["id"] == "C6")
    assert ties["census"]["records"] > 0 and ties["census"]["policy"] == ["last"]


@pytest.mark.parametrize(("impl", "isolation"), [
    pytest.param("zoo.faulty:exit_on_long_axis", "process", marks=pytest.mark.e2e),  # crashes
    pytest.param("zoo.faulty:hang_on_rank4", "process", marks=pytest.mark.e2e),  # hangs
    ("zoo.broken_rejects:missing_unsigned_kernels", "none"),  # refuses types
    ("zoo.broken_values:int64_via_float64", "none"),  # wrong values
    ("zoo.faulty:string_answer", "none"),  # garbage answers
    ("zoo.correct:random_on_empty_axis", "none"),  # undefined garbage
])
def test_every_kind_of_implementation_gets_a_report_json_that_validates(impl: str, isolation: str) -> None:
    _, document = report(impl, "13", "float,int64,uint16", isolation)  # validates inside
    assert document["versions"]
