"""Joint coverage of the extents kernels tile on: the reduced length L against the inner
extent I and against the slice count S, each in log-scale buckets. The standard profile's draw
reaches every bucket pair that fits the element budget, whatever the seed; the tiles family
reaches them at ranks 2 to 8 with the axis first, in the middle and last; the value families
still place ties, signed zeros, subnormals and near-ties in long and wide cases, across lane
boundaries; the report counts the pairs from the case tags.

The generator is tested directly (shapes and tags decoded from Hypothesis' own byte draws, no
implementation run): fast enough for the default test run."""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from functools import cache
from random import Random
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

import spec
from generators import BATCH, profiles
from generators.build import REGIONS, SIZE, Layout, draft, empty_inputs_defined, layout
from generators.shapes import BUCKET_NAMES, BUCKETS, ELEMENT_BUDGET, REACHABLE, bucket, extents, in_budget, shape_tags
from reports.document.shape_grid import shape_grid
from results import CaseResult

VERSIONS = {n: spec.load(n) for n in spec.versions()}
PIECE = SIZE - REGIONS[-1]  # the bytes of one semantic case
CELLS = {(BUCKET_NAMES[a], BUCKET_NAMES[b]) for a, b in REACHABLE}


@cache
def standard_layouts(seed: int) -> tuple[Layout, ...]:
    """The shapes of every generated semantic case of a standard run with ``seed``: per (version,
    type) test, the profile's examples of BATCH cases from the test's own derived seed, decoded
    like the suites decode them (engine.judging.run, each batch within its element budget), but without
    building values."""
    drawn: list[Layout] = []
    for version, vspec in VERSIONS.items():
        for type_name in vspec.type_names:
            derived = int.from_bytes(hashlib.sha256(f"{seed}:property:v{version}-{type_name}".encode()).digest()[:8])
            hypothesis_seed(derived)(_collector(vspec, vspec.type(type_name), drawn))()
    return tuple(drawn)


def _collector(vspec: spec.VersionSpec, tensor_type: spec.TensorType, drawn: list[Layout]):
    zero_dims = empty_inputs_defined(vspec)

    @settings(max_examples=profiles.load("standard").max_examples, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(st.binary(min_size=PIECE * BATCH, max_size=PIECE * BATCH))
    def collect(raw: bytes) -> None:
        pieces = [raw[k:k + PIECE] for k in range(0, len(raw), PIECE)]
        drawn.extend(in_budget(pieces, lambda piece, budget: layout(vspec, tensor_type, piece, zero_dims=zero_dims,
                                                                     budget=budget),
                               lambda plan: math.prod(plan.shape)))

    return collect


def grids(layouts: Iterable[Layout]) -> dict[str, Counter]:
    counts = {"I": Counter(), "S": Counter()}
    for plan in layouts:
        n, inner, slices = extents(plan.shape, plan.axis)
        counts["I"][bucket(n), bucket(inner)] += 1
        counts["S"][bucket(n), bucket(slices)] += 1
    return counts


@pytest.mark.parametrize("seed", [1, 7, 2026])
def test_the_standard_profile_leaves_no_reachable_bucket_pair_empty(seed: int) -> None:
    layouts = standard_layouts(seed)
    assert len(layouts) >= 45 * profiles.CASES["standard"], "fewer cases than the standard profile draws"
    assert max(math.prod(p.shape) for p in layouts) <= ELEMENT_BUDGET
    for column, counts in grids(layouts).items():
        empty = sorted(cell for cell in CELLS if not counts[cell])
        assert not empty, f"seed {seed}: (L, {column}) pairs within the budget never drawn: {empty}"
        assert not set(counts) - CELLS - {(a, b) for a in ("0", *BUCKET_NAMES) for b in ("0", "1")}, \
            f"a pair beyond the budget: {set(counts) - CELLS}"


# Shapes the zoo's size bugs need (zoo/broken_shapes.py, broken_values.py) and the fewest a
# standard run may hold. Measured, the fewest over seeds 1, 7 and 2026 with the element budget:
# 24, 296, 455, 1026, 46, 529, 395 (24, 296, 455, 1026, 44, 529, 402 without): none fewer but the
# largest cases, whose other sides the plain family now keeps smaller.
BIG_SHAPES = {
    "more than 65,535 slices (a GPU grid's limit)": (lambda n, inner, slices, plan: slices > 65535, 20),
    "a reduced axis beyond 65,536": (lambda n, inner, slices, plan: n > 65536, 250),
    "a reduced axis beyond int16's indices": (lambda n, inner, slices, plan: n > 32767, 400),
    "a reduced axis over one 4096-element tile": (lambda n, inner, slices, plan: n > 4096, 900),
    "more than 16 rows over more than 1024 inner columns": (lambda n, inner, slices, plan: n > 16 and inner > 1024, 38),
    "rank 8": (lambda n, inner, slices, plan: plan.rank == 8, 450),
    "2^17 elements or more": (lambda n, inner, slices, plan: math.prod(plan.shape) >= 1 << 17, 320),
}


@pytest.mark.parametrize("seed", [1, 7, 2026])
def test_the_budget_keeps_the_largest_shapes(seed: int) -> None:
    layouts = standard_layouts(seed)
    for name, (holds, least) in BIG_SHAPES.items():
        count = sum(holds(*extents(plan.shape, plan.axis), plan) for plan in layouts)
        assert count >= least, f"seed {seed}: {count} cases with {name} in a standard run, fewer than {least}"


def _position(plan: Layout) -> str:
    return "first" if plan.axis == 0 else "last" if plan.axis == plan.rank - 1 else "middle"


def test_the_tiles_family_reaches_every_pair_at_every_axis_position_and_rank() -> None:
    """Over three standard runs' tiles cases: every rank 2-8 at every position it has, and at each
    position every pair that position can hold (reducing the last axis leaves I = 1; reducing the
    first makes S = I)."""
    tiles = [p for seed in (1, 7, 2026) for p in standard_layouts(seed) if p.shape_family == "tiles"]
    assert {(p.rank, _position(p)) for p in tiles} == \
        {(r, where) for r in range(2, 9) for where in ("first", "middle", "last") if r > 2 or where != "middle"}
    by_position: dict[str, list[Layout]] = defaultdict(list)
    for plan in tiles:
        by_position[_position(plan)].append(plan)
    for where, plans in by_position.items():
        counts = grids(plans)
        inner_cells = {c for c in CELLS if c[1] == "1"} if where == "last" else CELLS
        assert not inner_cells - set(counts["I"]), (where, sorted(inner_cells - set(counts["I"])))
        assert not CELLS - set(counts["S"]), (where, sorted(CELLS - set(counts["S"])))


def test_extents_sit_on_lane_boundaries_and_just_off_them() -> None:
    tiles = [p for p in standard_layouts(7) if p.shape_family == "tiles"]
    inner = [math.prod(p.shape[p.axis + 1:]) for p in tiles if 0 < p.axis < p.rank - 1]
    lengths = [p.shape[p.axis] for p in tiles]
    for values in (inner, lengths):
        wide = [v for v in values if v >= 64]
        for lane in (8, 16, 32):
            assert any(v % lane == 0 for v in wide) and any(v % lane in (1, lane - 1) for v in wide), lane


def test_value_families_reach_long_and_wide_cases_across_boundaries() -> None:
    """Ties, signed zeros, subnormals and near-ties are built in tiles cases with a long reduced
    axis or a wide inner extent too, with ties straddling a lane boundary and far apart."""
    rng, vspec = Random(25), VERSIONS[13]
    tags: Counter = Counter()
    for type_name in ("float", "float16", "double"):
        tensor_type, built = vspec.type(type_name), 0
        while built < 150:
            raw = rng.randbytes(PIECE)
            plan = layout(vspec, tensor_type, raw, zero_dims=True)
            n, inner, _ = extents(plan.shape, plan.axis)
            if plan.shape_family != "tiles" or max(n, inner) < 64 or n < 9:
                continue
            built += 1
            held = set(draft(vspec, tensor_type, raw, zero_dims=True).tags)
            tags.update(held)
            # pairs that must occur together: a -0/+0 tie across a lane boundary, a subnormal
            # tie or near-tie across one, subnormal minima far apart on a long axis
            tags.update(f"{a}&{b}" for a in held for b in held if a < b)
    wanted = ["ties:two", "ties:several", "ties:straddle", "ties:far-apart", "special:neg-zero",
              "special:subnormal", "special:inf", "family:ties", "family:mixed", "family:top", "family:detour",
              "family:signed-zero&ties:straddle", "family:subnormal&ties:straddle",
              "family:subnormal&ties:far-apart", "family:ties&ties:straddle"]
    assert all(tags[t] >= 2 for t in wanted), {t: tags[t] for t in wanted}


def test_every_valid_case_is_tagged_with_its_buckets() -> None:
    assert shape_tags((3, 17, 1025), 1)[-3:] == ["L:8-63", "I:512-4095", "S:512-4095"]
    assert shape_tags((70000, 2), 1)[-3:] == ["L:2-7", "I:1", "S:4096+"]
    assert shape_tags((0, 5), 1)[-3:] == ["L:2-7", "I:1", "S:0"]
    assert [bucket(low) for low, _ in BUCKETS] == list(BUCKET_NAMES)
    assert [bucket(high) for _, high in BUCKETS] == list(BUCKET_NAMES)


def _result(tags: list[str], kind: str = "semantic") -> CaseResult:
    return CaseResult(version=13, type_name="float", suite="property", kind=kind, outcome="pass", clauses=[],
                      tags=tags)


def test_the_report_grid_counts_semantic_cases_per_pair_and_names_the_empty_ones() -> None:
    run = SimpleNamespace(results=[
        _result(["L:8-63", "I:512-4095", "S:4096+"]), _result(["L:8-63", "I:512-4095", "S:512-4095"]),
        _result(["L:1", "I:1", "S:1"], kind="rejection"), _result(["type:float"])])
    grid = shape_grid(run)
    assert grid["buckets"] == list(BUCKET_NAMES)
    by_column = {g["columns"]: g for g in grid["grids"]}
    li, ls = by_column["I"], by_column["S"]
    row, inner, top = BUCKET_NAMES.index("8-63"), BUCKET_NAMES.index("512-4095"), BUCKET_NAMES.index("4096+")
    assert li["cases"][row][inner] == 2 and ls["cases"][row][top] == 1 and ls["cases"][row][inner] == 1
    assert li["cases"][0][0] == 0, "rejection cases are not counted"
    assert li["cases"][top][top] is None, "L and I of 4096+ each do not fit 2^18 elements"
    assert len(li["empty"]) == len(CELLS) - 1 and ["8-63", "512-4095"] not in li["empty"]
