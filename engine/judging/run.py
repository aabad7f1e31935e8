"""Running tasks: the Hypothesis wiring of one test (profile, per-test seed, batches of cases,
one search per distinct failure), the fixed vectors, and a whole run without pytest (adequacy
scoring, the project's own tests)."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import hypothesis
from hypothesis import strategies as st

import spec
from engine.asking.packing import PACKED_FORMS
from engine.config.options import Settings
from engine.config.plan import SUITES, Task, plan
from engine.config.schedules import task_schedule
from engine.contract.forms import QUOTA_FORMS
from engine.judging.session import PACKED_SUITES, SEARCHES_PER_TEST, Nonconformance, Session
from generators import (
    BATCH,
    Batch,
    Case,
    census_floor,
    profiles,
    quotas,
    semantic_cases,
    semantic_floor,
    undefined_cases,
)
from generators.onnx_cases import onnx_node_cases
from generators.schedule import Entry
from generators.strategies import (
    LARGEST_INVALID,
    census_split,
    rejection_decoder,
    semantic_decoder,
    undefined_decoder,
)
from results.records import test_key

# Cases per Hypothesis example where they may be packed (valid and census cases in every model
# form), so that a batch fills packed models; the test's case count stays about the same
# (run_test divides the examples accordingly). With --packing off too: packing must not change
# which cases are asked.
PACKED_BATCH = 32


@dataclass(frozen=True)
class TestCases:
    """What one test asks: its special-value ``floor`` first, then its stratified ``quota`` in
    batches of ``batch``, then ``generated`` cases drawn by Hypothesis from ``strategy`` (none
    where the test is pinned cases only)."""

    floor: tuple[Case, ...]
    quota: tuple[Case, ...]
    batch: int
    strategy: hypothesis.strategies.SearchStrategy | None = None
    generated: float = 0.0
    schedule: tuple[Entry, ...] = ()  # the signatures (and shapes) the cases are drawn within; (): free


def _searches(session: Session, search: Callable[[], None]) -> None:
    """Search until a search finds nothing new (or the test's search or fault budget is spent);
    every failure found is recorded and set aside before the next search."""
    for _ in range(SEARCHES_PER_TEST):
        try:
            search()
        except Nonconformance:
            session.found()
            if session.searching_on:
                continue
        return


def _finish(session: Session) -> None:
    reported = session.end()
    if reported:
        raise Nonconformance(f"{len(reported)} failure(s):\n" + "\n".join(reported))


def batch_size(task: Task, generated: float) -> int:
    """Cases per Hypothesis example for ``task``: PACKED_BATCH where they may be packed (but no
    more than the test's ``generated`` cases, as at the quick profile), else BATCH."""
    if task.form not in PACKED_FORMS or task.suite not in PACKED_SUITES:
        return BATCH
    return max(BATCH, min(PACKED_BATCH, round(generated)))


def test_label(settings: Settings, task: Task) -> str:
    """What seeds a test's draws: the run's seed and the test. Each test gets its own, so the
    twelve types of a version do not all see the same shapes and positions."""
    return f"{settings.seed}:{task.suite}:{task.id}"


def test_cases(task: Task, settings: Settings) -> TestCases:
    """The cases of one test of ``task`` at the run's profile: the profile's volume where volume
    finds bugs (valid cases in the symbolic form, the census's NaN inputs), a stratified quota
    elsewhere (see generators.quotas), within the test's schedule where it has one."""
    vspec, profile = spec.load(task.version), settings.profile
    label, volume = test_label(settings, task), profiles.load(profile).max_examples * BATCH
    entries = task_schedule(task, settings)
    if task.suite == "rejection":
        decoder = rejection_decoder(vspec, task.clause, BATCH, settings.type_names)
        quota = quotas.rejection_quota(profile, settings.schedule_size is not None)
        return TestCases((), quotas.stratified(decoder, label, quota, quotas.REJECTION_KEYS,
                                               quotas.rejection_required(vspec, task.clause), LARGEST_INVALID), BATCH)
    if task.suite == "property":
        floor = semantic_floor(vspec, task.type_name)
        if task.form in QUOTA_FORMS:
            quota = quotas.stratified(semantic_decoder(vspec, task.type_name, BATCH), label,
                                      quotas.FORM_QUOTA[profile], quotas.FORM_KEYS, quotas.form_required(vspec))
            return TestCases(floor, quota, batch_size(task, len(quota)))
        batch = batch_size(task, volume)
        return TestCases(floor, (), batch, semantic_cases(vspec, task.type_name, batch=batch, schedule=entries),
                         volume, entries)
    drawn, quota_topics = census_split(vspec, task.type_name)
    floor, quota = census_floor(vspec, task.type_name), ()
    entries = tuple(e for e in entries if e.shape is None or 0 not in e.shape)  # an empty input is a topic of its own
    if quota_topics:
        quota = quotas.stratified(undefined_decoder(vspec, task.type_name, BATCH, quota_topics, entries), label,
                                  quotas.census_quota(profile, quota_topics), quotas.CENSUS_KEYS,
                                  quotas.census_required(vspec, quota_topics), LARGEST_INVALID)
    if not drawn:
        return TestCases(floor, quota, batch_size(task, len(quota)), schedule=entries)
    # NaN keeps the share of the volume it has among the census's topics.
    generated = volume * len(drawn) / (len(drawn) + len(quota_topics))
    batch = batch_size(task, generated)
    return TestCases(floor, quota, batch, undefined_cases(vspec, task.type_name, batch=batch, topics=drawn,
                                                          schedule=entries), generated, entries)


def run_test(session: Session, test_id: str, task: Task, cases: TestCases) -> None:
    """Run one test: its pinned cases (each asked once per test, checked first in every search:
    a failure already set aside does not stop a later search), then its generated ones, with the
    run's profile and the test's own seed."""
    settings = session.settings
    profile = profiles.load(settings.profile)
    # The explain phase traces every executed line to annotate a failure: slow, and our
    # counterexample already says what went wrong. Hypothesis' shrinker is left out too: it
    # lowers the bytes a whole batch is decoded from, thousands of batches per failure (99 % of
    # a failing test's time), while engine.judging.minimize simplifies the failing case itself within
    # a budget of single asks.
    phases = [phase for phase in profile.phases if phase not in (hypothesis.Phase.explain, hypothesis.Phase.shrink)]
    if cases.strategy is None:
        phases = [hypothesis.Phase.explicit]
    # The profiles count examples of BATCH cases: a bigger batch takes fewer examples, never more
    # batches of BATCH than the profile's (whose element bound they keep).
    examples = max(1, min(round(cases.generated / cases.batch), profile.max_examples * BATCH // cases.batch))

    # A test of pinned cases only runs its explicit examples: its strategy is never drawn from.
    strategy = cases.strategy if cases.strategy is not None else st.just(Batch())

    @hypothesis.settings(profile, database=None, report_multiple_bugs=False, phases=phases, max_examples=examples)
    @hypothesis.given(cases=strategy)
    def test(cases: tuple[Case, ...]) -> None:
        session.check_all(cases, task.suite)

    # The floor, then the quota: Hypothesis runs explicit examples last-applied first.
    pinned = ([cases.floor] if cases.floor else []) + quotas.batches(cases.quota, cases.batch)
    for batch in reversed(pinned):
        test = hypothesis.example(cases=Batch(batch))(test)
    if settings.seed is not None:
        derived = int.from_bytes(hashlib.sha256(test_label(settings, task).encode()).digest()[:8], "big")
        test = hypothesis.seed(derived)(test)
    session.begin(test_id, task.form, task.suite, cases.schedule)
    try:
        _searches(session, test)
    except BaseException:
        session.end()
        raise
    _finish(session)


def run_fixed(session: Session, test_id: str, cases: list[Case], form: str | None = None) -> None:
    """Judge every fixed case (no search, no shrinking, no minimizing: the vectors are ONNX's)."""
    failures = []
    for case in cases:
        session.begin(f"{test_id}[{case.tags[-1]}]", form, "fixed")
        try:
            session.check(case, "fixed")
        except Nonconformance:
            session.found(minimizing=False)
        failures += [f"{case.tags[-1]}: {line}" for line in session.end()]
    if failures:
        raise Nonconformance("\n".join(failures))


def run_task(session: Session, task: Task, test_id: str) -> None:
    """One test of the run, which ends with its end mark once it has made every record (found
    failures included): a test that stops otherwise (an error of the suite, a process killed)
    leaves none, and the run knows it lost the test (results.records.lost_tests)."""
    vspec, since = spec.load(task.version), session.delivered()
    try:
        if task.suite == "fixed":
            restriction = session.settings.type_names
            run_fixed(session, test_id, [c for c in onnx_node_cases(vspec)
                                         if restriction is None or c.type_name in restriction], task.form)
        else:
            run_test(session, test_id, task, test_cases(task, session.settings))
    except Nonconformance:
        session.ended(test_key(task.suite, test_id), since)
        raise
    session.ended(test_key(task.suite, test_id), since)


def run_all(settings: Settings) -> Session:
    """A whole run without pytest: every task of every suite, each nonconformance recorded and
    the run carried on. The session's ``results`` and ``census`` hold what it judged."""
    session = Session(settings)
    try:
        for suite in SUITES:
            for task in plan(settings, suite):
                with contextlib.suppress(Nonconformance):
                    run_task(session, task, f"{suite}[{task.id}]")  # the task id in brackets, as pytest writes it
    finally:
        session.close()
    return session
