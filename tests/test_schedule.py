"""Schedules: the few signatures (and shapes) a test draws its cases within, for a runtime that
compiles per node or per shape. They cover every rank, axis spelling and attribute value and
their pairs, hold the special-value floor's own, rotate with the seed, and cost one compiled node
per signature where the free draw costs about one per case (counted on the fake compiler)."""

from __future__ import annotations

import itertools
import math
import os

import hypothesis
import pytest
from hypothesis import strategies as st

import spec
from benchmarks.bench_schedule import count
from engine.asking.loader import UsageError
from engine.config.options import validate
from engine.config.plan import Task
from engine.config.schedules import record, task_schedule
from engine.judging.run import test_cases as cases_of
from generators import schedule, semantic_cases
from generators.build import SIZE
from generators.floor import semantic_floor
from generators.schedule import SIZES, Entry, pinned
from generators.shapes import MAX_RANK
from generators.strategies import LARGEST_INVALID, undefined_cases, undefined_decoder

FAKE = "model:tests/impls/model_packing.py:correct"


def _features(vspec: spec.VersionSpec, entry: Entry) -> dict[str, object]:
    set_ = dict(entry.attributes)
    return {"axis": entry.axis_form, **{name: set_.get(name, "omitted") for name in ("keepdims", "select_last_index")
                                        if name in vspec.attributes}}


@pytest.mark.parametrize("version", spec.versions())
@pytest.mark.parametrize("size", sorted(set(SIZES.values())))
def test_a_schedule_covers_every_rank_spelling_value_and_pair(version: int, size: int) -> None:
    vspec = spec.load(version)
    entries = schedule.signatures(vspec, f"7:{version}:float", size)
    assert len(entries) == size and len(set(entries)) == size
    assert {e.rank for e in entries} == set(range(1, MAX_RANK + 1))
    assert set(pinned(vspec)) <= set(entries), "the floor's signatures are scheduled"
    for entry in entries:  # every entry is a valid signature of its rank
        assert dict(entry.attributes) in vspec.signatures(entry.rank)
    spellings = {"omitted", "positive"} | ({"negative"} if vspec.attributes["axis"].range.bounds(2)[0] < 0 else set())
    seen = [_features(vspec, e) for e in entries]
    assert {f["axis"] for f in seen} == spellings
    for name in ("keepdims", "select_last_index"):
        if name in vspec.attributes:
            assert {f[name] for f in seen} == {"omitted", 0, 1}, name
    if size >= 24:  # every pair of values of two features that any signature has
        possible = {pair for rank in range(1, MAX_RANK + 1) for attributes in vspec.signatures(rank)
                    for pair in itertools.combinations(sorted(_features(vspec, schedule._entry(vspec, rank, attributes))
                                                              .items()), 2)}
        covered = {pair for f in seen for pair in itertools.combinations(sorted(f.items()), 2)}
        assert possible <= covered, possible - covered


def test_a_schedule_is_the_seeds_and_another_seed_covers_others() -> None:
    vspec = spec.load(13)
    first = schedule.signatures(vspec, "1:13:float", 24)
    assert schedule.signatures(vspec, "1:13:float", 24) == first
    seeds = [set(schedule.signatures(vspec, f"{seed}:13:float", 24)) for seed in range(100)]
    assert len({frozenset(s) for s in seeds}) == 100
    reached = set().union(*seeds)
    for rank in (1, 2, 3):  # a hundred nightly runs reach every signature of the low ranks, most of the rest
        assert len({e for e in reached if e.rank == rank}) == len(vspec.signatures(rank))
    assert len(reached) > 0.75 * sum(len(vspec.signatures(rank)) for rank in range(1, MAX_RANK + 1))


def test_a_shape_schedule_fixes_one_shape_per_signature_covering_the_shape_tags() -> None:
    vspec = spec.load(13)
    entries = schedule.shapes(vspec, "7:13:float", 24, True)
    assert [e.signature for e in entries] and all(e.shape is not None and len(e.shape) == e.rank for e in entries)
    assert sorted(e.signature for e in entries) == sorted(e.signature for e in schedule.signatures(vspec, "7:13:float",
                                                                                                    24))
    families = {e.shape_family for e in entries}
    assert {"plain", "tiles"} <= families and len(families) >= 3
    lengths = {e.shape[e.axis] for e in entries}
    assert 1 in lengths and max(lengths) > 65536, "a reduced length of 1 and a very long one"


@hypothesis.settings(max_examples=30, deadline=None, database=None)
@hypothesis.given(data=st.data())
def test_every_case_is_drawn_within_its_schedule(data: st.DataObject) -> None:
    vspec = spec.load(13)
    signatures = schedule.signatures(vspec, "3:13:int32", 12)
    case = data.draw(semantic_cases(vspec, "int32", schedule=signatures), label="case")
    assert (case.data.ndim, tuple(sorted(case.attributes.items()))) in {e.signature for e in signatures}
    shaped = schedule.shapes(vspec, "3:13:int32", 12, True)
    case = data.draw(semantic_cases(vspec, "int32", schedule=shaped), label="shaped")
    assert (case.data.shape, tuple(sorted(case.attributes.items()))) in {(e.shape, e.attributes) for e in shaped}
    census = data.draw(undefined_cases(vspec, "float", topics=("C14",), schedule=signatures), label="nan")
    assert (census.data.ndim, tuple(sorted(census.attributes.items()))) in {e.signature for e in signatures}


def test_the_floor_is_within_every_schedule() -> None:
    for version in spec.versions():
        vspec = spec.load(version)
        scheduled = {e.signature for e in schedule.signatures(vspec, "9:x", 12)}
        for case in semantic_floor(vspec, "float"):
            assert (case.data.ndim, tuple(sorted(case.attributes.items()))) in scheduled


@pytest.mark.parametrize(("impl", "profile", "key", "size"), [
    ("tvm", "standard", "node", 24), ("iree", "quick", "node", 12), ("openvino", "standard", "node", 24),
    ("tinygrad", "standard", "shape", 24), ("onnxruntime", "standard", "model", None),
    ("onnx-reference", "standard", "model", None), ("tract", "standard", "model", None),
    (FAKE, "standard", "node", 24), ("backend:onnxruntime.backend", "quick", "node", 12),
    ("tvm", "certify", "node", None), ("zoo.correct:numpy_argmin", "standard", "model", None),
])
def test_each_runtime_states_its_compile_key_and_gets_its_schedule(impl: str, profile: str, key: str,
                                                                   size: int | None) -> None:
    settings = validate({"impl": impl, "profile": profile, "seed": "1"})
    assert (settings.compile_key, settings.schedule_size) == (key, size)


def test_the_schedule_options() -> None:
    assert validate({"impl": FAKE, "schedule": "off"}).schedule_size is None
    assert validate({"impl": FAKE, "profile": "certify", "schedule": "on"}).schedule_size == SIZES["certify"]
    assert validate({"impl": "onnxruntime", "schedule": "on"}).schedule_size == SIZES["standard"]
    assert validate({"impl": FAKE, "compile_key": "model"}).schedule_size is None
    assert validate({"impl": FAKE, "compile_key": "shape"}).compile_key == "shape"
    with pytest.raises(UsageError, match="is not a compile key; choose one of model, node, shape"):
        validate({"impl": FAKE, "compile_key": "kernel"})
    with pytest.raises(UsageError, match="unknown schedule 'sometimes'"):
        validate({"impl": FAKE, "schedule": "sometimes"})


def test_only_the_symbolic_property_and_census_tests_are_scheduled() -> None:
    settings = validate({"impl": FAKE, "profile": "quick", "seed": "4"})
    assert task_schedule(Task("property", 13, "float", form="symbolic"), settings)
    assert task_schedule(Task("property", 13, "float", form="symbolic"), settings) == \
        task_schedule(Task("census", 13, "float", form="symbolic"), settings), "one schedule per version and type"
    for task in (Task("property", 13, "float", form="static"), Task("rejection", 13, clause="C10", form="symbolic"),
                 Task("fixed", 13, form="symbolic")):
        assert not task_schedule(task, settings)
    cases = cases_of(Task("property", 13, "float", form="symbolic"), settings)
    assert cases.schedule == task_schedule(Task("property", 13, "float", form="symbolic"), settings)
    assert record(settings) == {"compile_key": "node", "size": 12, "signatures": record(settings)["signatures"],
                                "shapes": 0} and record(settings)["signatures"] > 100


def test_the_schedule_compiles_a_fraction_of_the_nodes_and_asks_as_many_cases() -> None:
    """The fake compiler, quick, ArgMin-13, three types: the symbolic property tests compile one
    node per signature instead of about one per case, and ask as many valid and census cases
    (rejection asks fewer invalid models, REJECTION_BUDGET)."""
    _, free, free_cases = count("quick", "13", "off", "float,int32,uint8")
    _, scheduled, cases = count("quick", "13", "auto", "float,int32,uint8")
    symbolic = ("property", "symbolic")
    assert free[symbolic] >= 3.5 * scheduled[symbolic], (free, scheduled)
    assert sum(free.values()) >= 1.5 * sum(scheduled.values())
    for suite in ("property", "census"):
        assert abs(cases[suite] - free_cases[suite]) <= 0.02 * free_cases[suite], (suite, cases, free_cases)


@pytest.mark.e2e
def test_at_the_standard_profile_the_symbolic_tests_compile_a_fifth_of_the_nodes() -> None:
    """The fake compiler, standard, every version (benchmarks/bench_schedule.py prints the table)."""
    _, free, free_cases = count("standard", "1,11,12,13", "off")
    _, scheduled, cases = count("standard", "1,11,12,13", "auto")
    assert free["property", "symbolic"] >= 5 * scheduled["property", "symbolic"], (free, scheduled)
    symbolic = [key for key in free if key[1] == "symbolic" and key[0] in ("property", "census")]
    assert sum(free[key] for key in symbolic) >= 3.5 * sum(scheduled[key] for key in symbolic)
    assert sum(free.values()) >= 2.5 * sum(scheduled.values())
    for suite in ("property", "census"):
        assert abs(cases[suite] - free_cases[suite]) <= 0.02 * free_cases[suite], (suite, cases, free_cases)


def test_a_rerun_draws_within_the_schedules_the_run_drew_within(tmp_path) -> None:
    from reports.folders.verify import rerun_command

    certificate = {"implementation": FAKE, "profile": "quick", "versions": [13], "timeout_s": 10, "seed": 1,
                   "types": None, "forms": ["symbolic"], "packing": "on"}
    scheduled = {"certificate": certificate, "run": {"schedule": {"compile_key": "shape", "size": 12,
                                                                  "signatures": 99, "shapes": 99}}}
    command = rerun_command(scheduled, tmp_path)
    assert command[command.index("--schedule") + 1:command.index("--schedule") + 4] == ["on", "--compile-key",
                                                                                         "shape"]
    for run in ({"schedule": None}, {}):  # drawn freely, or made before schedules (which drew freely)
        free = rerun_command({"certificate": certificate, "run": run}, tmp_path)
        assert free[free.index("--schedule") + 1] == "off"


def test_a_shape_larger_than_a_census_case_may_be_is_drawn_within_its_budget() -> None:
    """A shape schedule holds a very long axis (140,000 elements at most); a census case holds at
    most 65,536. Such an entry gives its signature a shape drawn within the budget, where its
    fixed shape once drove the batch's budget below zero (a suite error on every census test)."""
    vspec = spec.load(12)
    entries = schedule.shapes(vspec, "7:12:float16", 24, True)
    assert any(math.prod(e.shape) > LARGEST_INVALID for e in entries)
    for _ in range(40):
        for case in undefined_decoder(vspec, "float16", 8, ("C14",), entries).decode(os.urandom(SIZE * 8)):
            assert case.data.size <= LARGEST_INVALID
