"""The pytest hook by which a finished conformance run reaches whoever reports on it.

The suites fire it once, in the process that owns the run, after every record is on disk; the
report layer (reports.pytest_plugin) and the front door listen. This is how the suites hand a
run over without importing its readers, as pytest's own JUnit writer listens to test reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .records import RawRun


def pytest_argmin_run_finished(run: RawRun, report_dir: Path, config: Any) -> None:
    """A conformance run has ended (complete or not); ``run`` holds everything it recorded and
    ``report_dir`` already holds its ``raw.json.gz``."""


def pytest_argmin_run_recovered(run: RawRun, report_dir: Path, config: Any) -> None:
    """A run that died before its end (killed) was found in the report dir when this one
    started; ``run`` holds its streamed records, marked incomplete, and ``report_dir`` (a folder
    of its own) already holds its ``raw.json.gz``."""
