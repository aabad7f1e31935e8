"""Results streamed to disk as they are judged, and recovered when a run never finished.

A run keeps its records in ``<report dir>/.stream/``: ``run.json`` (the run's settings and
environment, written when it starts) and one append-only JSON-lines file per process that
judges cases (``main.jsonl``, or one per pytest-xdist worker). Every record is written and
flushed as soon as it exists, so a run that is killed, by Ctrl-C, SIGTERM, SIGKILL or the OOM
killer, loses at most the record in flight; ``read`` turns whatever is there into a RawRun.
The same files carry the results of xdist workers to the controller. A failure is written when
it is found (``found``) and again, minimized, when its search ends: a run killed while shrinking
keeps the failure as found.

The process that owns the run holds a lock on ``run.lock`` while it runs (the system releases it
however the process ends). A stream whose lock is free belongs to a run that died without
writing its reports: ``set_aside`` turns it into a raw run marked incomplete in a folder of its
own, ``<report dir>/incomplete-<start time>/``, where the next run into the same report dir
does not overwrite it (the next run does this itself; ``python -m reports rebuild DIR`` too)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from . import files, save
from .records import (
    CaseResult,
    CensusRecord,
    RawRun,
    RunInfo,
    TestEnd,
    Usage,
    census_from_json,
    dumps,
    result_from_json,
    to_json,
)

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; every stream left behind counts as abandoned
    fcntl = None

FOLDER = ".stream"
HEADER = "run.json"
LOCK = "run.lock"
ASIDE = "incomplete-"
STREAM_CAP = 1 << 30  # bytes read from one stream file when recovering a run (a certify run writes ~100 MB)


class InUse(Exception):
    """A run is still writing into this report dir; the message is one line naming the fix."""


def folder(report_dir: Path) -> Path:
    return Path(report_dir) / FOLDER


class Writer:
    """One process's stream of records (``<name>.jsonl``), appended and flushed record by record.
    It keeps what it wrote in memory too: the run's report is built from that (``run``), never
    from the file, which the implementation under test could reach; ``intact`` says whether the
    file still holds exactly what was written."""

    def __init__(self, report_dir: Path, name: str) -> None:
        path = folder(report_dir) / f"{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[str] | None = open(_appending(path), "a", encoding="utf-8", newline="")  # noqa: SIM115
        self._written: list[str] = []
        self._digest = hashlib.sha256()
        self._size = 0

    def _write(self, kind: str, record: Any) -> None:
        self.lines(_line(kind, record))

    def lines(self, text: str) -> None:
        """Records already written as stream lines (see ``encode``): an xdist worker's, for one test."""
        if self._file is not None and text:
            self._file.write(text)
            self._file.flush()
            self._written.append(text)
            encoded = text.encode("utf-8")
            self._digest.update(encoded)
            self._size += len(encoded)

    def run(self, info: RunInfo, environment: dict[str, Any]) -> RawRun:
        """The records this writer wrote, as a run with these settings (read from memory)."""
        return _assemble(info, environment, (json.loads(line) for text in self._written for line in text.splitlines()))

    def intact(self) -> bool:
        """Whether the file holds exactly the records written (nothing swapped, cut or added)."""
        try:
            with _opened(self.path) as file:
                if os.fstat(file.fileno()).st_size != self._size:
                    return False
                digest = hashlib.sha256()
                for block in iter(lambda: file.read(1 << 20), b""):
                    digest.update(block)
        except OSError:
            return False
        return digest.digest() == self._digest.digest()

    def result(self, result: CaseResult) -> None:
        self._write("result", result)

    def found(self, result: CaseResult) -> None:
        """A failure as first found, before shrinking; its test's final record supersedes it."""
        self._write("found", result)

    def census(self, record: CensusRecord) -> None:
        self._write("census", record)

    def usage(self, record: Usage) -> None:
        self._write("usage", record)

    def end(self, record: TestEnd) -> None:
        """A test delivered every record it made (results.records.TestEnd)."""
        self._write("end", record)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _line(kind: str, record: Any) -> str:
    return dumps({"kind": kind, "record": record}) + "\n"


def encode(results: list[CaseResult], census: list[CensusRecord], usage: Iterable[Usage] = (),
           ends: Iterable[TestEnd] = ()) -> str:
    """Records as stream lines, for a process that hands them to the one writing the stream (its
    tests' end marks last: a test's records arrive before the mark that counts them)."""
    return "".join(_line(kind, record) for kind, records in (("result", results), ("census", census),
                                                             ("usage", usage), ("end", ends)) for record in records)


def start(report_dir: Path, info: RunInfo, environment: dict[str, Any]) -> IO[str]:
    """Begin a run's stream: clear what an earlier run left (``set_aside`` first keeps it) and
    write the header. Returns the lock: keep it open while the run goes on. Raises InUse while
    another run writes into the same report dir."""
    _check_free(report_dir)
    clear(report_dir)
    where = folder(report_dir)
    where.mkdir(parents=True, exist_ok=True)
    lock = open(_appending(where / LOCK), "a", encoding="utf-8")  # noqa: SIM115 (held while the run goes on)
    if fcntl is not None:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    # Renamed into place when whole: a kill never leaves half a header.
    files.write(where, HEADER, json.dumps({"info": to_json(info), "environment": environment},
                                          ensure_ascii=False).encode("utf-8"))
    return lock


def _appending(path: Path) -> int:
    """``path`` opened for appending (made where missing), never through a symbolic link."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o644)


def _check_free(report_dir: Path) -> None:
    """Raise InUse when a running process holds the lock of this report dir's stream."""
    path = folder(report_dir) / LOCK
    if fcntl is None or not path.is_file():
        return
    with open(_appending(path), "a", encoding="utf-8") as probe:
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InUse(f"{report_dir}: another run is writing its results there; wait for it to end or choose "
                        f"another report dir (--report-dir)") from None


def exists(report_dir: Path) -> bool:
    return os.path.lexists(folder(report_dir) / HEADER)  # a symlink too: reading it is refused, loudly


def _lines(path: Path) -> list[dict[str, Any]]:
    """The complete records of one stream file; a last line cut short by a kill is dropped."""
    items = []
    for line in _bounded(path).decode("utf-8", errors="replace").splitlines():
        try:
            item = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(item, dict):
            items.append(item)
    return items


def _opened(path: Path) -> IO[bytes]:
    """A stream file opened for reading: a regular file, no symlink followed (a FIFO or a device
    put in its place is refused, never read)."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    file = os.fdopen(descriptor, "rb")
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        file.close()
        raise OSError(f"{path} is not a regular file")
    return file


def _bounded(path: Path) -> bytes:
    """A stream file's bytes, at most STREAM_CAP of them."""
    with _opened(path) as file:
        data = file.read(STREAM_CAP + 1)
    if len(data) > STREAM_CAP:
        raise ValueError(f"{path} holds more than {STREAM_CAP >> 20} MiB")
    return data


def read(report_dir: Path) -> RawRun:
    """Every record streamed so far, under the header's settings (complete as the header says:
    the caller decides whether the run finished). Only for a run that died before its end: a
    finished run's report comes from its own memory (``Writer.run``)."""
    where = folder(report_dir)
    header = json.loads(_bounded(where / HEADER).decode("utf-8"))
    items = (item for path in sorted(where.glob("*.jsonl")) for item in _lines(path))
    return _assemble(RunInfo(**header["info"]), header["environment"], items)


def _assemble(info: RunInfo, environment: dict[str, Any], items: Iterable[dict[str, Any]]) -> RawRun:
    run = RawRun(info, environment)
    found: dict[tuple, CaseResult] = {}
    parts: dict[tuple, Counter] = {}
    for item in items:
        if item.get("kind") == "result":
            run.results.append(result_from_json(item["record"]))
        elif item.get("kind") == "census":
            run.census.append(census_from_json(item["record"]))
        elif item.get("kind") == "found":
            result = result_from_json(item["record"])
            found[_failure(result)] = result
        elif item.get("kind") == "end":
            run.ends.append(TestEnd(**item["record"]))
        elif item.get("kind") == "usage":
            usage = item["record"]
            part = parts.setdefault((str(usage.get("suite")), str(usage.get("form"))), Counter())
            part.update({name: usage.get(name, 0) for name in USAGE_COUNTS})
    if parts:
        run.info = _with_usage(info, parts)
    # A failure is written as found, then again, minimized, once its search ends: the final
    # record wins; a failure whose search never ended keeps the one found.
    ended = {_failure(r) for r in run.results if r.counterexample is not None}
    run.results += [result for key, result in found.items() if key not in ended]
    return run


USAGE_COUNTS = ("compiles", "loaded", "calls", "seconds", "nodes")


def _with_usage(info: RunInfo, parts: dict[tuple, Counter]) -> RunInfo:
    """``info`` with the run's model counts: totals, and by suite and form."""
    total = _counts(sum(parts.values(), Counter()))
    usage = [{"suite": suite, "form": form, **_counts(part)} for (suite, form), part in sorted(parts.items())]
    return replace(info, models_compiled=total["compiles"], calls_made=total["calls"], models_loaded=total["loaded"],
                   model_seconds=total["seconds"], model_usage=usage)


def _counts(counted: Counter) -> dict[str, int | float]:
    return {name: round(counted[name], 3) if name == "seconds" else int(counted[name]) for name in USAGE_COUNTS}


def _failure(result: CaseResult) -> tuple:
    """What tells one failure of a test from another (one only packed models show is another)."""
    return result.test, result.clause, result.type_name, result.problem, result.packed is not None


def recover(report_dir: Path, reason: str) -> RawRun:
    """A stream left by a run that never finished, as a run marked incomplete. Its duration is
    up to the last record written."""
    run = read(report_dir)
    last = max(path.stat().st_mtime for path in folder(report_dir).iterdir())
    duration = max(0.0, last - datetime.fromisoformat(run.info.started).timestamp())
    run.info = replace(run.info, complete=False, incomplete_reason=reason, duration_s=round(duration, 3))
    return run


def set_aside(report_dir: Path, by: str) -> tuple[RawRun, Path] | None:
    """The stream a run left without finishing (killed by SIGKILL or the OOM killer, a machine
    that went down), saved as a raw run marked incomplete, recovered ``by`` whom, in
    ``<report dir>/incomplete-<its start time>/``, and removed. None when there is no stream.
    Raises InUse while the run that writes it is alive."""
    if not exists(report_dir):
        return None
    _check_free(report_dir)
    run = recover(report_dir, f"the run stopped before writing its report (killed, e.g. by SIGKILL or the "
                              f"out-of-memory killer); recovered from its stream by {by}")
    stamp = datetime.fromisoformat(run.info.started).strftime("%Y%m%d-%H%M%S")
    target = Path(report_dir) / f"{ASIDE}{stamp}"
    copies = 1
    while target.exists():
        copies += 1
        target = Path(report_dir) / f"{ASIDE}{stamp}-{copies}"
    save(run, target)
    clear(report_dir)
    return run, target


def clear(report_dir: Path) -> None:
    shutil.rmtree(folder(report_dir), ignore_errors=True)
