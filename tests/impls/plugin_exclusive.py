"""A plug-in that, like a runtime holding a device, loads in one worker process at a time: a
second worker fails to import it while the first lives."""

from __future__ import annotations

import fcntl

from tests.impls.plugin_faulty import by_value  # noqa: F401  (one that crashes when asked to)
from tests.impls.plugin_good import argmin  # noqa: F401  (the function under test)

# The device: an exclusive lock on this very file, held while this process lives (a file every
# worker reads, sandboxed or not; a lock needs no write access).
_HELD = open(__file__, "rb")  # noqa: SIM115
try:
    fcntl.flock(_HELD, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    raise RuntimeError("the device is held by another process") from None
