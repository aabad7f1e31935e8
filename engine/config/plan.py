"""The task plan: which tests a run consists of, derived from the settings and the spec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import spec
from engine.contract.forms import SUITES_IN_EVERY_FORM, SYMBOLIC


class Planned(Protocol):
    """What the plan reads of a run's settings (engine.config.options.Settings, which reads
    --shard through engine.config.shards, which plans: so the plan names no settings class)."""

    forms: tuple[str, ...]
    versions: tuple[int, ...]
    type_names: tuple[str, ...] | None

SUITES = ("fixed", "property", "rejection", "census")


@dataclass(frozen=True)
class Task:
    """One unit of a run: a suite at one version (and, for per-type suites, one type; for the
    rejection suite, one rejection clause)."""

    suite: str  # one of SUITES
    version: int
    type_name: str | None = None
    clause: str | None = None
    form: str | None = None  # the model form (engine.contract.forms); None for a function plug-in

    @property
    def id(self) -> str:
        # The first form keeps the plain id, so runs of function plug-ins and models read alike.
        parts = (self.type_name, self.clause, self.form if self.form not in (None, SYMBOLIC) else None)
        return f"v{self.version}" + "".join(f"-{part}" for part in parts if part)


def plan(settings: Planned, suite: str) -> list[Task]:
    """The tasks of one suite for the selected versions and types, in each model form the suite
    runs in (model-based implementations; the census only in the first form)."""
    forms = settings.forms or (None,)
    if suite not in SUITES_IN_EVERY_FORM:
        forms = forms[:1]
    tasks = []
    for form in forms:
        for version in settings.versions:
            vspec = spec.load(version)
            if suite == "fixed":
                tasks.append(Task(suite, version, form=form))
            elif suite == "rejection":
                tasks += [Task(suite, version, clause=c.id, form=form) for c in vspec.of_kind("rejection")]
            else:
                tasks += [Task(suite, version, name, form=form) for name in vspec.type_names
                          if settings.type_names is None or name in settings.type_names]
    return tasks
