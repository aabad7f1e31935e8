"""The memory a worker process shares with the process that owns the run, for large inputs: they
travel through it instead of the pipe (a pipe holds 64 KiB, so a large input would cost a dozen
wake-ups of both processes, and pickling copies it twice). The worker reads them back
(engine.asking.worker); this process writes them and never reads the arena."""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Sequence

import numpy as np

try:
    import fcntl
except ImportError:  # Windows: no process isolation at all
    fcntl = None

from engine.asking.calls import CallArgs
from engine.contract.adapters import Schedule

# Inputs at least this large travel through the arena; smaller ones are pickled in the request.
SHARED_MIN_BYTES = 32 << 10


class Arena:
    """Memory shared with one worker for large inputs: an anonymous file (``memfd``) the worker
    inherits, sealed before it starts so that it can neither shrink nor grow it (a worker that
    truncated a plain shared file made this process die of SIGBUS on its next write there) nor
    map it writable again: the worker reads inputs from it, this process never reads it. Where
    the system has no sealed memfd (macOS), there is no arena and every input travels pickled
    in the request (``descriptor`` is None). Nothing is left behind however either process ends."""

    SIZE = 32 << 20

    def __init__(self) -> None:
        self.descriptor: int | None = None
        self.memory: mmap.mmap | None = None
        self.view: np.ndarray | None = None
        if not hasattr(os, "memfd_create") or fcntl is None:
            return
        self.descriptor = os.memfd_create("argmin-arena", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(self.descriptor, self.SIZE)
            self.memory = mmap.mmap(self.descriptor, self.SIZE)
            _seal(self.descriptor)
        except BaseException:
            self.close()
            raise
        self.view = np.frombuffer(self.memory, np.uint8)

    def release(self) -> None:
        """Close the descriptor (once the worker has inherited it): the mapping stays."""
        if self.descriptor is not None:
            os.close(self.descriptor)
            self.descriptor = None

    def close(self) -> None:
        self.release()
        self.view = None
        if self.memory is not None:
            with contextlib.suppress(BufferError, ValueError):
                self.memory.close()

    def pack(self, calls: Sequence[CallArgs], units: Sequence[Sequence[int]],
             refused: Sequence[bool | None], exact: bool = False, schedule: Schedule | None = None) -> list[tuple]:
        """The packs of calls as sent (``units``: the indices of each pack's calls), each as
        ``([data, ...], version, [attributes, ...], form, refused, exact, schedule)``: large inputs
        copied into the arena (their place, dtype and shape sent instead), the rest as they are,
        until the arena is full; ``refused``: per pack, whether its type was refused alone
        (worker.answers)."""
        sent, offset = [], 0
        for unit in units:
            datas = []
            for index in unit:
                data = calls[index][0]
                size = data.nbytes
                if self.view is not None and size >= SHARED_MIN_BYTES and offset + size <= self.SIZE:
                    self.view[offset:offset + size] = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
                    datas.append((offset, data.dtype, data.shape))
                    offset += -(-size // 64) * 64  # aligned for any dtype
                else:
                    datas.append(data)
            _, version, _, form = calls[unit[0]]
            sent.append((datas, version, [dict(calls[index][2]) for index in unit], form, refused[len(sent)], exact,
                         schedule))
        return sent


# Seals that make a memfd's size fixed and keep any new mapping of it read-only (Linux 5.1 for the
# last; fcntl names it only from Python 3.12). An older kernel refuses it: the size seals hold alone.
_F_SEAL_FUTURE_WRITE = getattr(fcntl, "F_SEAL_FUTURE_WRITE", 0x0010)


def _seal(descriptor: int) -> None:
    fixed = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
    try:
        fcntl.fcntl(descriptor, fcntl.F_ADD_SEALS, fixed | _F_SEAL_FUTURE_WRITE)
    except OSError:
        fcntl.fcntl(descriptor, fcntl.F_ADD_SEALS, fixed)
