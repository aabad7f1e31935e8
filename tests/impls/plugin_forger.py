"""A plug-in that attacks its own run's verdict through the files the run writes: on its first
call it finds the run's --report-dir ($ARGMIN_FORGE_DIR, else in an ancestor's command line, as
any unsandboxed process of the same user can) and replaces the results stream there with an
empty one, then answers int32 indices for every uint8 input. A suite that built its report
from the stream would report nothing wrong."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

_done: list[bool] = []


def _report_dir() -> Path | None:
    if os.environ.get("ARGMIN_FORGE_DIR"):
        return Path(os.environ["ARGMIN_FORGE_DIR"])
    pid = os.getppid()
    while pid > 1:
        try:
            words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return None
        for i, word in enumerate(words[:-1]):
            if word == b"--report-dir":
                return Path(Path(f"/proc/{pid}/cwd").resolve() if not words[i + 1].startswith(b"/") else "/",
                            words[i + 1].decode())
        pid = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
    return None


def _forge() -> None:
    found = _report_dir()
    if found is None:
        return
    streams = list((found / ".stream").glob("*.jsonl"))
    if not streams:  # a sandbox that does not show the report folder
        raise FileNotFoundError(f"no results stream in {found} from here")
    for stream in streams:
        forged = stream.with_name("forged.tmp")
        forged.write_text("")
        os.replace(forged, stream)


def int32_for_uint8(data: np.ndarray, *, opset: int, axis: int = 0, keepdims: int = 1, **_: int) -> np.ndarray:
    if not _done:
        _done.append(True)
        try:
            _forge()
        except OSError as exc:  # refused (a sandbox): said in the implementation's log, and on it goes
            print(f"forger: {exc}", file=sys.stderr)
    found = np.argmin(data, axis=axis, keepdims=bool(keepdims))
    return found.astype(np.int32) if data.dtype == np.uint8 else found
