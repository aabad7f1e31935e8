"""``--baseline``: a nightly CI job fails on a failure it has not seen before, not on the known ones.

A baseline is a previous report (its folder or report.json), or the small expectations file
``python -m reports baseline REPORT --out FILE`` writes from one: the failures that made a headline
NON-CONFORMANT, each as (version, clause, type, problem) with the root cause it goes with (the
anchor of its card in that report). A run compared with it exits 0 when every such failure it finds
is in the baseline and 1 when one is new; the verdicts in its report do not change, and the report
names the baseline and what was new, known or fixed, one line per root cause as its cards group
them (one bug on every type is one line, not one per type)."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from reports.document.aggregate import SCHEMA as REPORT_SCHEMA
from reports.document.certificate import certificate
from reports.document.parts import Document, FailureCard
from results import RawRun, Unreadable, read_bounded, save
from results.causes import clause_number

SCHEMA = "argmin-conformance/baseline/1"
Key = tuple[int, str, str, str]  # version, clause, type, problem
Causes = dict[Key, str]  # each failure's root cause: the anchor of its card, or "clause problem" where none is known


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


def causes(document: Document) -> Causes:
    """The headline failures of a report document, each with its root cause: the anchor of the
    card it is on (the report merges a cause's failures, types and clauses into one card)."""
    listed = document["failures"]
    found: Causes = {}
    for card in document["cards"]:
        for index in card["failures"]:
            if listed[index]["role"] == "headline":
                found.setdefault(_key(listed[index]), card["anchor"])
    return found


def expectations(document: Document) -> dict[str, Any]:
    """The expectations file for a report document: its headline failures, each with its root
    cause, and where they come from."""
    certificate, found = document["certificate"], causes(document)
    return {"schema": SCHEMA, "implementation": certificate["implementation"],
            "implementation_version": certificate["implementation_version"], "profile": certificate["profile"],
            "suite_commit": certificate["suite_commit"],
            "failures": [{**dict(zip(("version", "clause", "type", "problem"), key, strict=True)), "cause": found[key]}
                         for key in sorted(found)]}


def location(path: Path) -> Path:
    """The file a --baseline value names: a report folder means its report.json."""
    path = Path(path)
    return path / "report.json" if path.is_dir() else path


def read(path: Path) -> tuple[str, Causes]:
    """A baseline's name (file name and the start of its SHA-256) and its failures with their
    root causes; BaselineError where ``path`` is neither an expectations file nor a report (its
    folder or report.json)."""
    path = location(path)
    try:
        data = read_bounded(path)
        document = json.loads(data.decode("utf-8"))
        source = f"{path.name} (sha256 {hashlib.sha256(data).hexdigest()[:16]})"
        if isinstance(document, dict) and document.get("schema") == SCHEMA:
            listed = {(int(f["version"]), str(f["clause"]), str(f["type"]), str(f["problem"])): f.get("cause")
                      for f in document["failures"]}  # files written before causes were recorded have none
            return source, {key: str(cause) if cause else f"{key[1]} {key[3]}" for key, cause in listed.items()}
        if isinstance(document, dict) and document.get("schema") == REPORT_SCHEMA:
            return source, causes(document)
    except (OSError, Unreadable, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError,
            AttributeError, IndexError) as exc:
        raise BaselineError(f"--baseline {path}: not readable as a baseline ({type(exc).__name__}: {exc}); pass a "
                            f"report folder, its report.json or a file from `nox -s baseline -- REPORT --out FILE`") \
            from None
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


def _grouped(status: str, keys: Iterable[Key], cause_of: Causes, types: list[str], linked: bool) -> list[dict]:
    """One entry per root cause among ``keys``: its versions, clauses, problem and types in one
    line, how many failures it stands for, and (``linked``) the card it links to."""
    groups: dict[str, list[Key]] = defaultdict(list)
    for key in sorted(keys):
        groups[cause_of[key]].append(key)
    def in_order(name: str) -> tuple[int, str]:
        return types.index(name) if name in types else len(types), name

    entries = []
    for cause, members in groups.items():
        count = f" ({len(members)} failures)" if len(members) > 1 else ""
        entries.append({"status": status, "failures": len(members), "anchor": cause if linked else None,
                        "text": f"ArgMin-{_listed(members, 0)} {_listed(members, 1, clause_number)} "
                                f"{_listed(members, 3)}: {_listed(members, 2, in_order)}{count}"})
    return entries


def _listed(keys: list[Key], field: int, order: Callable[[Any], Any] | None = None) -> str:
    """The values of one field of ``keys``, each once, in ``order``: "12, 13", "C3, C8"."""
    return ", ".join(str(value) for value in sorted({key[field] for key in keys}, key=order))


def compare(document: Document, source: str, expected: Causes) -> dict[str, Any]:
    """What a run's report holds against its baseline (RunInfo.baseline). A failure the baseline
    does not hold is new, a flake too: ArgMin is deterministic, so a wrong answer is a failure
    whether or not it recurs (``flaky`` names the new ones that are flakes). ``causes`` says the
    same by root cause: new, flaky (new too), fixed (by the baseline's causes) and known."""
    found = causes(document)
    unexpected = found.keys() - expected.keys()
    flaky = unexpected & _flaky(document)
    fixed, known = expected.keys() - found.keys(), found.keys() & expected.keys()
    types = list(document["types"])
    return {"source": source, "failures": len(expected), "new": [text(key) for key in sorted(unexpected)],
            "fixed": [text(key) for key in sorted(fixed)], "flaky": [text(key) for key in sorted(flaky)],
            "causes": [*_grouped("new", unexpected - flaky, found, types, True),
                       *_grouped("flaky", flaky, found, types, True),
                       *_grouped("fixed", fixed, expected, types, False),
                       *_grouped("known", known, found, types, True)]}


def record(run: RawRun, document: Document, report_dir: Path, against: tuple[str, Causes]) -> None:
    """Record the comparison with the baseline in the run (its raw results, saved again) and in the
    document's certificate block, the one part of the document it changes."""
    run.info.baseline = compare(document, *against)
    save(run, report_dir)
    document["certificate"] = certificate(run)


_SAID = {"new": "new failure", "fixed": "fixed", "known": "known",
         "flaky": "new failure, a flake (wrong once, right when asked again; a failure all the same)"}


def lines(compared: dict[str, Any]) -> list[str]:
    """The terminal's account of the comparison: one line per root cause (per failure for a
    comparison recorded before causes were)."""
    new = compared["new"]
    grouped = compared.get("causes")
    roots = sum(entry["status"] in ("new", "flaky") for entry in grouped) if grouped is not None else len(new)
    head = (f"baseline {compared['source']}: {compared['failures']} known failures; "
            + (f"{len(new)} NEW in {roots} root cause{'s' * (roots > 1)} (exit status 1)" if new
               else "no new failure (exit status 0)"))
    if grouped is None:
        flaky = set(compared.get("flaky", []))
        grouped = [*({"status": "flaky" if line in flaky else "new", "text": line} for line in new),
                   *({"status": "fixed", "text": line} for line in compared.get("fixed", []))]
    return [head, *(f"  {_SAID[entry['status']]}: {entry['text']}" for entry in grouped)]
