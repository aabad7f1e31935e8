"""The task plan: which tests a run consists of, derived from the settings and the spec."""

from __future__ import annotations

from dataclasses import dataclass

import spec

from .options import Settings

SUITES = ("fixed", "property", "rejection", "census")


@dataclass(frozen=True)
class Task:
    """One unit of a run: a suite at one version (and, for per-type suites, one type; for the
    rejection suite, one rejection clause)."""

    suite: str  # one of SUITES
    version: int
    type_name: str | None = None
    clause: str | None = None

    @property
    def id(self) -> str:
        return f"v{self.version}" + "".join(f"-{part}" for part in (self.type_name, self.clause) if part)


def plan(settings: Settings, suite: str) -> list[Task]:
    """The tasks of one suite for the selected versions and types."""
    tasks = []
    for version in settings.versions:
        vspec = spec.load(version)
        if suite == "fixed":
            tasks.append(Task(suite, version))
        elif suite == "rejection":
            tasks += [Task(suite, version, clause=c.id) for c in vspec.of_kind("rejection")]
        else:
            tasks += [Task(suite, version, name) for name in vspec.type_names
                      if settings.type_names is None or name in settings.type_names]
    return tasks
