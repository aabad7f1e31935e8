"""Semantic properties: every valid input of every type, judged exactly against the oracle
(dtype, shape, index range, minimum, tie rule, defaults, axis, zero-size dimensions)."""

from __future__ import annotations

import spec
from generators import semantic_cases
from suites.harness import Conformance, run_test


def test_semantic(version: int, dtype: str, conformance: Conformance, settings, request) -> None:
    run_test(conformance, request.node.nodeid, semantic_cases(spec.load(version), dtype), "property", settings)
