"""A plug-in that reports what it may do where it runs, instead of an argmin: for each path in
$ARGMIN_PROBE_WRITE (os.pathsep-separated) whether it can create a file there (1) or not (0),
then the number of processes its /proc shows, then whether it reached $ARGMIN_PROBE_PORT on the
loopback address, then whether HOME, TMPDIR and XDG_CACHE_HOME are inside its temporary folder."""

from __future__ import annotations

import os
import socket
import tempfile

import numpy as np


def _writes(folder: str) -> int:
    try:
        with tempfile.NamedTemporaryFile(dir=folder):
            return 1
    except OSError:
        return 0


def _reaches(port: int) -> int:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return 1
    except OSError:
        return 0


def probe(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    folders = [folder for folder in os.environ["ARGMIN_PROBE_WRITE"].split(os.pathsep) if folder]
    scratch = tempfile.gettempdir()
    homes = [os.environ[name].startswith(scratch) for name in ("HOME", "TMPDIR", "XDG_CACHE_HOME")]
    processes = sum(entry.isdigit() for entry in os.listdir("/proc"))
    return np.array([*map(_writes, folders), processes, _reaches(int(os.environ["ARGMIN_PROBE_PORT"])),
                     int(all(homes))], dtype=np.int64)
