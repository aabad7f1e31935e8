"""Results: what a run recorded, as plain data. The engine writes them (streamed as they are
judged, then saved as ``raw.json.gz``); the reports read them. The verdict rule lives here, once
(``results.verdict``, imported where it is used: it loads the spec, which a worker process reading
the words of ``results.outcomes`` has no use for)."""

from __future__ import annotations

import errno
import gzip
import json
import os
import stat
import zlib
from pathlib import Path
from typing import Any

from . import files
from .outcomes import OBSERVED, OUTCOMES
from .records import (
    CaseResult,
    CensusRecord,
    Counterexample,
    Example,
    HistoryModel,
    Pack,
    PackNode,
    RawRun,
    RunInfo,
    Tensor,
    dumps,
    from_json,
    to_json,
)

# Compressed: a standard run's records are about 14 MB of JSON and 0.9 MB gzipped. Runs written
# before compression (raw.json) still load.
RAW = "raw.json.gz"
IMPLEMENTATION_LOG = "implementation.log"  # beside the reports: what the implementation printed
PLAIN_RAW = "raw.json"

__all__ = [
    "IMPLEMENTATION_LOG",
    "OBSERVED",
    "OUTCOMES",
    "RAW",
    "CaseResult",
    "CensusRecord",
    "Counterexample",
    "Example",
    "HistoryModel",
    "Pack",
    "PackNode",
    "RawRun",
    "RunInfo",
    "Tensor",
    "Unreadable",
    "from_json",
    "load",
    "raw_path",
    "read_bounded",
    "read_json",
    "save",
    "to_json",
]


def save(run: RawRun, report_dir: Path) -> Path:
    """Write the run's records as ``raw.json.gz`` in ``report_dir`` (byte-identical for equal
    records: no time stamp in the gzip header), never through a link (``files.write``)."""
    Path(report_dir).mkdir(parents=True, exist_ok=True)
    path = files.write(Path(report_dir), RAW, gzip.compress(dumps(run).encode("utf-8"), compresslevel=6, mtime=0))
    (path.parent / PLAIN_RAW).unlink(missing_ok=True)  # an earlier run's, which would be read instead
    return path


def raw_path(path: Path) -> Path:
    """The raw results file of a report folder (``raw.json.gz``, or an older ``raw.json``), or
    ``path`` itself when it names a file."""
    path = Path(path)
    if not path.is_dir():
        return path
    return path / RAW if (path / RAW).exists() or not (path / PLAIN_RAW).exists() else path / PLAIN_RAW


# Reports and raw results are untrusted input (a vendor's files, opened by a customer): what is
# read of one file, and what it may decompress to, is bounded. A certify run's raw results hold
# about 20 MB gzipped and 300 MB of JSON.
FILE_CAP = 256 << 20
JSON_CAP = 1 << 30


class Unreadable(ValueError):
    """A file that is not read: too large, not a regular file, or decompressing past JSON_CAP.
    The message is one line naming the problem."""


def read_bounded(path: Path, cap: int = FILE_CAP) -> bytes:
    """A regular file's bytes, at most ``cap`` of them; a symlink, a FIFO or a device is refused."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unreadable(f"{path}: a symbolic link, which is not followed; name the file itself") from None
        raise
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise Unreadable(f"{path}: not a regular file; name a report file")
        data = file.read(cap + 1)
    if len(data) > cap:
        raise Unreadable(f"{path}: larger than {cap >> 20} MiB, more than any report or raw results take")
    return data


_PIECE = 1 << 20  # bytes zlib is asked for at a time: a gzip bomb never gets one large buffer


def _inflated(data: bytes, path: Path) -> bytes:
    """Gzip ``data`` decompressed piece by piece, at most JSON_CAP bytes of it."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    pieces, size, pending = [], 0, data
    try:
        while not inflater.eof:
            piece = inflater.decompress(pending, _PIECE)
            pending = inflater.unconsumed_tail
            if not piece and not pending:  # cut short: what there is goes to the JSON parser
                break
            size += len(piece)
            if size > JSON_CAP:
                raise Unreadable(f"{path}: decompresses to more than {JSON_CAP >> 20} MiB, more than any raw results "
                                 f"take; not read further")
            pieces.append(piece)
    except zlib.error as exc:
        raise Unreadable(f"{path}: a damaged gzip file ({exc}); pass an intact report or raw run file") from None
    return b"".join(pieces)


def read_json(path: Path) -> Any:
    """A JSON file, gzipped or not (told apart by gzip's magic bytes, not by the name), read
    within FILE_CAP and JSON_CAP; Unreadable (a ValueError) with a one-line message otherwise,
    this machine running out of memory for it included."""
    try:
        data = read_bounded(Path(path))
        if data[:2] == b"\x1f\x8b":
            data = _inflated(data, path)
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise Unreadable(f"{path}: JSON nested too deeply to be a report") from None
    except MemoryError:
        raise Unreadable(f"{path}: this process ran out of memory reading it (its limit is lower than the file "
                         f"needs); check it where more memory is allowed") from None


def load(path: Path) -> RawRun:
    """A run from a ``raw.json.gz`` or ``raw.json`` file, or the folder holding one."""
    return from_json(read_json(raw_path(path)))
