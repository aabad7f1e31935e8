"""A plug-in that, as it is imported, appends code to onnx.reference, a module an earlier suite's
own process imported only after the implementation had loaded (the test puts a copy of onnx
first on the path: never the real virtualenv). Whatever process later imports the module runs
the code, which leaves a mark named after its pid in $ARGMIN_HOSTILE_MARKS. It answers as the
broken plug-ins of plugin_attacks do."""

from __future__ import annotations

import importlib.util
import sys
import sysconfig

from tests.impls.plugin_attacks import broken

PAYLOAD = ("\nimport os as _os, pathlib as _pathlib\n"
           "_pathlib.Path(_os.environ['ARGMIN_HOSTILE_MARKS'], f'ran-in-{_os.getpid()}').write_text('trojan')\n")

TARGET = importlib.util.find_spec("onnx.reference").origin
if TARGET.startswith(sysconfig.get_paths()["purelib"]):
    # The test's copy is not first on the path: never plant code in the real virtualenv (the test
    # then fails, as the attack was not made where it looks).
    print(f"trojan withheld: {TARGET} is the real virtualenv's", file=sys.stderr, flush=True)
else:
    try:
        with open(TARGET, "a", encoding="utf-8") as module:
            module.write(PAYLOAD)
    except OSError as exc:
        print(f"trojan refused: {exc}", file=sys.stderr, flush=True)


def argmin(data, *, opset: int, **attributes: int):
    return broken(data, attributes)
