"""One suite's tasks run on one Session, as a run does, for tests that look at the session
afterwards: its results, census records, calls, compiles and timeouts."""

from __future__ import annotations

from engine.config.options import Settings
from engine.config.plan import plan
from engine.judging.run import run_task
from engine.judging.session import Nonconformance, Session


def suite_session(chosen: Settings, suite: str) -> tuple[Session, int]:
    """The closed session after every task of ``suite``, and how many of them ended in a failure."""
    session, failed = Session(chosen), 0
    try:
        for task in plan(chosen, suite):
            try:
                run_task(session, task, suite)
            except Nonconformance:
                failed += 1
    finally:
        session.close()
    return session, failed
