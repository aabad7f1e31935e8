"""``replays.json``: what a run's implementation answered to the counterexamples of other runs
(engine.judging.replays asks them), in the run's folder beside its own results. The pages that compare
runs (reports.matrix, reports.history) read it: a cell fails where the run failed, or where
another run's counterexample fails there."""

from __future__ import annotations

from pathlib import Path

from . import Unreadable, read_json

REPLAYS = "replays.json"
# What one replayed counterexample came to: the other run's bug is here, it is not, or the
# counterexample could not be asked here (its type not implemented, its model refused), which is
# never a pass.
FAILS, PASSES, NOT_ASKED = "fail", "pass", "not-asked"


def label(version: object, impl: str, cap: dict | None) -> str:
    """How a run is named among replays: its implementation's version where it states one, else
    its --impl; with the cap on its instruction set where it ran under one (``2024.4.0 AVX2``)."""
    return str(version or impl) + (f" {cap['value']}" if cap else "")


# Each entry's fields and their types (engine.judging.replays.Replay); an entry without them is dropped.
FIELDS = {"source": str, "anchor": str, "version": int, "clause": str, "type_name": str, "outcome": str,
          "detail": str}


def read(folder: Path) -> dict | None:
    """A run folder's replays, or None where it has none (or none that can be read); entries
    that are not what engine.judging.replays writes are left out (the file is as untrusted as the run)."""
    path = Path(folder) / REPLAYS
    try:
        data = read_json(path) if path.is_file() else None
    except Unreadable:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("replays"), list):
        return None
    entries = [e for e in data["replays"] if isinstance(e, dict)
               and all(isinstance(e.get(name), kind) for name, kind in FIELDS.items())]
    return {**data, "replays": entries}
