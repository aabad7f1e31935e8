"""A plug-in that, like a runtime holding a device, loads in one worker process at a time: a
second worker of the same run (the same parent) fails to import it while the first lives."""

from __future__ import annotations

import os
import socket

from tests.impls.plugin_good import argmin  # noqa: F401  (the function under test)

# The device: a name in Linux's abstract socket namespace, held while this process lives (no
# file, so not in the worker's own temporary folder, which another worker does not share).
_HELD = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    _HELD.bind(f"\0argmin-exclusive-{os.getuid()}-{os.getppid()}")
except OSError:
    raise RuntimeError("the device is held by another process") from None
