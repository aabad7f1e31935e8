"""Rejection clauses: inputs the version must refuse (axis out of range, rank 0, types outside
T, undeclared attributes) must raise."""

from engine.judging.run import run_task

SUITE = "rejection"


def test_rejection(task, conformance, request) -> None:
    run_task(conformance, task, request.node.nodeid)
