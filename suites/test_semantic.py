"""Semantic properties: every valid input of every type, judged exactly against the oracle
(dtype, shape, index range, minimum, tie rule, defaults, axis, zero-size dimensions)."""

from engine.judging.run import run_task

SUITE = "property"


def test_semantic(task, conformance, request) -> None:
    run_task(conformance, task, request.node.nodeid)
