"""The census of undefined behaviour: NaN, empty axes, out-of-set attribute values, and the
version-specific gaps. Nothing here can fail the verdict; every observation is recorded."""

from engine.judging.run import run_task

SUITE = "census"


def test_census(task, conformance, request) -> None:
    run_task(conformance, task, request.node.nodeid)
