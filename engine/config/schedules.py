"""Which schedule each test of a run draws its cases within (generators.schedule), and what the
run's schedules cover, for its record: a runtime that compiles per node gets signatures, one that
compiles per input shape signatures with a shape each, in the symbolic form of the property and
census tests, where the volume is."""

from __future__ import annotations

from typing import Protocol

import spec
from engine.config.plan import Planned, Task, plan
from engine.contract.forms import SYMBOLIC
from generators import schedule
from generators.build import empty_inputs_defined
from generators.schedule import Entry

SCHEDULED_SUITES = ("property", "census")


class Scheduled(Planned, Protocol):
    """What a schedule is made from of a run's settings (engine.config.options.Settings, which
    records the run's schedules: so this names no settings class)."""

    seed: int | None
    compile_key: str

    @property
    def schedule_size(self) -> int | None: ...


def task_schedule(task: Task, settings: Scheduled) -> tuple[Entry, ...]:
    """The schedule ``task``'s cases are drawn within, or () for the free draw. Every test of one
    version and type gets the same, so the census's inputs meet the nodes the property test
    compiled; the run's seed picks it, so runs with other seeds cover other signatures."""
    size = settings.schedule_size
    if size is None or task.form != SYMBOLIC or task.suite not in SCHEDULED_SUITES:
        return ()
    vspec, label = spec.load(task.version), f"{settings.seed}:{task.version}:{task.type_name}"
    if settings.compile_key == "shape":
        return schedule.shapes(vspec, label, size, empty_inputs_defined(vspec))
    return schedule.signatures(vspec, label, size)


def record(settings: Scheduled) -> dict[str, object] | None:
    """What the run's schedules are (report.json's ``run.schedule``): the compile key, the entries
    per test, and the distinct signatures (and shapes) over every test of the run; None where
    every case draws freely."""
    if settings.schedule_size is None:
        return None
    entries = [entry for suite in SCHEDULED_SUITES for task in plan(settings, suite)
               for entry in task_schedule(task, settings)]
    return {"compile_key": settings.compile_key, "size": settings.schedule_size, **schedule.covered(entries)}
