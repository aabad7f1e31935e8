"""Running tasks: the Hypothesis wiring of one test (profile, per-test seed, batches of cases,
one search per distinct failure), the fixed vectors, and a whole run without pytest (adequacy
scoring, the project's own tests)."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable

import hypothesis

import spec
from generators import (
    BATCH,
    Batch,
    Case,
    census_floor,
    profiles,
    rejection_cases,
    semantic_cases,
    semantic_floor,
    undefined_cases,
)
from generators.onnx_cases import onnx_node_cases

from .forms import SHARES
from .isolation import PACKED_FORMS
from .options import Settings
from .plan import SUITES, Task, plan
from .session import PACKED_SUITES, SEARCHES_PER_TEST, Nonconformance, Session

# Cases per Hypothesis example where they may be packed (valid and census cases in every model
# form), so that a batch fills packed models; the test's case count stays about the same
# (run_test divides the examples accordingly). With --packing off too: packing must not change
# which cases are asked.
PACKED_BATCH = 32


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


def batch_size(task: Task, profile_name: str) -> int:
    """Cases per Hypothesis example for ``task``: PACKED_BATCH where they may be packed (but no
    more than the test's whole share of the profile, as at the quick profile), else BATCH."""
    if task.form not in PACKED_FORMS or task.suite not in PACKED_SUITES:
        return BATCH
    return max(BATCH, min(PACKED_BATCH, round(_cases(task, profiles.load(profile_name)))))


def _cases(task: Task, profile: hypothesis.settings) -> float:
    """The generated cases the task's form has of the profile's budget (SHARES)."""
    return profile.max_examples * SHARES.get(task.form, 1.0) * BATCH


def run_test(session: Session, test_id: str, strategy: hypothesis.strategies.SearchStrategy, task: Task,
             floor: tuple[Case, ...] = (), batch: int = BATCH) -> None:
    """Run one test over ``strategy`` (batches of ``batch`` cases) with the run's profile and
    seed, on the task's model form's share of the profile's budget.
    ``floor``: pinned cases checked first in every search, as one explicit example, whatever the
    profile and seed (each is asked once per test; a failure already set aside does not stop a
    later search)."""
    settings = session.settings
    profile = profiles.load(settings.profile)
    # The explain phase traces every executed line to annotate a failure: slow, and our
    # counterexample already says what went wrong. Hypothesis' shrinker is left out too: it
    # lowers the bytes a whole batch is decoded from, thousands of batches per failure (99 % of
    # a failing test's time), while engine.minimize simplifies the failing case itself within
    # a budget of single asks.
    phases = [phase for phase in profile.phases if phase not in (hypothesis.Phase.explain, hypothesis.Phase.shrink)]
    # The profiles count examples of BATCH cases: a bigger batch takes fewer examples, never more
    # batches of BATCH than the profile's (whose element bound they keep).
    examples = max(1, min(round(_cases(task, profile) / batch), profile.max_examples * BATCH // batch))

    @hypothesis.settings(profile, database=None, report_multiple_bugs=False, phases=phases, max_examples=examples)
    @hypothesis.given(cases=strategy)
    def test(cases: tuple[Case, ...]) -> None:
        session.check_all(cases, task.suite)

    if floor:
        test = hypothesis.example(cases=Batch(floor))(test)
    if settings.seed is not None:
        # Each test gets its own seed derived from the run's, so the twelve types of a version
        # do not all see the same shapes and positions.
        derived = int.from_bytes(hashlib.sha256(f"{settings.seed}:{task.suite}:{task.id}".encode()).digest()[:8], "big")
        test = hypothesis.seed(derived)(test)
    session.begin(test_id, task.form)
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
        session.begin(f"{test_id}[{case.tags[-1]}]", form)
        try:
            session.check(case, "fixed")
        except Nonconformance:
            session.found(minimizing=False)
        failures += [f"{case.tags[-1]}: {line}" for line in session.end()]
    if failures:
        raise Nonconformance("\n".join(failures))


def run_task(session: Session, task: Task, test_id: str) -> None:
    vspec = spec.load(task.version)
    if task.suite == "fixed":
        restriction = session.settings.type_names
        run_fixed(session, test_id, [c for c in onnx_node_cases(vspec)
                                     if restriction is None or c.type_name in restriction], task.form)
    elif task.suite == "property":
        batch = batch_size(task, session.settings.profile)
        run_test(session, test_id, semantic_cases(vspec, task.type_name, batch=batch), task,
                 semantic_floor(vspec, task.type_name), batch)
    elif task.suite == "rejection":
        run_test(session, test_id, rejection_cases(vspec, task.clause, batch=BATCH), task)
    else:
        batch = batch_size(task, session.settings.profile)
        run_test(session, test_id, undefined_cases(vspec, task.type_name, batch=batch), task,
                 census_floor(vspec, task.type_name), batch)


def run_all(settings: Settings) -> Session:
    """A whole run without pytest: every task of every suite, each nonconformance recorded and
    the run carried on. The session's ``results`` and ``census`` hold what it judged."""
    session = Session(settings)
    try:
        for suite in SUITES:
            for task in plan(settings, suite):
                with contextlib.suppress(Nonconformance):
                    run_task(session, task, f"{suite}::{task.id}")
    finally:
        session.close()
    return session
