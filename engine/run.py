"""Running tasks: the Hypothesis wiring of one test (profile, per-test seed, batches of cases),
the fixed vectors, and a whole run without pytest (adequacy scoring, the project's own tests)."""

from __future__ import annotations

import contextlib
import hashlib

import hypothesis

import spec
from generators import BATCH, Case, profiles, rejection_cases, semantic_cases, undefined_cases
from generators.onnx_cases import onnx_node_cases

from .options import Settings
from .plan import SUITES, Task, plan
from .session import Nonconformance, Session


def run_test(session: Session, test_id: str, strategy: hypothesis.strategies.SearchStrategy, task: Task) -> None:
    """Run one Hypothesis test over ``strategy`` (batches of cases) with the run's profile and seed."""
    settings = session.settings
    profile = profiles.load(settings.profile)
    # The explain phase traces every executed line to annotate a failure: slow, and our
    # counterexample already says what went wrong.
    phases = [phase for phase in profile.phases if phase is not hypothesis.Phase.explain]

    @hypothesis.settings(profile, database=None, report_multiple_bugs=False, phases=phases)
    @hypothesis.given(cases=strategy)
    def test(cases: tuple[Case, ...]) -> None:
        for case in cases:
            session.check(case, task.suite)

    if settings.seed is not None:
        # Each test gets its own seed derived from the run's, so the twelve types of a version
        # do not all see the same shapes and positions.
        derived = int.from_bytes(hashlib.sha256(f"{settings.seed}:{task.suite}:{task.id}".encode()).digest()[:8], "big")
        test = hypothesis.seed(derived)(test)
    session.begin(test_id)
    try:
        test()
    finally:
        session.end()


def run_fixed(session: Session, test_id: str, cases: list[Case]) -> None:
    """Judge every fixed case (no search, no shrinking); raise once at the end if any failed."""
    failures = []
    for case in cases:
        session.begin(f"{test_id}[{case.tags[-1]}]")
        try:
            session.check(case, "fixed")
        except Nonconformance as exc:
            failures.append(f"{case.tags[-1]}: {exc}")
        finally:
            session.end()
    if failures:
        raise Nonconformance("\n".join(failures))


def run_task(session: Session, task: Task, test_id: str) -> None:
    vspec = spec.load(task.version)
    if task.suite == "fixed":
        restriction = session.settings.type_names
        run_fixed(session, test_id, [c for c in onnx_node_cases(vspec)
                                     if restriction is None or c.type_name in restriction])
    elif task.suite == "property":
        run_test(session, test_id, semantic_cases(vspec, task.type_name, batch=BATCH), task)
    elif task.suite == "rejection":
        run_test(session, test_id, rejection_cases(vspec, task.clause, batch=BATCH), task)
    else:
        run_test(session, test_id, undefined_cases(vspec, task.type_name, batch=BATCH), task)


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
