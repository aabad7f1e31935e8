"""The census of undefined behaviour: NaN, empty axes, out-of-set attribute values, and the
version-specific gaps. Nothing here can fail the verdict; every observation is recorded."""

from __future__ import annotations

import spec
from generators import undefined_cases
from suites.harness import Conformance, run_test


def test_census(version: int, dtype: str, conformance: Conformance, settings, request) -> None:
    run_test(conformance, request.node.nodeid, undefined_cases(spec.load(version), dtype), "census", settings)
