"""The generators' own tests: every case is what its intent says, every family occurs at a
useful rate over a fixed seed, the same seed gives the same cases, shrinking gives small
counterexamples, and each bug class of docs/reference/bug-classes.md is caught within the quick budget."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from random import Random

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

import spec
from engine.judging.minimize import minimize
from generators import (
    BATCH,
    Case,
    census_floor,
    profiles,
    rejection_cases,
    semantic_cases,
    semantic_floor,
    undefined_cases,
)
from generators.shapes import ELEMENT_BUDGET, FAMILIES, LANES, MANY_SLICES, WIDTH
from spec.oracle import argmin, classify, expect, verify
from zoo import broken_shapes

VERSIONS = {n: spec.load(n) for n in spec.versions()}
profiles.register()
QUICK = settings.get_profile("quick").max_examples  # Hypothesis examples of BATCH cases each
Impl = Callable[..., np.ndarray]


def sample(strategy: st.SearchStrategy[Case], n: int, seed: int | None = None) -> list[Case]:
    """``n`` cases drawn by Hypothesis with a fixed seed: derandomised (the same byte strings for
    every strategy) or, with ``seed``, that seed's (so samples of several types differ)."""
    drawn: list[Case] = []

    @settings(max_examples=n, derandomize=seed is None, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(case: Case) -> None:
        drawn.append(case)

    (collect if seed is None else hypothesis_seed(seed)(collect))()
    return drawn


def rate(cases: list[Case], tag: str) -> float:
    return sum(tag in c.tags for c in cases) / len(cases)


# --- implementations: one correct, then one broken per bug class ---------------------------------

def _comparable(data: np.ndarray) -> np.ndarray:
    """16-bit floats compared in float32 (exact); everything else as it is."""
    return data.astype(np.float32) if data.dtype.itemsize == 2 and data.dtype.kind not in "iu" else data


def correct(data: np.ndarray, *, opset: int, axis: int = 0, keepdims: int = 1, select_last_index: int = 0):
    values = _comparable(data)
    if select_last_index:
        found = data.shape[axis] - 1 - np.argmin(np.flip(values, axis), axis=axis)
    else:
        found = np.argmin(values, axis=axis)
    found = np.asarray(found, dtype=np.int64)
    return np.expand_dims(found, axis) if keepdims else found


def last_on_ties(data, *, opset, select_last_index=0, **attrs):
    return correct(data, opset=opset, select_last_index=1, **attrs)


def first_on_ties(data, *, opset, select_last_index=0, **attrs):
    return correct(data, opset=opset, **attrs)


def blocked(data, *, opset, axis=0, keepdims=1, select_last_index=0, block=4096):
    """A tiled reduction whose cross-block combination breaks ties the wrong way."""
    values = np.moveaxis(_comparable(data), axis, -1)
    best_value = best_index = None
    for start in range(0, values.shape[-1], block):
        part = values[..., start:start + block]
        local = part.shape[-1] - 1 - np.argmin(part[..., ::-1], -1) if select_last_index else np.argmin(part, -1)
        value = np.take_along_axis(part, local[..., None], -1)[..., 0]
        if best_value is None:
            best_value, best_index = value, local + start
            continue
        take = value < best_value if select_last_index else value <= best_value  # inverted tie rule
        best_value, best_index = np.where(take, value, best_value), np.where(take, local + start, best_index)
    found = best_index.astype(np.int64)
    return np.expand_dims(found, axis) if keepdims else found


def sentinel(data, *, opset, axis=0, keepdims=1, select_last_index=0):
    """Starts from the type's largest value and index -1, keeping only strictly smaller values."""
    values = _comparable(data)
    top = np.inf if values.dtype.kind == "f" else np.iinfo(values.dtype).max
    found = correct(data, opset=opset, axis=axis, keepdims=0, select_last_index=select_last_index)
    found = np.where((values < top).any(axis=axis), found, -1).astype(np.int64)
    return np.expand_dims(found, axis) if keepdims else found


def float32_max_start(data, *, opset, axis=0, keepdims=1, select_last_index=0):
    """Float kernels whose running minimum starts at float32's maximum: values at or above it
    all look alike, so [inf, FLT_MAX] (or doubles beyond float32's range) answer index 0."""
    if data.dtype.kind == "f" and data.dtype.itemsize >= 4:
        data = np.minimum(data, data.dtype.type(np.finfo(np.float32).max))
    return correct(data, opset=opset, axis=axis, keepdims=keepdims, select_last_index=select_last_index)


def no_uint16_kernel(data, *, opset, **attrs):
    if data.dtype == np.uint16 and opset >= 13:
        raise NotImplementedError("no uint16 kernel registered for opset 13")
    return correct(data, opset=opset, **attrs)


def squeezes_length_one(data, *, opset, axis=0, **attrs):
    if data.shape[axis] == 1:
        return np.zeros(data.shape, np.int64).squeeze()
    return correct(data, opset=opset, axis=axis, **attrs)


def negative_axis_off_by_one(data, *, opset, axis=0, **attrs):
    return correct(data, opset=opset, axis=data.ndim + axis - 1 if axis < 0 else axis, **attrs)


def keepdims_at_front(data, *, opset, axis=0, keepdims=1, **attrs):
    found = correct(data, opset=opset, axis=axis, keepdims=0, **attrs)
    return np.expand_dims(found, 0) if keepdims else found


def keepdims_default_zero(data, *, opset, keepdims=0, **attrs):
    return correct(data, opset=opset, keepdims=keepdims, **attrs)


def int32_indices(data, *, opset, **attrs):
    return correct(data, opset=opset, **attrs).astype(np.int32)


def via_float64(data, *, opset, **attrs):
    return correct(data.astype(np.float64), opset=opset, **attrs)


def via_float16(data, *, opset, **attrs):
    with np.errstate(over="ignore", under="ignore"):
        return correct(data.astype(np.float16) if data.dtype == ml_dtypes.bfloat16 else data, opset=opset, **attrs)


def flush_to_zero(data, *, opset, **attrs):
    values = _comparable(data)
    tiny = np.finfo(values.dtype).tiny
    return correct(np.where(np.abs(values) < tiny, values.dtype.type(0), values), opset=opset, **attrs)


def negative_zero_first(data, *, opset, **attrs):
    """Orders -0 below +0 (a total order where IEEE 754 has a tie)."""
    values = _comparable(data).astype(np.float64)
    return correct(np.where((values == 0) & np.signbit(values), -1e-300, values), opset=opset, **attrs)


def no_high_rank(data, *, opset, **attrs):
    if data.ndim >= 5:
        raise ValueError("rank > 4 not supported")
    return correct(data, opset=opset, **attrs)


def remembering() -> Impl:
    """Keeps its running minima in a buffer per output shape and type that is never reset:
    state kept between calls leaks an earlier input's minimum into a later answer."""
    buffers: dict = {}

    def stateful(data, *, opset, axis=0, keepdims=1, select_last_index=0):
        values = _comparable(data)
        found = correct(data, opset=opset, axis=axis, keepdims=0, select_last_index=select_last_index)
        lowest = np.min(values, axis=axis)
        key = (lowest.shape, values.dtype.str)
        if key in buffers:
            stale_value, stale_index = buffers[key]
            found = np.where(stale_value < lowest, np.minimum(stale_index, data.shape[axis] - 1), found)
            lowest = np.minimum(stale_value, lowest)
        buffers[key] = (lowest, found)
        return np.expand_dims(found, axis) if keepdims else found

    return stateful


def misbehaves(impl: Impl, vspec: spec.VersionSpec, case: Case) -> bool:
    """The implementation refuses a valid input or its answer breaks a semantic clause."""
    expectation = expect(vspec, case.data, case.attributes)
    try:
        actual = impl(case.data, opset=vspec.version, **case.attributes)
    except Exception:
        return True
    return verify(vspec, expectation, case.data, actual) is not None


def first_misbehaving(impl: Impl, vspec: spec.VersionSpec, cases: tuple[Case, ...]) -> Case | None:
    return next((case for case in cases if misbehaves(impl, vspec, case)), None)


def hunt(impl: Impl, pairs: Iterable[tuple[int, str]], examples: int = QUICK) -> Case | None:
    """Runs one search of ``examples`` batches per (version, type), as the semantic suite does,
    each seeded from its pair (fixed, but not the same stream for every type); the first
    misbehaving case, unshrunk, or None."""
    for version, dtype in pairs:
        vspec = VERSIONS[version]
        try:
            cases = find(semantic_cases(vspec, dtype, batch=BATCH),
                         lambda cases, v=vspec: first_misbehaving(impl, v, cases) is not None,
                         settings=settings(max_examples=examples, database=None, deadline=None,
                                           phases=[Phase.generate], suppress_health_check=list(HealthCheck)),
                         random=Random(f"{version}:{dtype}"))
        except NoSuchExample:
            continue
        return first_misbehaving(impl, vspec, cases)
    return None


def every_pair(numbers: Iterable[int] = VERSIONS) -> list[tuple[int, str]]:
    return [(n, dtype) for n in numbers for dtype in VERSIONS[n].type_names]


FLOATS = [name for name in VERSIONS[13].type_names if VERSIONS[13].type(name).is_float]
BUGS: dict[str, tuple[Callable[[], Impl], list[tuple[int, str]]]] = {
    "ties: last minimum where the first is required": (lambda: last_on_ties, every_pair((12, 13))),
    "ties: select_last_index=1 ignored": (lambda: first_on_ties, every_pair((12, 13))),
    "ties across the blocks of a tiled reduction": (lambda: blocked, every_pair((13,))),
    "sentinel leaks from all-extreme slices": (lambda: sentinel, every_pair((13,))),
    **{f"float32 maximum as the starting minimum at ArgMin-{n}": (lambda: float32_max_start,
                                                                   [(n, "float"), (n, "double")]) for n in VERSIONS},
    "missing kernel for one dtype at one opset": (lambda: no_uint16_kernel, every_pair((13,))),
    "reduced axis of length 1": (lambda: squeezes_length_one, every_pair((13,))),
    "negative axis": (lambda: negative_axis_off_by_one, every_pair((11,))),
    "keepdims places the axis wrongly": (lambda: keepdims_at_front, every_pair((1,))),
    "default not applied when keepdims is omitted": (lambda: keepdims_default_zero, every_pair((12,))),
    "index dtype int32": (lambda: int32_indices, [(13, "float")]),
    "64-bit integers through float64": (lambda: via_float64, [(13, "int64"), (13, "uint64")]),
    "bfloat16 through float16": (lambda: via_float16, [(13, "bfloat16")]),
    "flush subnormals to zero": (lambda: flush_to_zero, [(13, name) for name in FLOATS]),
    "-0 ordered below +0": (lambda: negative_zero_first, [(13, name) for name in FLOATS]),
    "high ranks": (lambda: no_high_rank, every_pair((13,))),
    "state kept between calls": (remembering, every_pair((13,))),
    **{f"slices beyond the 512th answer 0 at ArgMin-{n}": (lambda: broken_shapes.slices_beyond_512_zero,
                                                           every_pair((n,))) for n in VERSIONS},
    **{f"a vector kernel's tail columns answer 0 at ArgMin-{n}": (lambda: broken_shapes.vector_tail_zero,
                                                                  every_pair((n,))) for n in VERSIONS},
}


@pytest.mark.parametrize("bug", BUGS)
def test_each_bug_class_is_found_within_the_quick_budget(bug: str) -> None:
    make, pairs = BUGS[bug]
    found = hunt(make(), pairs)
    assert found is not None, f"{bug}: no misbehaving case in {QUICK} batches of {BATCH} per (version, type)"


def test_a_correct_implementation_is_never_flagged() -> None:
    pairs = [(n, d) for n, d in every_pair() if d in ("float16", "bfloat16", "uint64", "int8", "double")]
    found = hunt(correct, pairs)
    assert found is None, f"the correct implementation was flagged on {found!r}"


# --- shrinking ----------------------------------------------------------------------------------

def shrunk(impl: Impl, vspec: spec.VersionSpec, dtype: str, examples: int) -> Case:
    """The misbehaving case of the first failing batch, minimized, as the suites report it (they
    leave Hypothesis' shrinker out: engine.judging.run)."""
    cases = find(semantic_cases(vspec, dtype, batch=BATCH),
                 lambda cases: first_misbehaving(impl, vspec, cases) is not None,
                 settings=settings(max_examples=examples, derandomize=True, database=None, deadline=None,
                                   phases=[Phase.explicit, Phase.reuse, Phase.generate],
                                   suppress_health_check=list(HealthCheck)))
    return minimize(first_misbehaving(impl, vspec, cases),
                    lambda case: first_misbehaving(impl, vspec, (case,)) is not None)


def test_a_bug_needing_one_tie_shrinks_to_a_handful_of_elements() -> None:
    case = shrunk(last_on_ties, VERSIONS[12], "float", QUICK)
    assert case.data.size <= 4 and case.data.ndim <= 2, f"counterexample not minimal: {case!r}"


def test_a_bug_needing_a_long_axis_shrinks_to_just_past_the_block() -> None:
    case = shrunk(blocked, VERSIONS[13], "int32", 300 // BATCH)
    axis = case.attributes.get("axis", VERSIONS[13].attributes["axis"].default) % case.data.ndim
    n = case.data.shape[axis]
    assert 4096 < n <= 4096 + 8 and case.data.size == n, f"reduced axis {n}, shape {case.data.shape}"


def _slices(case: Case) -> tuple[int, int]:
    """(slices, reduced length) of a valid case."""
    axis = VERSIONS[case.version].effective(case.attributes)["axis"] % case.data.ndim
    n = case.data.shape[axis]
    return case.data.size // n, n


def test_a_bug_past_512_slices_shrinks_to_513_short_slices() -> None:
    case = shrunk(broken_shapes.slices_beyond_512_zero, VERSIONS[13], "int32", 200 // BATCH)
    slices, n = _slices(case)
    assert 513 <= slices <= 520 and n <= 3, f"{slices} slices of length {n}: {case!r}"


def test_a_vector_tail_bug_shrinks_to_one_column_past_a_multiple_of_8() -> None:
    case = shrunk(broken_shapes.vector_tail_zero, VERSIONS[13], "float", 200 // BATCH)
    width = case.data.shape[-1]
    assert 9 <= width <= 15 and case.data.size <= 3 * width, f"shape {case.data.shape}: {case!r}"


def test_a_tiling_bug_shrinks_to_just_past_both_thresholds() -> None:
    """A bug that needs a reduced axis longer than 16 and an inner extent over 1024 (found by the
    tiles family, which draws the two together) shows as 17 rows of 1025 columns."""
    case = shrunk(broken_shapes.tile_rows_lost_past_first_column_block, VERSIONS[13], "float", 500 // BATCH)
    axis = VERSIONS[13].effective(case.attributes)["axis"] % case.data.ndim
    n, inner = case.data.shape[axis], math.prod(case.data.shape[axis + 1:])
    assert (n, inner) == (17, 1025) and case.data.size == n * inner, f"shape {case.data.shape}, axis {axis}"


def test_a_bug_past_65535_outputs_shrinks_to_65536_short_slices() -> None:
    case = shrunk(broken_shapes.grid_limit_65535, VERSIONS[13], "int32", 200 // BATCH)
    slices, n = _slices(case)
    assert slices == 65536 and n == 2, f"{slices} slices of length {n}: shape {case.data.shape}"


# --- every case is what it says -----------------------------------------------------------------

def _targets(case: Case) -> set[str]:
    return {tag.split(":", 1)[1] for tag in case.tags if tag.startswith(("clause:", "topic:"))}


@pytest.mark.parametrize("version", VERSIONS)
def test_semantic_cases_are_valid_and_honestly_tagged(version: int) -> None:
    vspec = VERSIONS[version]
    for type_name in vspec.type_names:
        for case in sample(semantic_cases(vspec, type_name), 40):
            kind, clauses = classify(vspec, case.data, case.attributes)
            assert (kind, case.intent) == ("semantic", "semantic"), f"{[c.id for c in clauses]} on {case!r}"
            axis = vspec.effective(case.attributes)["axis"] % case.data.ndim
            assert f"type:{type_name}" in case.tags and f"rank:{case.data.ndim}" in case.tags
            assert case.data.dtype == vspec.type(type_name).dtype and 1 <= case.data.ndim <= 8
            assert case.data.shape[axis] >= 1, "a valid case never has an empty reduced axis"
            assert ("zero-size:yes" in case.tags) == (case.data.size == 0)


@pytest.mark.parametrize("version", VERSIONS)
def test_rejection_and_census_cases_fall_under_the_clauses_they_target(version: int) -> None:
    vspec = VERSIONS[version]
    for strategy, kind in ((rejection_cases(vspec), "rejection"), (undefined_cases(vspec), "undefined")):
        for case in sample(strategy, 150):
            got, clauses = classify(vspec, case.data, case.attributes)
            assert (got, case.intent) == (kind, kind), f"classified {got} ({[c.id for c in clauses]}): {case!r}"
            assert _targets(case) and _targets(case) <= {c.id for c in clauses}, f"{case.tags} vs {clauses}"


# --- families occur at useful rates -------------------------------------------------------------

@pytest.fixture(scope="module")
def v13_cases() -> dict[str, list[Case]]:
    """100 cases per type, each type with its own seed: 1,200 distinct draws."""
    return {dtype: sample(semantic_cases(VERSIONS[13], dtype), 100, seed=i)
            for i, dtype in enumerate(VERSIONS[13].type_names)}


def test_shape_and_attribute_partitions_occur(v13_cases: dict[str, list[Case]]) -> None:
    cases = [c for group in v13_cases.values() for c in group]
    minimum = {"axis:omitted": 0.1, "axis:positive": 0.1, "axis:negative": 0.1, "keepdims:omitted": 0.1,
               "keepdims:0": 0.1, "keepdims:1": 0.1, "select_last_index:omitted": 0.1, "select_last_index:0": 0.1,
               "select_last_index:1": 0.1, "axis-length:1": 0.05, "axis-length:short": 0.4,
               "axis-length:long": 0.05, "axis-length:very-long": 0.01, "zero-size:yes": 0.02}
    minimum.update({f"rank:{r}": 0.01 for r in range(1, 9)})
    low = {tag: rate(cases, tag) for tag, least in minimum.items() if rate(cases, tag) < least}
    assert not low, f"partitions below their minimum rate: {low}"


def test_shape_families_cover_what_kernels_split_on(v13_cases: dict[str, list[Case]]) -> None:
    """Many slices, wide inner widths on and off the lanes, batches of scores, a middle axis
    between large extents: each family at a useful rate, each within its bounds, and every case
    within the element budget."""
    cases = [c for group in v13_cases.values() for c in group]
    minimum = {**{f"shape:{name}": 0.01 for name in FAMILIES}, "slices:513-8192": 0.03, "slices:8193+": 0.02,
               **{f"inner-width:{k}": 0.005 for k in ("multiple-of-8", "multiple-of-16", "multiple-of-32")},
               "inner-width:not-multiple-of-8": 0.03, "inner-width:1": 0.2, "inner-width:2-7": 0.1}
    low = {tag: rate(cases, tag) for tag, least in minimum.items() if rate(cases, tag) < least}
    assert not low, f"shape partitions below their minimum rate: {low}"
    assert max(c.data.size for c in cases) <= ELEMENT_BUDGET
    for case in cases:
        family = next(t.split(":", 1)[1] for t in case.tags if t.startswith("shape:"))
        axis = VERSIONS[13].effective(case.attributes)["axis"] % case.data.ndim
        slices, n = _slices(case)
        if family == "many-slices":
            assert 2 <= n <= 8 and MANY_SLICES[0] * 0.9 <= slices <= MANY_SLICES[1], case
        elif family == "wide-inner":
            assert axis < case.data.ndim - 1 and WIDTH[0] <= case.data.shape[-1] <= WIDTH[1], case
        elif family == "batch-classes":
            assert case.data.ndim == 2, case
        elif family == "middle-axis":
            assert 0 < axis < case.data.ndim - 1, case
    wide = [c.data.shape[-1] for c in cases if "shape:wide-inner" in c.tags]
    assert {w % 8 == 0 for w in wide} == {True, False} and max(wide) >= 1024, sorted(wide)
    assert any(w % lane == 0 and w % (2 * lane) for w in wide for lane in LANES[:2]), sorted(wide)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_floor_holds_every_special_value_family_of_each_type(version: int) -> None:
    """Pinned cases per (version, type): valid, each family of the type present, and (but for
    all-equal slices) the minimum never at index 0, so a kernel that loses the value is caught."""
    vspec = VERSIONS[version]
    for type_name in vspec.type_names:
        tensor_type = vspec.type(type_name)
        floor = semantic_floor(vspec, type_name)
        families = {t for c in floor for t in c.tags if t.startswith("floor:")}
        wanted = {"floor:extremes"} | ({"floor:signed-zero", "floor:subnormal", "floor:precision"}
                                       if tensor_type.is_float else set())
        assert wanted <= families, (type_name, families)
        for case in floor:
            assert classify(vspec, case.data, case.attributes)[0] == "semantic", case
            if len(set(case.data.tolist())) > 1:
                assert argmin(case.data, 0, keepdims=False) != 0, case
        held = {tuple(c.data.tolist()) for c in floor}
        if type_name in ("int64", "uint64"):
            assert (2**53 + 1, 2**53) in held, "64-bit neighbours beyond 2**53"
        if tensor_type.is_float:
            tiny = float(ml_dtypes.finfo(tensor_type.dtype).smallest_subnormal)
            assert (2 * tiny, tiny) in held and (np.inf, float(ml_dtypes.finfo(tensor_type.dtype).max)) in held
            assert {"special:neg-zero", "special:subnormal", "special:inf", "special:extreme"} <= \
                {t for c in floor for t in c.tags}
        if tensor_type.is_float and "select_last_index" in vspec.attributes:
            assert any(c.attributes == {"select_last_index": 1} for c in floor if "floor:signed-zero" in c.tags)
        census = census_floor(vspec, type_name)
        assert len(census) == (4 if tensor_type.is_float else 0)
        for case in census:
            kind, clauses = classify(vspec, case.data, case.attributes)
            assert kind == "undefined" and "contains_nan" in clauses[0].when, case


def test_value_families_occur(v13_cases: dict[str, list[Case]]) -> None:
    cases = [c for group in v13_cases.values() for c in group]
    floats = [c for name in FLOATS for c in v13_cases[name]]
    checks = {
        **{f"ties:{k}": (cases, 0.05) for k in ("none", "two", "several", "all-equal")},
        "ties:far-apart": (cases, 0.02),
        **{f"special:{k}": (floats, 0.05) for k in ("inf", "neg-zero", "subnormal", "extreme")},
        "special:beyond-float16": (v13_cases["bfloat16"], 0.05),
        "family:top": (cases, 0.08),
        "special:precision-64": (v13_cases["int64"] + v13_cases["uint64"], 0.05),
    }
    low = {tag: rate(group, tag) for tag, (group, least) in checks.items() if rate(group, tag) < least}
    assert not low, f"value families below their minimum rate: {low}"


def test_no_empty_valid_input_where_the_version_makes_it_undefined() -> None:
    cases = sample(semantic_cases(VERSIONS[11], "float"), 200)
    assert all(c.data.size > 0 for c in cases)
    assert rate(sample(semantic_cases(VERSIONS[12], "float"), 200), "zero-size:yes") > 0.02


@pytest.mark.parametrize("version", VERSIONS)
def test_every_rejection_and_undefined_clause_is_targeted(version: int) -> None:
    vspec = VERSIONS[version]
    for strategy, kind, key in ((rejection_cases(vspec), "rejection", "clause"),
                                (undefined_cases(vspec), "undefined", "topic")):
        cases = sample(strategy, 200)
        wanted = {c.id for c in vspec.of_kind(kind) if c.when}
        low = {cid: rate(cases, f"{key}:{cid}") for cid in wanted if rate(cases, f"{key}:{cid}") < 0.05}
        assert not low, f"ArgMin-{version} {kind} clauses too rare: {low}"


@pytest.mark.parametrize("version", VERSIONS)
def test_undeclared_attributes_have_random_names_and_values_at_every_version(version: int) -> None:
    vspec = VERSIONS[version]
    cases = sample(rejection_cases(vspec, "C13"), 100)
    extra = [(name, value) for c in cases for name, value in c.attributes.items() if name not in vspec.attributes]
    assert len(extra) == len(cases), "each case adds exactly one undeclared attribute"
    assert all(name.isidentifier() and name not in ("data", "opset") for name, _ in extra)
    sources = {t for c in cases for t in c.tags if t.startswith("undeclared:")}
    assert sources == {"undeclared:near-miss", "undeclared:random"} | (
        {"undeclared:elsewhere"} if version < 12 else set()), sources
    assert len({name for name, _ in extra}) >= 30 and len({value for _, value in extra}) >= 30


def test_rejected_types_cover_every_type_outside_t() -> None:
    for vspec in VERSIONS.values():
        seen = {t for c in sample(rejection_cases(vspec), 400) if "reject:type" in c.tags for t in c.tags}
        missing = {f"type:{t.name}" for t in spec.outside_types(vspec)} - seen
        assert not missing, f"ArgMin-{vspec.version} never rejects {missing}"


def test_nan_lands_in_every_position_and_only_for_float_types() -> None:
    vspec = VERSIONS[13]
    cases = [c for c in sample(undefined_cases(vspec, "float16"), 300) if "topic:C14" in c.tags]
    for place in ("first", "middle", "last", "all"):
        assert rate(cases, f"nan-position:{place}") > 0.02, place  # of the NaN cases
    assert not any("topic:C14" in c.tags for c in sample(undefined_cases(vspec, "int32"), 100))


def _nan_policies(impl: Impl, cases: list[Case]) -> set[str]:
    """The coherent NaN policies that explain every answer ``impl`` gives on NaN cases."""
    vspec, policies = VERSIONS[13], {"nan-is-minimum", "nan-ignored"}
    for case in cases:
        axis = vspec.effective(case.attributes)["axis"] % case.data.ndim
        values = _comparable(case.data).astype(np.float64)
        nan = np.isnan(values)
        answer = impl(case.data, opset=13, axis=axis, keepdims=0)
        if not (answer == np.where(nan.any(axis), np.argmax(nan, axis), np.argmin(values, axis))).all():
            policies.discard("nan-is-minimum")
        if not (nan.all(axis) | (answer == np.argmin(np.where(nan, np.inf, values), axis))).all():
            policies.discard("nan-ignored")
    return policies


def test_a_position_dependent_nan_policy_is_visible_in_the_census() -> None:
    cases = [c for c in sample(undefined_cases(VERSIONS[13], "float"), 150) if "topic:C14" in c.tags]

    def numpy_policy(data, *, opset, axis, keepdims):
        return np.argmin(data, axis=axis)

    def odd(data, *, opset, axis, keepdims):
        """NaN ignored, except a NaN at index 0, which it returns."""
        nan = np.isnan(data)
        return np.where(np.take(nan, 0, axis), 0, np.argmin(np.where(nan, np.inf, data), axis))

    assert _nan_policies(numpy_policy, cases) == {"nan-is-minimum"}
    assert _nan_policies(odd, cases) == set(), "the census cases cannot tell a position-dependent NaN policy apart"


# --- reproducibility, errors, profiles ----------------------------------------------------------

def _fingerprint(cases: list[Case]) -> list[tuple]:
    return [(c.data.dtype.str, c.data.shape, c.data.tobytes(), sorted(c.attributes.items()), c.tags) for c in cases]


def test_same_seed_same_cases() -> None:
    for make in (lambda: semantic_cases(VERSIONS[13], "bfloat16"), lambda: rejection_cases(VERSIONS[1]),
                 lambda: undefined_cases(VERSIONS[11])):
        assert _fingerprint(sample(make(), 40)) == _fingerprint(sample(make(), 40))


def test_a_batch_holds_independent_cases() -> None:
    """Each case of a batch is decoded from its own piece of one draw, so nearly every case of a
    test is distinct (separate draws would not be: Hypothesis copies same-strategy draws onto
    each other to make duplicates). Hypothesis tries the all-zero draw first: it gives the
    simplest input once, and the rest of its batch is as varied as any (a test of one batch of
    32 would otherwise judge one input)."""
    batches = sample(semantic_cases(VERSIONS[13], "float", batch=BATCH), 50)
    assert all(len(cases) == BATCH for cases in batches)
    keys = [case.key() for cases in batches for case in cases]
    assert len(set(keys)) >= 0.95 * len(keys), f"{len(set(keys))} distinct cases of {len(keys)}"
    first = batches[0]
    assert first[0].data.shape == (1,) and len({case.key() for case in first}) == BATCH, repr(first)
    with pytest.raises(ValueError, match="batch=0: a batch holds at least one case"):
        semantic_cases(VERSIONS[13], "float", batch=0)


def test_an_unknown_type_is_a_one_line_error() -> None:
    with pytest.raises(spec.SpecError, match=r"'bfloat16' is not in ArgMin-12's T; choose one of .*float16"):
        semantic_cases(VERSIONS[12], "bfloat16")
    with pytest.raises(spec.SpecError, match="not in ArgMin-13's T"):
        undefined_cases(VERSIONS[13], "bool")


def test_profiles(monkeypatch: pytest.MonkeyPatch) -> None:
    assert profiles.PROFILES == ("quick", "standard", "certify")
    budgets = [profiles.load(name).max_examples for name in profiles.PROFILES]
    assert budgets == sorted(budgets) and budgets[0] <= 50
    # budgets count cases, plus the first example: the simplest input, repeated across its batch
    assert budgets == [profiles.CASES[name] // BATCH + 1 for name in profiles.PROFILES]
    certify = profiles.load("certify")
    assert certify.derandomize and certify.database is None
    assert all(profiles.load(name).deadline is None for name in profiles.PROFILES)
    monkeypatch.setenv(profiles.ENV, "standard")
    assert profiles.load().max_examples == budgets[1]
    monkeypatch.delenv(profiles.ENV)
    assert profiles.load().max_examples == budgets[0]
    with pytest.raises(ValueError, match="unknown Hypothesis profile 'fast': choose one of quick, standard"):
        profiles.load("fast")
    profiles.load(os.environ.get(profiles.ENV))
