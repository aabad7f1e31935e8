"""``--baseline``: a nightly CI job fails on a failure it has not seen before, not on the known ones.

A baseline is a previous report.json, or the small expectations file ``python -m reports
baseline REPORT --out FILE`` writes from one: the failures that made a headline NON-CONFORMANT,
each as (version, clause, type, problem). A run compared with it exits 0 when every such failure
it finds is in the baseline and 1 when one is new; the verdicts in its report do not change, and
the report names the baseline and what was new or fixed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from results import Unreadable, read_bounded

from .aggregate import SCHEMA as REPORT_SCHEMA
from .document import Document, FailureCard

SCHEMA = "argmin-conformance/baseline/1"
Key = tuple[int, str, str, str]  # version, clause, type, problem


class BaselineError(ValueError):
    """A file that is not a baseline; the message is one line naming the problem and the fix."""


def _key(failure: FailureCard) -> Key:
    return int(failure["version"]), str(failure["clause"] or "-"), str(failure["type"]), str(failure["problem"])


def failures(document: Document) -> set[Key]:
    """The headline failures of a report document, by version, clause, type and problem."""
    return {_key(f) for f in document["failures"] if f["role"] == "headline"}


def text(key: Key) -> str:
    """``ArgMin-13 C5 double not-a-minimum``."""
    return f"ArgMin-{key[0]} {key[1]} {key[2]} {key[3]}"


def expectations(document: Document) -> dict[str, Any]:
    """The expectations file for a report document: its headline failures and where they come from."""
    certificate = document["certificate"]
    return {"schema": SCHEMA, "implementation": certificate["implementation"],
            "implementation_version": certificate["implementation_version"], "profile": certificate["profile"],
            "suite_commit": certificate["suite_commit"],
            "failures": [dict(zip(("version", "clause", "type", "problem"), key, strict=True))
                         for key in sorted(failures(document))]}


def read(path: Path) -> tuple[str, set[Key]]:
    """A baseline's name (file name and the start of its SHA-256) and its failures; BaselineError
    where ``path`` is neither an expectations file nor a report.json."""
    try:
        data = read_bounded(Path(path))
        document = json.loads(data.decode("utf-8"))
        source = f"{Path(path).name} (sha256 {hashlib.sha256(data).hexdigest()[:16]})"
        if isinstance(document, dict) and document.get("schema") == SCHEMA:
            return source, {(int(f["version"]), str(f["clause"]), str(f["type"]), str(f["problem"]))
                            for f in document["failures"]}
        if isinstance(document, dict) and document.get("schema") == REPORT_SCHEMA:
            return source, failures(document)
    except (OSError, Unreadable, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise BaselineError(f"--baseline {path}: not readable as a baseline ({type(exc).__name__}: {exc}); pass a "
                            f"report.json or a file from `nox -s baseline -- REPORT --out FILE`") from None
    raise BaselineError(f"--baseline {path}: neither a report.json ({REPORT_SCHEMA}) nor an expectations file "
                        f"({SCHEMA}); write one with `nox -s baseline -- REPORT --out FILE`")


def _flaky(document: Document) -> set[Key]:
    """Headline failures whose every counterexample is a flake: wrong once, right when asked again
    (in a fresh worker, and after the history its worker ran before it)."""
    entries: dict[Key, list[bool]] = {}
    for f in document["failures"]:
        if f["role"] == "headline":
            entries.setdefault(_key(f), []).append(bool((f["counterexample"] or {}).get("flaky", False)))
    return {key for key, flags in entries.items() if all(flags)}


def compare(document: Document, source: str, expected: set[Key]) -> dict[str, Any]:
    """What a run's report holds against its baseline (RunInfo.baseline). A failure the baseline
    does not hold is new, a flake too: ArgMin is deterministic, so a wrong answer is a failure
    whether or not it recurs (``flaky`` names the new ones that are flakes)."""
    found = failures(document)
    unexpected = found - expected
    return {"source": source, "failures": len(expected), "new": [text(key) for key in sorted(unexpected)],
            "fixed": [text(key) for key in sorted(expected - found)],
            "flaky": [text(key) for key in sorted(unexpected & _flaky(document))]}


def lines(compared: dict[str, Any]) -> list[str]:
    """The terminal's account of the comparison."""
    new, fixed = compared["new"], compared["fixed"]
    head = (f"baseline {compared['source']}: {compared['failures']} known failures; "
            + (f"{len(new)} NEW (exit status 1)" if new else "no new failure (exit status 0)"))
    flaky = set(compared.get("flaky", []))
    return [head, *(f"  new failure: {line}" + (" (a flake: wrong once, right when asked again; a failure all "
                                                 "the same)" if line in flaky else "") for line in new),
            *(f"  fixed: {line}" for line in fixed)]
