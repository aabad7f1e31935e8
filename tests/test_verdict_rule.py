"""The verdict rule (results.verdict) on hand-made records: what makes the headline NON-CONFORMANT,
what is scope, what is strictness, and which failures share a root cause (results.causes)."""

from __future__ import annotations

import numpy as np

from results import CaseResult, CensusRecord, Counterexample, Tensor
from results.causes import own_causes, signature, special_values
from results.verdict import CONFORMANT, NON_CONFORMANT, standing

FLT_MAX = str(float(np.finfo(np.float32).max))


def case(outcome: str, kind: str = "semantic", type_name: str = "float", clause: str | None = None,
         problem: str | None = None, actual: object = None, values: list[str] | None = None,
         version: int = 13) -> CaseResult:
    ce = None
    if actual is not None or values is not None:
        tensor = Tensor(type_name, [len(values or ["0"])], values or ["0"])
        ce = Counterexample(tensor, {}, None, actual, problem or outcome, "")
    return CaseResult(version=version, type_name=type_name, suite="property", kind=kind, outcome=outcome,
                      clauses=[clause] if clause else [], clause=clause, problem=problem or outcome,
                      counterexample=ce)


def passes(type_name: str = "float", kind: str = "semantic", clause: str | None = None) -> CaseResult:
    return case("pass", kind, type_name, clause)


def test_only_wrong_answers_on_implemented_types_and_crashes_fail_the_headline() -> None:
    computed_invalid = case("missing-rejection", "rejection", "bool", "C12")
    assert standing([passes(), computed_invalid], 13).verdict == CONFORMANT
    assert standing([passes(), case("fail", clause="C5")], 13).verdict == NON_CONFORMANT
    assert standing([passes(), case("crash", "rejection", "float", "C10")], 13).verdict == NON_CONFORMANT
    census_crash = CensusRecord(13, "float", "C14", None, {}, "crash: SIGSEGV", [], status="crash")
    assert standing([passes()], 13, [census_crash]).verdict == NON_CONFORMANT
    assert standing([passes()], 13, [census_crash]).clauses == ("C14",)


def test_a_type_refused_for_every_valid_input_is_scope_and_for_some_a_failure() -> None:
    refused = [case("unsupported", type_name="int16", clause="C1") for _ in range(3)]
    whole = standing([passes(), *refused], 13)
    assert whole.verdict == CONFORMANT and whole.scope.not_implemented == ("int16",)
    assert "int16" not in whole.scope.implemented and "float" in whole.scope.implemented
    partly = standing([passes(), *refused, passes("int16")], 13)
    assert partly.verdict == NON_CONFORMANT and partly.clauses == ("C1",) and not partly.scope.not_implemented
    claimed_all = standing([passes(), *refused], 13, claim="all")
    assert claimed_all.verdict == NON_CONFORMANT


def test_a_run_with_nothing_implemented_is_not_conformant() -> None:
    result = standing([case("unsupported", clause="C1")], 13, type_names=["float"])
    assert result.verdict == NON_CONFORMANT and result.reason == "reason-nothing-implemented"


def test_strictness_names_what_is_computed_and_whether_every_type_was() -> None:
    results = [passes(), case("missing-rejection", "rejection", "bool", "C12"),
               case("missing-rejection", "rejection", "complex64", "C12"),
               passes("float", "rejection", "C10"), case("missing-rejection", "rejection", "float", "C13")]
    strictness = standing(results, 13).strictness
    assert strictness.level == "lenient"
    by_clause = {e.clause: e for e in strictness.clauses}
    assert by_clause["C10"].computed == 0 and by_clause["C10"].refused == 1
    assert by_clause["C12"].computed_types == ("bool", "complex64") and by_clause["C12"].every_type
    assert standing([passes(), passes("bool", "rejection", "C12")], 13).strictness.level == "strict"
    assert standing([passes()], 13).strictness.level == "untested"


def test_refusing_invalid_models_is_not_strict_where_valid_ones_were_refused_too() -> None:
    """A plug-in that raises on everything refuses every invalid model too; that says nothing of
    strictness. Where only some types refuse every valid input, their refusals do not count."""
    raises = [case("error", type_name=t, clause="C1") for t in ("float", "int32")]
    invalid = [passes("bool", "rejection", "C12"), passes("float", "rejection", "C10")]
    everything = standing([*raises, *invalid], 13)
    assert everything.verdict == NON_CONFORMANT and everything.strictness.level == "refuses-valid"
    one_type = standing([raises[1], passes(), passes("int32", "rejection", "C10")], 13).strictness
    assert one_type.level == "refuses-valid"
    counted = standing([raises[1], passes(), *invalid], 13).strictness
    assert counted.level == "strict" and {e.clause for e in counted.clauses} == {"C10", "C12"}


def test_messages_that_differ_only_in_numbers_sizes_and_names_are_one_cause() -> None:
    a = "error: 'func.func' op exceeded stack allocation limit of 32768 bytes for function. Got 65536 bytes"
    b = "error: 'main_dispatch_0' op exceeded stack allocation limit of 32768 bytes for function. Got 131072 bytes"
    assert signature(a) == signature(b)
    assert signature("tensor<1x2xf32> for float16") == signature("tensor<4x8xi64> for uint64")
    assert signature("invalid model") != signature("out of memory")


def test_a_failure_with_the_same_error_as_a_lower_clause_goes_with_it() -> None:
    """onnxruntime's ArgMin-1 float16: every input fails with one INVALID_GRAPH error, the empty
    ones (C9) included: C1 is the cause, C9 is not listed."""
    error = "raised: INVALID_GRAPH: Mismatched attribute type in 'InsertedPrecisionFreeCast_data'"
    c1 = case("error", type_name="float16", clause="C1", actual=error)
    c9 = case("error", type_name="float16", clause="C9", actual=error.replace("data", "data_2"), values=[])
    own, same = own_causes([c1, c9])
    assert own == [True, False] and same == {1: "C1"}
    result = standing([passes(), c1, c9], 13)
    assert result.clauses == ("C1",)


def test_wrong_answers_needing_the_same_special_value_go_with_the_lower_clause() -> None:
    """tract: [inf, FLT_MAX] -> 0 (C5) and [inf, inf] with select_last_index=1 -> 0 (C6) are one
    infinity bug; a tie bug on ordinary values is a cause of its own."""
    c5 = case("fail", clause="C5", problem="not-a-minimum", values=["inf", FLT_MAX], actual=Tensor("int64", [], ["0"]))
    c6 = case("fail", clause="C6", problem="wrong-tie", values=["inf", "inf"], actual=Tensor("int64", [], ["0"]))
    plain_tie = case("fail", clause="C6", problem="wrong-tie", values=["1.0", "1.0"], actual=Tensor("int64", [], ["1"]))
    assert special_values(c5.counterexample.input) == {"+inf", "max"}
    assert own_causes([c5, c6])[0] == [True, False]
    assert own_causes([c5, plain_tie])[0] == [True, True]
    other_type = case("fail", type_name="double", clause="C6", problem="wrong-tie", values=["inf", "inf"],
                      actual=Tensor("int64", [], ["0"]))
    assert own_causes([c5, other_type])[0] == [True, True]  # a cause is shared within one type only


def test_answers_on_inputs_with_no_element_do_not_decide_the_scope() -> None:
    """tract answers an empty uint32 input from its shape in the static form, though it has no
    uint32 kernel: uint32 is still not implemented."""
    refused = [case("unsupported", type_name="uint32", clause="C1") for _ in range(3)]
    empty = case("pass", type_name="uint32")
    empty.tags.append("zero-size:yes")
    result = standing([passes(), *refused, empty], 13)
    assert result.scope.not_implemented == ("uint32",) and result.verdict == CONFORMANT


def test_a_census_flag_whose_odd_answers_need_a_failures_special_value_goes_with_it() -> None:
    """tract's NaN answers read as incoherent because `[nan, inf]` gives 0: its infinity bug (C5)."""
    from reports.document.aggregate import _census_cause

    def tensor(values: list[str]) -> dict:
        return {"type": "float", "shape": [len(values)], "values": values}

    entry = {"version": 13, "examples": [{"type": "float", "input": tensor(["nan", "inf"])}]}
    failure = {"version": 13, "type": "float", "role": "headline", "outcome": "fail", "clause": "C5",
               "counterexample": {"input": tensor(["inf", FLT_MAX])}}
    assert _census_cause(entry, [failure]) == "C5"
    assert _census_cause(entry, [{**failure, "counterexample": {"input": tensor(["1.0", "0.5"])}}]) is None
    assert _census_cause(entry, [{**failure, "type": "double"}]) is None
