"""Sessions: ``tests`` (the project's own tests) and ``lint`` (ruff)."""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "virtualenv"
nox.options.sessions = ["tests", "lint"]

PYPROJECT = nox.project.load_toml("pyproject.toml")
RUNTIME = PYPROJECT["project"]["dependencies"]


@nox.session
def tests(session: nox.Session) -> None:
    """The project's own tests, at the quick Hypothesis profile."""
    session.install(*RUNTIME, *nox.project.dependency_groups(PYPROJECT, "test"))
    session.run("pytest", "tests", *session.posargs, env={"ARGMIN_PROFILE": "quick"})


@nox.session
def lint(session: nox.Session) -> None:
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"))
    session.run("ruff", "check", ".")
