"""ONNX's own ArgMin node tests (the 16 cases in ``onnx.backend.test.case.node.argmin``), read
from the installed onnx package and turned into Cases for every version where they are valid."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

import numpy as np
import onnx
import onnx.backend.test.case.node.argmin as onnx_argmin

from spec import VersionSpec

from .case import Case


@dataclass(frozen=True)
class OnnxCase:
    """One ``expect(...)`` call of onnx's ArgMin case definitions."""

    name: str
    attributes: Mapping[str, int]
    data: np.ndarray
    output: np.ndarray  # what onnx expects


@cache
def onnx_cases() -> tuple[OnnxCase, ...]:
    """Every case, captured by standing in for the ``expect`` the module calls; numpy's global
    generator is seeded (and restored afterwards) so the random cases are the same each time."""
    captured = []

    def capture(node: onnx.NodeProto, inputs: list, outputs: list, name: str, **_: object) -> None:
        attributes = {a.name: int(onnx.helper.get_attribute_value(a)) for a in node.attribute}
        captured.append(OnnxCase(name, attributes, inputs[0], outputs[0]))

    original, state = onnx_argmin.expect, np.random.get_state()
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


def onnx_node_cases(vspec: VersionSpec) -> list[Case]:
    """The cases valid at ``vspec``: those using an attribute the version lacks are left out
    (they exercise no behaviour of it; the rejection suite covers unknown attributes)."""
    return [Case(vspec.version, case.data, dict(case.attributes), ("suite:onnx-node", f"onnx-case:{case.name}"))
            for case in onnx_cases() if all(key in vspec.attributes for key in case.attributes)]
