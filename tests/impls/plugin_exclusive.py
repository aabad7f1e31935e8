"""A plug-in that, like a runtime holding a device, loads in one worker process at a time: a
second worker of the same run (the same parent) fails to import it while the first lives."""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path

from tests.impls.plugin_good import argmin  # noqa: F401  (the function under test)

_HELD = (Path(tempfile.gettempdir()) / f"argmin-exclusive-{os.getuid()}-{os.getppid()}.lock").open("w")
try:
    fcntl.flock(_HELD, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    raise RuntimeError("the device is held by another process") from None
