"""The suite's detection power and its freedom from false alarms, proven on the zoo: every
implementation with a semantic bug or a crash is judged non-conformant in exactly the versions
where it has one, caught by the clause its docstring names; one that computes invalid models is
conformant and lenient there, one that refuses whole types conformant with those types named as
not implemented; and every correct one is judged conformant at every version (including those
whose NaN, empty-axis and tie behaviour differs from numpy's)."""

from __future__ import annotations

from collections import Counter

import pytest

import zoo
from engine.config.options import validate
from engine.config.plan import Task
from engine.judging.run import run_all, run_task
from engine.judging.session import Nonconformance, Session
from generators import Case, profiles
from results import OBSERVED
from results.verdict import CONFORMANT, NON_CONFORMANT, standing, verdicts

# An index kept in 16 bits goes negative past 32,767 (out of range, C4) and wraps back into range
# past 65,535 (a wrong index, C5): which one the search lands on first depends on the axis length.
SAME_BUG = {"index-int16": {"C4", "C5"}}
# Answering 0 where index 0 holds a tied minimum breaks the tie rule (C6) rather than the minimum.
SHAPE_BUGS = ("slices-beyond-512-zero", "vector-tail-zero", "grid-limit-65535",
              "tile-rows-lost-past-first-column-block")
SAME_BUG.update({name: {"C5", "C6"} for name in SHAPE_BUGS})
# Bugs that only the largest shapes reach (past 65,535 slices; a reduced axis over 16 with an inner
# extent over 1,024): the standard profile finds them at every version (below), the quick one at
# some (seed 1: ArgMin-11 and 13 for the tile).
STANDARD_ONLY = {"grid-limit-65535", "tile-rows-lost-past-first-column-block"}
IN_PROCESS = [e for e in zoo.ENTRIES if e.bug_class not in zoo.registry.FAULT_CLASSES and e.name not in STANDARD_ONLY]
FAULTY = [e for e in zoo.ENTRIES if e.bug_class in zoo.registry.FAULT_CLASSES and not e.correct]


def _run(impl: str, **options: str):
    profiles.register()
    settings = validate({"impl": impl, "profile": "quick", "seed": "1", "isolation": "none", **options})
    return settings, run_all(settings)


@pytest.mark.e2e
@pytest.mark.parametrize("entry", IN_PROCESS, ids=[e.name for e in IN_PROCESS])
def test_zoo_entry_is_judged_as_its_docstring_says(entry: zoo.Entry) -> None:
    settings, run = _run(entry.impl)
    judged = {v: standing(run.results, v, run.census) for v in settings.versions}
    broken_at = {version for version, s in judged.items() if s.verdict != CONFORMANT}
    assert broken_at == set(entry.non_conformant), f"{entry.name}: {entry.summary}"
    for version, clause in entry.violates.items():
        if entry.role == "strictness":
            computed = {e.clause for e in judged[version].strictness.clauses if e.computed}
            assert clause in computed, f"{entry.name} at v{version}: lenient on {sorted(computed)}, not {clause}"
        elif entry.role == "scope":
            claimed = {t for t in entry.not_implemented if t in judged[version].scope.claimed}
            assert claimed <= set(judged[version].scope.not_implemented), (entry.name, version, judged[version].scope)
            continue
        failing = {r.clause for r in run.results if r.version == version and r.outcome != "pass"
                   and r.kind != "undefined"}
        accepted = SAME_BUG.get(entry.name, {clause})
        assert accepted & failing, f"{entry.name} at v{version}: caught by {sorted(failing)}, not {clause}"
        failure = next(r for r in run.results if r.version == version and r.clause in accepted and r.outcome != "pass")
        assert failure.counterexample is not None and failure.counterexample.input.values is not None
    for version in set(settings.versions) - set(entry.violates):
        assert judged[version].strictness.level != "lenient" and not judged[version].scope.not_implemented


@pytest.mark.e2e
@pytest.mark.parametrize("entry", FAULTY, ids=[e.name for e in FAULTY])
def test_crashing_and_hanging_implementations_are_survived(entry: zoo.Entry) -> None:
    """A crash or hang on any input (valid, invalid, or undefined as ArgMin-1's negative axes) is
    survived, recorded, and fails the headline."""
    version = 13 if 13 in entry.violates else min(entry.violates)
    settings, run = _run(entry.impl, isolation="process", timeout="1", versions=str(version), dtypes="float,int32")
    outcomes = {r.outcome for r in run.results} | {c.status for c in run.census}
    assert outcomes & {"crash", "timeout"}, outcomes
    assert verdicts(run.results, settings.versions, run.census)[version] != CONFORMANT
    # The run carried on after the fault: other tasks still judged cases that passed.
    assert sum(r.outcome == "pass" for r in run.results) > 50


@pytest.mark.e2e
@pytest.mark.parametrize("name", SHAPE_BUGS)
def test_shape_bugs_are_caught_at_every_version_with_the_standard_profile(name: str) -> None:
    """Bugs at the boundaries kernels split on (more than 512 or 65,535 slices; a last dimension
    that is not a multiple of 8; a long axis over a wide inner extent) are found by the shape
    families, not by the pinned floor."""
    item = zoo.entry(name)
    settings, run = _run(item.impl, profile="standard")
    assert verdicts(run.results, settings.versions) == dict.fromkeys(settings.versions, NON_CONFORMANT)
    for version in settings.versions:
        failures = [r for r in run.results if r.version == version and r.outcome == "fail"]
        assert {r.clause for r in failures} <= SAME_BUG[name] and failures, (version, failures)
        assert not any("family:floor" in r.tags for r in failures), "caught by a generated shape"


SINGLE_TYPE_BUGS = [("bfloat16-flushes-subnormals", 13, "bfloat16"), ("float16-negative-zero-below", 12, "float16"),
                    ("float16-negative-zero-below", 13, "float16")]


@pytest.mark.parametrize(("name", "version", "type_name"), SINGLE_TYPE_BUGS)
def test_quick_catches_single_type_special_value_bugs_on_every_seed(name: str, version: int, type_name: str) -> None:
    """The special-value floor: a bug confined to one value family of one type is caught by the
    quick profile on 10 seeds out of 10 (without it, 3 to 5 seeds in 11 missed such bugs)."""
    item, caught = zoo.entry(name), []
    profiles.register()
    for seed in range(1, 11):
        settings = validate({"impl": item.impl, "profile": "quick", "seed": str(seed), "isolation": "none",
                             "versions": str(version), "dtypes": type_name})
        session = Session(settings)
        try:
            run_task(session, Task("property", version, type_name), f"property::v{version}-{type_name}")
        except Nonconformance:
            caught.append(seed)
        finally:
            session.close()
        assert any(r.outcome == "fail" and r.clause == item.violates[version] for r in session.results), seed
    assert caught == list(range(1, 11))


@pytest.mark.parametrize("name", ["python-lists", "big-endian-indices"])
def test_lists_empty_lists_scalars_and_big_endian_answers_pass(name: str) -> None:
    """Answers are read by value: a list (an empty one included, which numpy reads as float64),
    a bare int, or int64 in big-endian byte order is conformant where its values are right."""
    settings, run = _run(zoo.entry(name).impl, dtypes="float,int8")
    assert verdicts(run.results, settings.versions) == dict.fromkeys(settings.versions, CONFORMANT)
    semantic = [r for r in run.results if r.kind == "semantic"]
    assert all(r.outcome == "pass" for r in semantic)
    assert any("zero-size:yes" in r.tags for r in semantic), "no empty result was judged"
    assert any("rank:1" in r.tags and "keepdims:0" in r.tags for r in semantic), "no rank-0 result was judged"
    # Through a worker process too: whether an answer is read by value crosses the pipe.
    settings, run = _run(zoo.entry(name).impl, isolation="process", versions="12", dtypes="float16")
    assert verdicts(run.results, settings.versions) == {12: CONFORMANT}


def test_census_warns_about_incoherent_nan_answers() -> None:
    _, run = _run("tests/impls/plugin_census.py:nan_rule_by_length", versions="13", dtypes="float")
    nan = [record for record in run.census if record.topic == "C14"]
    assert nan, "no NaN observation was recorded"
    common = set.intersection(*(set(record.fits) for record in nan))
    assert not common, f"an incoherent NaN policy was read as {common}"


def test_census_reads_a_coherent_nan_policy() -> None:
    _, run = _run("zoo.correct:numpy_argmin", versions="13", dtypes="float")
    nan = [record for record in run.census if record.topic == "C14"]
    assert "nan-is-min" in set.intersection(*(set(record.fits) for record in nan))


def test_tie_census_at_v1_records_the_choice() -> None:
    _, run = _run("zoo.correct:python_loop", versions="1", dtypes="int32")
    ties = [record for record in run.census if record.topic == "C6"]
    assert ties and all(record.fits == ["last"] for record in ties)


def test_each_input_is_asked_once_per_test_and_counted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches repeat inputs (the simplest input fills the first batch; shrinking replays whole
    batches): the implementation is asked each distinct input once per test (census inputs
    twice: the second ask checks the answer is the same), and every answer is recorded once."""
    asked: Counter = Counter()
    call_many = Session.call_many

    def counting(self: Session, calls, runner=None, pack=False, units=None, faults=None):
        for data, version, attributes, _form in calls:
            asked[self.test_id, Case(version, data, attributes).key()] += 1
        return call_many(self, calls, runner, pack, units, faults)

    monkeypatch.setattr(Session, "call_many", counting)
    _, run = _run("zoo.correct:numpy_argmin", versions="13", dtypes="float,int8")
    census = {key for key in asked if key[0].startswith("census[")}
    # An input two census topics share (an empty input whose axis is empty) is asked for each.
    assert census and all(asked[key] % 2 == 0 for key in census), "a census input was not asked a second time"
    assert all(n == 1 for key, n in asked.items() if key not in census), "an input was asked twice in one test"
    assert len(run.results) == len(asked) + sum(asked[key] // 2 - 1 for key in census)
    # a correct implementation: nothing failed, so nothing was shrunk, and every call was a case
    assert all(r.outcome in ("pass", OBSERVED) for r in run.results)
