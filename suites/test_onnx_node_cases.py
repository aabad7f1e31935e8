"""Fixed vectors: ONNX's own 16 ArgMin node tests, at every version where each is valid."""

from __future__ import annotations

import spec
from generators.onnx_cases import onnx_node_cases
from suites.harness import Conformance, Nonconformance


def test_onnx_node_cases(version: int, conformance: Conformance, settings, request) -> None:
    cases = [c for c in onnx_node_cases(spec.load(version))
             if settings.dtypes is None or c.dtype_name in settings.dtypes]
    failures = []
    for case in cases:
        conformance.begin(f"{request.node.nodeid}[{case.tags[-1]}]")
        try:
            conformance.check(case, "fixed")
        except Nonconformance as exc:
            failures.append(f"{case.tags[-1]}: {exc}")
        finally:
            conformance.end()
    if failures:
        raise Nonconformance("\n".join(failures))
