"""Results: what a run recorded, as plain data. The engine writes them (streamed as they are
judged, then saved as ``raw.json``); the reports read them. The verdict rule lives here, once."""

from __future__ import annotations

import json
from pathlib import Path

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

RAW = "raw.json"

__all__ = [
    "CENSUS", "CONFORMANT", "NON_CONFORMANT", "OUTCOMES", "RAW", "CaseResult", "CensusRecord", "Counterexample",
    "Example", "RawRun", "RunInfo", "Tensor", "from_json", "load", "save", "to_json", "verdicts",
]


def save(run: RawRun, report_dir: Path) -> Path:
    """Write the run's records as ``raw.json`` in ``report_dir``."""
    path = Path(report_dir) / RAW
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_json(run), ensure_ascii=False), encoding="utf-8")
    return path


def load(path: Path) -> RawRun:
    """A run from a ``raw.json`` file (or the folder holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / RAW
    return from_json(json.loads(path.read_text(encoding="utf-8")))
