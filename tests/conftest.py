"""The project's own tests already use every core, one test process per core: a run that a test
starts through the front door (``python -m suites``), which would spread over every core too,
runs in one process instead (pytest-xdist's ``PYTEST_XDIST_AUTO_NUM_WORKERS``, read by
``suites.__main__.cores``), so two cores do not carry a test process per core inside a test
process per core. Tests of the spreading itself pass ``-n`` explicitly."""

from __future__ import annotations

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # in pytest-xdist's test processes only: their own count is settled
        os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"] = "1"
