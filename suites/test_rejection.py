"""Rejection clauses: inputs the version must refuse (axis out of range, rank 0, types outside
T, undeclared attributes) must raise."""

from __future__ import annotations

import spec
from generators import rejection_cases
from suites.harness import Conformance, run_test


def test_rejection(version: int, conformance: Conformance, settings, request) -> None:
    run_test(conformance, request.node.nodeid, rejection_cases(spec.load(version)), "rejection", settings)
