"""Results: what a run recorded, as plain data. The engine writes them (streamed as they are
judged, then saved as ``raw.json.gz``); the reports read them. The verdict rule lives here, once."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from .records import (
    CENSUS,
    OUTCOMES,
    CaseResult,
    CensusRecord,
    Counterexample,
    Example,
    RawRun,
    RunInfo,
    Tensor,
    from_json,
    to_json,
)
from .verdict import CONFORMANT, NON_CONFORMANT, verdicts

# Compressed: a standard run's records are about 14 MB of JSON and 0.9 MB gzipped. Runs written
# before compression (raw.json) still load.
RAW = "raw.json.gz"
PLAIN_RAW = "raw.json"

__all__ = [
    "CENSUS", "CONFORMANT", "NON_CONFORMANT", "OUTCOMES", "RAW", "CaseResult", "CensusRecord", "Counterexample",
    "Example", "RawRun", "RunInfo", "Tensor", "from_json", "load", "raw_path", "read_json", "save", "to_json",
    "verdicts",
]


def save(run: RawRun, report_dir: Path) -> Path:
    """Write the run's records as ``raw.json.gz`` in ``report_dir`` (byte-identical for equal
    records: no time stamp in the gzip header)."""
    path = Path(report_dir) / RAW
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(to_json(run), ensure_ascii=False).encode("utf-8")
    path.write_bytes(gzip.compress(text, compresslevel=6, mtime=0))
    (path.parent / PLAIN_RAW).unlink(missing_ok=True)  # an earlier run's, which would be read instead
    return path


def raw_path(path: Path) -> Path:
    """The raw results file of a report folder (``raw.json.gz``, or an older ``raw.json``), or
    ``path`` itself when it names a file."""
    path = Path(path)
    if not path.is_dir():
        return path
    return path / RAW if (path / RAW).exists() or not (path / PLAIN_RAW).exists() else path / PLAIN_RAW


def read_json(path: Path) -> Any:
    """A JSON file, gzipped or not (told apart by gzip's magic bytes, not by the name)."""
    data = Path(path).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data.decode("utf-8"))


def load(path: Path) -> RawRun:
    """A run from a ``raw.json.gz`` or ``raw.json`` file, or the folder holding one."""
    return from_json(read_json(raw_path(path)))
