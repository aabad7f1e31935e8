"""What the implementation under test prints. A worker's stdout and stderr are a pipe to the
process that owns the run, never a descriptor on a host file (which a plug-in could reopen,
truncate or open to everyone), and a thread of that process copies at most LOG_CAP bytes of it
into the run's log, ``implementation.log`` (mode 0644), then says where it cut and reads the rest
only to drop it: an implementation that writes without end neither fills the disk nor slows the
run, since its pipe is always read."""

from __future__ import annotations

import contextlib
import os
import stat
import threading

from results.sizes import format_size

LOG_CAP = 8 << 20  # bytes of output the log keeps, over every worker of the run
_MARKS = 64 << 10  # room past the cap for the lines that say where it cut (one per worker at most)
_CHUNK = 1 << 16


def _cut_line() -> bytes:
    return (f"\n[argmin-conformance: the implementation's output was cut here, at {format_size(LOG_CAP)}; "
            f"what it wrote after is not kept]\n").encode()


def open_log(path: str | None) -> int:
    """The log opened for appending, never through a symbolic link (made 0644 where missing);
    this process's stderr (a copy of its descriptor) where there is no log."""
    if path is None:
        return os.dup(2)
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)


class Drain:
    """Reads one worker's output pipe until every process holding it has ended, keeping what the
    cap allows. ``join`` waits for what is in flight once the worker has ended."""

    def __init__(self, pipe: int, log: str | None) -> None:
        self._pipe, self._log = pipe, log
        self.dropped = 0
        self._thread = threading.Thread(target=self._run, name="argmin-output", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            out = open_log(self._log)
        except OSError:
            out = None
        written, cut = 0, False
        try:
            while chunk := os.read(self._pipe, _CHUNK):
                if out is None:
                    continue
                kept = chunk[:max(0, LOG_CAP - self._size(out, written))]
                if kept:
                    written += os.write(out, kept)
                if len(kept) < len(chunk):
                    self.dropped += len(chunk) - len(kept)
                    if not cut and self._size(out, written) < LOG_CAP + _MARKS:
                        written += os.write(out, _cut_line())
                    cut = True
        except OSError:
            pass
        finally:
            os.close(self._pipe)
            if out is not None:
                os.close(out)

    @staticmethod
    def _size(out: int, written: int) -> int:
        """How much the log holds: the file's size (every worker of the run appends to it), or
        what this drain wrote where the log is a terminal or a pipe."""
        with contextlib.suppress(OSError):
            status = os.fstat(out)
            if stat.S_ISREG(status.st_mode):
                return status.st_size
        return written

    def join(self, seconds: float) -> None:
        self._thread.join(seconds)
