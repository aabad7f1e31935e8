"""ONNX's own ArgMin node tests (the 16 cases in ``onnx.backend.test.case.node.argmin``), read
from the installed onnx package and turned into Cases for every version where they are valid."""

from __future__ import annotations

from functools import cache

import numpy as np
import onnx
import onnx.backend.test.case.node.argmin as onnx_argmin

from spec import Version

from .case import Case


@cache
def _captured() -> tuple[tuple[str, np.ndarray, tuple[tuple[str, int], ...]], ...]:
    """(name, input, attributes) of each case, captured by standing in for the ``expect`` the
    module calls; numpy's global generator is seeded so the random cases are the same each time."""
    captured = []

    def capture(node: onnx.NodeProto, inputs: list[np.ndarray], outputs: list[np.ndarray], name: str) -> None:
        attributes = tuple((a.name, int(onnx.helper.get_attribute_value(a))) for a in node.attribute)
        captured.append((name, inputs[0], attributes))

    original = onnx_argmin.expect
    state = np.random.get_state()
    onnx_argmin.expect = capture
    try:
        np.random.seed(0)
        for name in sorted(dir(onnx_argmin.ArgMin)):
            if name.startswith("export"):
                getattr(onnx_argmin.ArgMin, name)()
    finally:
        onnx_argmin.expect = original
        np.random.set_state(state)
    return tuple(captured)


def onnx_node_cases(version: Version) -> list[Case]:
    """The cases valid at ``version``: those using an attribute the version lacks are left out
    (they exercise no behaviour of it; the rejection suite covers unknown attributes)."""
    return [Case(version.number, data, dict(attributes), ("suite:onnx-node", f"onnx-case:{name}"))
            for name, data, attributes in _captured()
            if all(key in version.attributes for key, _ in attributes)]
