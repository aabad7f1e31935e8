"""The oracle (spec.oracle) checked against three references: ONNX's own backend cases,
onnx.reference's ReferenceEvaluator and a pure-Python scan; plus its classification of invalid
and undefined inputs, its verdicts on wrong answers, and what onnx.reference does where it and
the spec part ways (recorded, so a change in onnx shows up here)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import ml_dtypes
import numpy as np
import pytest

import spec
import spec.oracle
from engine.asking.protocol import typeless
from generators.onnx_cases import OnnxCase, onnx_cases
from spec.oracle import argmin, classify, expect, verify
from tests.oracle_references import (
    generated_inputs,
    long_axis_inputs,
    reference_evaluator,
    scan_argmin,
)

VERSIONS = spec.versions()
GENERATED_PER_VERSION = 2500
SEED = 20261129


def _describe(vspec: spec.VersionSpec, data: np.ndarray, attributes: Mapping[str, int]) -> str:
    values = data.ravel()[:40].tolist()
    more = "..." if data.size > 40 else ""
    return f"ArgMin-{vspec.version} {data.dtype}{list(data.shape)} {dict(attributes)} data={values}{more}"


def _check_against_references(vspec: spec.VersionSpec, data: np.ndarray,
                              attributes: Mapping[str, int]) -> tuple[str, bool]:
    """Oracle vs scan (exact, both tie rules), oracle's verdict on each scan answer and on
    onnx.reference's answer. Returns the tie rule and whether the first and last minima differ
    somewhere, for the caller's coverage count."""
    context = _describe(vspec, data, attributes)
    expectation = expect(vspec, data, attributes)
    assert expectation.kind == "semantic", context
    effective = vspec.effective(attributes)
    keepdims = bool(effective["keepdims"])
    scanned = {rule: scan_argmin(data, effective["axis"], keepdims=keepdims, last=rule == "last")
               for rule in ("first", "last")}
    for rule, answer in scanned.items():
        computed = getattr(expectation, rule)
        if computed is not None:
            assert computed.dtype == np.int64, context
            np.testing.assert_array_equal(computed, answer, err_msg=f"{rule} minimum: {context}")
        violation = verify(vspec, expectation, data, answer)
        if expectation.tie_rule in ("any", rule):
            assert violation is None, f"{violation}: {context}"
        elif not np.array_equal(answer, scanned[expectation.tie_rule]):
            assert violation is not None and (violation.clause.id, violation.problem) == ("C6", "wrong-tie"), context
    observed = reference_evaluator(vspec.version, data, attributes)
    assert verify(vspec, expectation, data, observed) is None, f"onnx.reference gave {observed}: {context}"
    return expectation.tie_rule, not np.array_equal(scanned["first"], scanned["last"])


# --- (a) ONNX's own backend cases ----------------------------------------------------------------

@pytest.mark.parametrize(("case", "version"), [
    pytest.param(case, version, id=f"{case.name}-v{version}") for case in onnx_cases() for version in VERSIONS
])
def test_onnx_backend_case(case: OnnxCase, version: int) -> None:
    vspec = spec.load(version)
    kind, clauses = classify(vspec, case.data, case.attributes)
    ids = tuple(c.id for c in clauses)
    if any(name not in vspec.attributes for name in case.attributes):
        assert (kind, ids) == ("rejection", ("C13",)), "select_last_index before v12 must be rejected"
        return
    if version == 1 and case.attributes.get("axis", 0) < 0:
        assert (kind, ids) == ("undefined", ("C19",)), "ArgMin-1 does not define negative axes"
        return
    assert kind == "semantic"
    expectation = expect(vspec, case.data, case.attributes)
    violation = verify(vspec, expectation, case.data, case.output)
    assert violation is None, violation
    if expectation.required is not None:
        np.testing.assert_array_equal(expectation.required, case.output)
    else:  # ties undefined: onnx's answer (numpy's first minimum) must still equal the oracle's first
        np.testing.assert_array_equal(expectation.first, case.output)


def test_backend_cases_are_all_there() -> None:
    cases = onnx_cases()
    assert len(cases) == 16 and len({c.name for c in cases}) == 16
    assert sum("select_last_index" in c.attributes for c in cases) == 8


# --- (b) onnx.reference and (c) the pure-Python scan, on generated inputs ------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_generated_inputs_agree_with_references(version: int) -> None:
    vspec = spec.load(version)
    seen: Counter[str] = Counter()
    for data, attributes in generated_inputs(vspec, GENERATED_PER_VERSION, SEED):
        kind, _ = classify(vspec, data, attributes)
        seen[kind] += 1
        if kind != "semantic":
            continue
        tie_rule, ties = _check_against_references(vspec, data, attributes)
        seen["tie-rule:" + tie_rule] += 1
        seen["ties"] += ties
        seen["type:" + spec.type_of(data.dtype).name] += 1
        seen[f"rank:{data.ndim}"] += 1
        seen["zero-size"] += data.size == 0
        seen["negative-axis"] += vspec.effective(attributes)["axis"] < 0
        seen[f"keepdims:{attributes.get('keepdims', 'omitted')}"] += 1
    # The generator must reach what it claims to, or this test proves little.
    assert seen["semantic"] >= 0.9 * GENERATED_PER_VERSION, seen
    assert seen["ties"] >= 0.3 * seen["semantic"], seen
    assert all(seen[f"type:{name}"] >= 20 for name in vspec.type_names), seen
    assert seen["rank:8"] >= 10 and seen["keepdims:0"] >= 50 and seen["keepdims:omitted"] >= 50, seen
    assert (seen["zero-size"] >= 5) == (version != 11), seen  # at v11 empty inputs are undefined (C16)
    assert (seen["negative-axis"] >= 50) == (version != 1), seen
    expected_rules = {"tie-rule:any"} if "select_last_index" not in vspec.attributes else {
        "tie-rule:first", "tie-rule:last"}
    assert {k for k in seen if k.startswith("tie-rule:")} == expected_rules, seen


@pytest.mark.parametrize("version", VERSIONS)
def test_long_axes_agree_with_references(version: int) -> None:
    vspec = spec.load(version)
    last_index = {"select_last_index": 1} if "select_last_index" in vspec.attributes else {}
    for data, attributes in long_axis_inputs(vspec):
        _check_against_references(vspec, data, attributes)
        if last_index:
            _check_against_references(vspec, data, {**attributes, **last_index})


@pytest.mark.parametrize("block", [7, 64, 1 << 18])
@pytest.mark.parametrize("shape", [(37, 10), (4, 5, 9), (3, 100), (0, 10)])
def test_last_minimum_across_blocks(block: int, shape: tuple[int, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """The last-minimum path reverses the innermost axis block by block; block edges, partial
    blocks and rows longer than a block must not change the answer."""
    monkeypatch.setattr(spec.oracle, "_BLOCK", block)
    rng = np.random.default_rng(block + len(shape))
    for dtype in (np.int16, np.float16):
        data = rng.integers(0, 3, size=shape).astype(dtype)
        for axis in (a for a in range(data.ndim) if data.shape[a]):  # an empty reduced axis is undefined
            expected = scan_argmin(data, axis, keepdims=False, last=True)
            np.testing.assert_array_equal(argmin(data, axis, keepdims=False, last=True), expected)
    transposed = np.asarray(rng.integers(0, 3, size=shape[::-1])).T  # innermost axis not contiguous
    np.testing.assert_array_equal(argmin(transposed, transposed.ndim - 1, keepdims=False, last=True),
                                  scan_argmin(transposed, -1, keepdims=False, last=True))


# --- classification of invalid and undefined inputs -----------------------------------------------

F32 = np.float32
FAMILIES = [
    # (name, versions, data, attributes, kind, clause id that must be among the deciding clauses)
    ("nan", VERSIONS, np.array([1.0, np.nan], F32), {}, "undefined", "C14"),
    ("empty-reduced-axis", VERSIONS, np.zeros((2, 0), F32), {"axis": 1}, "undefined", "C15"),
    ("empty-other-axis-v11", (11,), np.zeros((0, 3), F32), {"axis": 1}, "undefined", "C16"),
    ("keepdims-2", VERSIONS, np.ones(3, F32), {"keepdims": 2}, "undefined", "C17"),
    ("select-last-index-2", (12, 13), np.ones(3, F32), {"select_last_index": 2}, "undefined", "C18"),
    ("select-last-index-before-12", (1, 11), np.ones(3, F32), {"select_last_index": 0}, "rejection", "C13"),
    ("any-undeclared-name", VERSIONS, np.ones(3, F32), {"keep_dims": 1}, "rejection", "C13"),
    ("undeclared-beside-declared", VERSIONS, np.ones(3, F32), {"axis": 0, "zq": -7}, "rejection", "C13"),
    ("negative-axis-v1", (1,), np.ones((2, 3), F32), {"axis": -1}, "undefined", "C19"),
    ("rank-0-v1", (1,), np.array(1.0, F32), {}, "undefined", "C20"),
    ("rank-0", (11, 12, 13), np.array(1.0, F32), {}, "rejection", "C11"),
    ("axis-r", VERSIONS, np.ones((2, 3), F32), {"axis": 2}, "rejection", "C10"),
    ("axis-minus-r-minus-1", (11, 12, 13), np.ones((2, 3), F32), {"axis": -3}, "rejection", "C10"),
]


@pytest.mark.parametrize(("name", "version", "data", "attributes", "kind", "clause_id"), [
    pytest.param(name, version, data, attributes, kind, clause_id, id=f"{name}-v{version}")
    for name, numbers, data, attributes, kind, clause_id in FAMILIES for version in numbers
])
def test_classify_invalid_and_undefined(name: str, version: int, data: np.ndarray, attributes: dict,
                                        kind: str, clause_id: str) -> None:
    vspec = spec.load(version)
    found_kind, clauses = classify(vspec, data, attributes)
    assert (found_kind, clause_id in {c.id for c in clauses}) == (kind, True), (found_kind, clauses)
    assert all(c.kind == kind for c in clauses)
    assert expect(vspec, data, attributes).kind == kind
    assert expect(vspec, data, attributes).first is None, "no answer is invented for invalid input"


@pytest.mark.parametrize(("version", "data", "attributes", "kind", "clause_id"), [
    # A node the version does not admit is rejected even when its data is undefined territory ...
    (1, np.array([[1.0, 0.5]], F32), {"axis": -1, "select_last_index": 1}, "rejection", "C13"),
    (11, np.zeros((0, 2), F32), {"select_last_index": 0}, "rejection", "C13"),
    (13, np.array([np.nan, 1.0], ml_dtypes.float8_e4m3fn), {}, "rejection", "C12"),
    (12, np.zeros((2, 0), ml_dtypes.bfloat16), {"axis": 1}, "rejection", "C12"),
    # ... while an undefined input stays undefined when a data-dependent rejection also applies.
    (1, np.array(1.0, F32), {}, "undefined", "C20"),
    (13, np.array([[np.nan]], F32), {"axis": 2}, "undefined", "C14"),
])
def test_classify_precedence(version: int, data: np.ndarray, attributes: dict, kind: str, clause_id: str) -> None:
    found_kind, clauses = classify(spec.load(version), data, attributes)
    assert (found_kind, clause_id in {c.id for c in clauses}) == (kind, True), (found_kind, clauses)


@pytest.mark.parametrize(("version", "data", "attributes"), [
    (1, np.zeros((0, 3), F32), {"axis": 1}),  # zero-size non-reduced axis: semantic except at v11
    (12, np.zeros((0, 3), F32), {"axis": 1}),
    (13, np.zeros((0, 3), F32), {"axis": 1, "keepdims": 0}),
    (11, np.ones((2, 3), F32), {"axis": -2}),  # negative axes are valid from v11
    (1, np.ones((2, 3), F32), {"axis": 1}),
])
def test_classify_valid_edges(version: int, data: np.ndarray, attributes: dict) -> None:
    vspec = spec.load(version)
    assert classify(vspec, data, attributes) == ("semantic", ())
    expectation = expect(vspec, data, attributes)
    assert verify(vspec, expectation, data, scan_argmin(data, attributes["axis"],
                  keepdims=bool(attributes.get("keepdims", 1)), last=False)) is None


@pytest.mark.parametrize("version", VERSIONS)
def test_types_outside_t_are_rejected(version: int) -> None:
    vspec = spec.load(version)
    outside = spec.outside_types(vspec)
    assert outside, "every version leaves some known type out"
    for tensor_type in outside:
        data = np.array([1, 0], dtype=np.float64).astype(tensor_type.dtype)
        kind, clauses = classify(vspec, data, {})
        assert (kind, tuple(c.id for c in clauses)) == ("rejection", ("C12",)), tensor_type.name


# --- verdicts on wrong answers -----------------------------------------------------------------------

TIES = np.array([[3, 1, 2, 1], [0, 5, 0, 0]], dtype=np.int32)  # first minima [1, 0], last [3, 3]


def _verdict(version: int, attributes: dict, actual: object) -> tuple[str, str] | None:
    vspec = spec.load(version)
    violation = verify(vspec, expect(vspec, TIES, attributes), TIES, actual)
    if violation is None:
        return None
    assert "\n" not in violation.message and violation.message
    return violation.clause.id, violation.problem


@pytest.mark.parametrize(("name", "actual", "verdict"), [
    ("wrong-dtype", np.array([[1], [0]], np.int32), ("C2", "dtype")),
    ("wrong-shape", np.array([1, 0], np.int64), ("C3", "shape")),
    ("index-n", np.array([[4], [0]], np.int64), ("C4", "index-range")),
    ("index-negative", np.array([[1], [-1]], np.int64), ("C4", "index-range")),
    ("not-a-minimum", np.array([[1], [1]], np.int64), ("C5", "not-a-minimum")),
    ("last-instead-of-first", np.array([[3], [3]], np.int64), ("C6", "wrong-tie")),
    ("mixed-ties", np.array([[1], [2]], np.int64), ("C6", "wrong-tie")),
    ("first", np.array([[1], [0]], np.int64), None),
])
def test_verify_at_12(name: str, actual: np.ndarray, verdict: tuple[str, str] | None) -> None:
    assert _verdict(12, {"axis": 1}, actual) == verdict


@pytest.mark.parametrize(("version", "actual", "found"), [
    (12, np.array([[1], [0]], np.int32), [("C2", "dtype")]),  # the required indices, in the wrong type
    (12, np.array([[1], [0]], np.uint64), [("C2", "dtype")]),
    (1, np.array([[3], [3]], np.int64), []),  # ties undefined: the last minima conform as the first do
    (1, np.array([[1], [3]], np.int64), []),  # ... and so does a mix of them
    (12, np.array([[2**64 - 3], [0]], np.uint64), [("C2", "dtype"), ("C4", "index-range")]),
])
def test_every_violation_of_an_answer_whether_or_not_it_equals_a_minimum(version: int, actual: np.ndarray,
                                                                          found: list[tuple[str, str]]) -> None:
    vspec = spec.load(version)
    listed = spec.oracle.violations(vspec, expect(vspec, TIES, {"axis": 1}), TIES, actual)
    assert [(v.clause.id, v.problem) for v in listed] == found


def test_verify_select_last_index_1() -> None:
    assert _verdict(13, {"axis": 1, "select_last_index": 1}, np.array([[3], [3]], np.int64)) is None
    assert _verdict(13, {"axis": 1, "select_last_index": 1}, np.array([[1], [0]], np.int64)) == ("C6", "wrong-tie")
    assert _verdict(13, {"axis": 1, "keepdims": 0}, np.array([1, 0], np.int64)) is None
    assert _verdict(13, {"axis": 1, "keepdims": 0}, np.array([[1], [0]], np.int64)) == ("C3", "shape")


@pytest.mark.parametrize("version", [1, 11])
def test_verify_accepts_any_minimal_index_where_ties_are_undefined(version: int) -> None:
    for row0 in (1, 3):
        for row1 in (0, 2, 3):
            assert _verdict(version, {"axis": 1}, np.array([[row0], [row1]], np.int64)) is None
    assert _verdict(version, {"axis": 1}, np.array([[2], [0]], np.int64)) == ("C5", "not-a-minimum")
    assert _verdict(version, {"axis": 1}, np.array([[1], [1]], np.int64)) == ("C5", "not-a-minimum")


# --- reading answers by value ----------------------------------------------------------------------

EMPTY = np.zeros((0, 3), np.float32)  # reduced over axis 1: an empty (0, 1) result


@pytest.mark.parametrize(("name", "data", "attributes", "answer"), [
    ("list", TIES, {"axis": 1}, [[1], [0]]),
    ("tuple", TIES, {"axis": 1, "keepdims": 0}, (1, 0)),
    ("list-of-numpy-int64", TIES, {"axis": 1, "keepdims": 0}, [np.int64(1), np.int64(0)]),
    ("empty-list", EMPTY, {"axis": 1}, []),
    ("empty-nested-list", np.zeros((2, 0, 3), np.float32), {"axis": 2}, [[], []]),
    ("python-int", TIES[0], {"keepdims": 0}, 1),
    ("numpy-int64-scalar", TIES[0], {"keepdims": 0}, np.int64(1)),
    ("big-endian", TIES, {"axis": 1}, np.array([[1], [0]], ">i8")),
    ("big-endian-empty", EMPTY, {"axis": 1}, np.zeros((0, 1), ">i8")),
])
def test_answers_holding_integer_indices_pass(name: str, data: np.ndarray, attributes: dict, answer: object) -> None:
    vspec = spec.load(12)
    assert verify(vspec, expect(vspec, data, attributes), data, answer, by_value=typeless(answer)) is None


@pytest.mark.parametrize(("name", "data", "attributes", "answer", "verdict"), [
    ("int32-array", TIES, {"axis": 1}, np.array([[1], [0]], np.int32), ("C2", "dtype")),
    ("int32-scalar", TIES[0], {"keepdims": 0}, np.int32(1), ("C2", "dtype")),
    ("big-endian-int32", TIES, {"axis": 1}, np.array([[1], [0]], ">i4"), ("C2", "dtype")),
    ("uint64-array", TIES, {"axis": 1}, np.array([[1], [0]], np.uint64), ("C2", "dtype")),
    ("list-of-numpy-int32", TIES, {"axis": 1, "keepdims": 0}, [np.int32(1), np.int32(0)], ("C2", "dtype")),
    ("float-list", TIES, {"axis": 1}, [[1.0], [0.0]], ("C2", "dtype")),
    ("bool-list", TIES, {"axis": 1}, [[True], [False]], ("C2", "dtype")),
    ("ragged-list", TIES, {"axis": 1}, np.array([[1], [0, 1]], dtype=object), ("C2", "dtype")),
    ("empty-array-of-the-wrong-shape", EMPTY, {"axis": 1}, np.zeros((0,), np.int64), ("C3", "shape")),
    ("empty-list-for-a-full-result", TIES, {"axis": 1}, [], ("C3", "shape")),
    ("flat-list", TIES, {"axis": 1}, [1, 0], ("C3", "shape")),
    ("int-where-a-list-is-due", TIES[0], {}, 1, ("C3", "shape")),
    ("negative-value-by-value", TIES, {"axis": 1}, [[-1], [0]], ("C4", "index-range")),
    ("huge-uint64-scalars", TIES, {"axis": 1}, [[np.uint64(2**64 - 1)], [np.uint64(0)]], ("C2", "dtype")),
    ("beyond-int64-by-value", TIES, {"axis": 1}, [[2**64 - 1], [0]], ("C2", "dtype")),  # numpy reads float64
    ("wrong-value-in-a-list", TIES, {"axis": 1}, [[2], [0]], ("C5", "not-a-minimum")),
])
def test_answers_read_by_value_still_fail_where_they_are_wrong(name: str, data: np.ndarray, attributes: dict,
                                                               answer: object, verdict: tuple[str, str]) -> None:
    vspec = spec.load(12)
    violation = verify(vspec, expect(vspec, data, attributes), data, answer, by_value=typeless(answer))
    assert violation is not None and (violation.clause.id, violation.problem) == verdict, violation


# --- exactness: the oracle never converts ------------------------------------------------------------

BF16 = ml_dtypes.bfloat16
BF16_SUB = ml_dtypes.finfo(BF16).smallest_subnormal


@pytest.mark.parametrize(("data", "first", "last"), [
    pytest.param(np.array([2**64 - 1, 2**64 - 2], np.uint64), 1, 1, id="uint64-near-2**64"),
    pytest.param(np.array([2**53 + 1, 2**53, 2**53 + 1], np.uint64), 1, 1, id="uint64-2**53"),
    pytest.param(np.array([-2**63 + 1, -2**63], np.int64), 1, 1, id="int64-min"),
    pytest.param(np.array([2**63 - 1, 2**63 - 2, 2**63 - 1], np.int64), 1, 1, id="int64-max"),
    pytest.param(np.array([0, BF16_SUB, -BF16_SUB], BF16), 2, 2, id="bfloat16-subnormals"),
    pytest.param(np.array([BF16_SUB, 0.0], BF16), 1, 1, id="bfloat16-subnormal-vs-0"),
    pytest.param(np.array([1e30, 1e29, -np.inf, 3e38], BF16), 2, 2, id="bfloat16-beyond-float16"),
    pytest.param(np.array([1e30, 1e30, 2e30], BF16), 0, 1, id="bfloat16-large-tie"),
    pytest.param(np.array([-0.0, 0.0, 1.0], np.float16), 0, 1, id="float16-signed-zero-tie"),
    pytest.param(np.array([0.0, -0.0], BF16), 0, 1, id="bfloat16-signed-zero-tie"),
    pytest.param(np.array([np.finfo(np.float16).smallest_subnormal, 0.0], np.float16), 1, 1, id="float16-subnormal"),
    pytest.param(np.array([np.finfo(np.float32).smallest_subnormal, 0.0], np.float32), 1, 1, id="float32-subnormal"),
    pytest.param(np.array([5e-324, -0.0, 0.0], np.float64), 1, 2, id="float64-subnormal-zeros"),
    pytest.param(np.array([-np.inf, -np.finfo(np.float64).max], np.float64), 0, 0, id="float64-inf"),
])
def test_oracle_is_exact(data: np.ndarray, first: int, last: int) -> None:
    vspec = spec.load(13)
    for select_last_index, wanted in ((0, first), (1, last)):
        expectation = expect(vspec, data, {"select_last_index": select_last_index})
        assert expectation.required.dtype == np.int64
        assert expectation.required.tolist() == [wanted], (data, select_last_index)


def test_oracle_does_not_modify_or_copy_to_another_dtype() -> None:
    data = np.array([[2**64 - 1, 2**64 - 2]], np.uint64)
    before = data.copy()
    assert argmin(data, 1, keepdims=False).tolist() == [1]
    assert data.dtype == np.uint64 and np.array_equal(data, before)


# --- where onnx.reference and the spec part ways (observed with onnx 1.23) --------------------------

def _outcome(version: int, data: np.ndarray, attributes: dict) -> object:
    """onnx.reference's result as a plain list, or the name of the exception it raised."""
    try:
        result = reference_evaluator(version, data, attributes)
    except Exception as exc:  # the exception type is what we record
        return type(exc).__name__
    assert result.dtype == np.int64
    return result.tolist()


@pytest.mark.parametrize(("name", "version", "data", "attributes", "spec_says", "observed"), [
    # onnx.reference agrees with the spec: it raises.
    ("axis-out-of-range", 13, np.ones(2, F32), {"axis": 1}, "rejection", "AxisError"),
    ("axis-below-range", 13, np.ones(2, F32), {"axis": -2}, "rejection", "AxisError"),
    ("select-last-index-at-v1", 1, np.array([1.0, 0.5, 0.5], F32), {"select_last_index": 1}, "rejection",
     "TypeError"),
    ("empty-reduced-axis", 13, np.zeros((3, 0), F32), {"axis": 1}, "undefined", "ValueError"),
    # onnx.reference disagrees: it computes inputs the spec says must be rejected.
    ("rank-0-at-v13", 13, np.array(1.0, F32), {}, "rejection", 0),
    ("rank-0-at-v11", 11, np.array(1.0, F32), {}, "rejection", 0),
    ("bool", 13, np.array([True, False]), {}, "rejection", [1]),
    ("complex128", 13, np.array([1 + 1j, 0j]), {}, "rejection", [1]),
    ("float8e4m3fn", 13, np.array([1.0, 0.5, 0.5], ml_dtypes.float8_e4m3fn), {}, "rejection", [1]),
    ("bfloat16-at-v12", 12, np.array([1.0, 0.5, 0.5], BF16), {}, "rejection", [1]),
    # Undefined inputs: what onnx.reference happens to do (census material, not a violation).
    ("rank-0-at-v1", 1, np.array(1.0, F32), {}, "undefined", 0),
    ("negative-axis-at-v1", 1, np.array([[1.0, 0.5, 0.5]], F32), {"axis": -1}, "undefined", [[1]]),
    ("keepdims-2", 13, np.array([1.0, 0.5, 0.5], F32), {"keepdims": 2}, "undefined", [1]),
    ("select-last-index-2", 13, np.array([1.0, 0.5, 0.5], F32), {"select_last_index": 2}, "undefined", [2]),
    ("nan-is-the-minimum", 13, np.array([0.5, np.nan, 0.5], F32), {}, "undefined", [1]),
    ("empty-input-at-v11", 11, np.zeros((3, 0), F32), {"axis": 0}, "undefined", [[]]),
])
def test_onnx_reference_where_the_spec_is_strict_or_silent(name: str, version: int, data: np.ndarray,
                                                           attributes: dict, spec_says: str, observed: object) -> None:
    assert classify(spec.load(version), data, attributes)[0] == spec_says
    assert _outcome(version, data, attributes) == observed
