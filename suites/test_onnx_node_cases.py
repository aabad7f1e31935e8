"""Fixed vectors: ONNX's own 16 ArgMin node tests, at every version where each is valid."""

from engine.judging.run import run_task

SUITE = "fixed"


def test_onnx_node_cases(task, conformance, request) -> None:
    run_task(conformance, task, request.node.nodeid)
