"""Results streamed to disk as they are judged.

A run keeps its records in ``<report dir>/.stream/``: ``run.json`` (the run's settings and
environment, written when it starts) and one append-only JSON-lines file per process that
judges cases (``main.jsonl``, or one per pytest-xdist worker). Every record is written and
flushed as soon as it exists, so a run that is killed, by Ctrl-C, SIGTERM, SIGKILL or the OOM
killer, loses at most the record in flight; ``read`` turns whatever is there into a RawRun.
The same files carry the results of xdist workers to the controller."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from .records import CaseResult, CensusRecord, RawRun, RunInfo, census_from_json, result_from_json, to_json

FOLDER = ".stream"
HEADER = "run.json"


def folder(report_dir: Path) -> Path:
    return Path(report_dir) / FOLDER


class Writer:
    """One process's stream of records (``<name>.jsonl``), appended and flushed record by record."""

    def __init__(self, report_dir: Path, name: str) -> None:
        path = folder(report_dir) / f"{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[str] | None = path.open("a", encoding="utf-8")

    def _write(self, kind: str, record: Any) -> None:
        if self._file is not None:
            self._file.write(json.dumps({"kind": kind, "record": to_json(record)}, ensure_ascii=False) + "\n")
            self._file.flush()

    def result(self, result: CaseResult) -> None:
        self._write("result", result)

    def census(self, record: CensusRecord) -> None:
        self._write("census", record)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def start(report_dir: Path, info: RunInfo, environment: dict[str, Any]) -> None:
    """Begin a run's stream: clear what an earlier run left and write the header."""
    clear(report_dir)
    path = folder(report_dir) / HEADER
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"info": to_json(info), "environment": environment}, ensure_ascii=False),
                    encoding="utf-8")


def exists(report_dir: Path) -> bool:
    return (folder(report_dir) / HEADER).is_file()


def _lines(path: Path) -> list[dict[str, Any]]:
    """The complete records of one stream file; a last line cut short by a kill is dropped."""
    items = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return items


def read(report_dir: Path) -> RawRun:
    """Every record streamed so far, under the header's settings (complete as the header says:
    the caller decides whether the run finished)."""
    where = folder(report_dir)
    header = json.loads((where / HEADER).read_text(encoding="utf-8"))
    run = RawRun(RunInfo(**header["info"]), header["environment"])
    for path in sorted(where.glob("*.jsonl")):
        for item in _lines(path):
            if item.get("kind") == "result":
                run.results.append(result_from_json(item["record"]))
            elif item.get("kind") == "census":
                run.census.append(census_from_json(item["record"]))
    return run


def recover(report_dir: Path, reason: str) -> RawRun:
    """A stream left by a run that never finished, as a run marked incomplete."""
    run = read(report_dir)
    run.info = replace(run.info, complete=False, incomplete_reason=reason)
    return run


def clear(report_dir: Path) -> None:
    shutil.rmtree(folder(report_dir), ignore_errors=True)
