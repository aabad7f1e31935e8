"""Many runs on one page, the way wpt.fyi shows browsers: one column per implementation, one row
per version and clause (and per type where a run failed it), each cell coloured by its outcome
and linked to that run's own report at the clause or failure it stands for.

Built from report documents, and from each run folder's ``replays.json`` where there is one
(results.replays): the other runs' counterexamples asked of that run's implementation. A cell
fails where its own run failed, or where another run's counterexample fails there ("found in"
that run, linked to its card); a counterexample that could not be asked there is said, and the
cell is not a plain pass. The rows are the union of what the runs tested. A type row appears
under a clause when some cell of it fails; the types every run passed are folded into the
clause row. Each column names the instruction set its run was made on, and the page says so
first where they differ."""

from __future__ import annotations

import os
from pathlib import Path

from reports.document.aggregate import NOT_RUN, clause_anchor, clause_number, worst
from reports.document.parts import Document
from results import replays
from results.outcomes import FAIL, OBSERVED, PASS, SEVERITY

from .isa import differences, instruction_set

JUDGED_FAILURES = tuple(o for o in SEVERITY if o not in (PASS, OBSERVED))


def _link(source: Path, out: Path) -> str | None:
    """The run's report.html relative to the page, when it exists."""
    html = source / "report.html"
    return Path(os.path.relpath(html, out.parent)).as_posix() if html.exists() else None


def _column(document: Document, source: Path, out: Path) -> dict:
    run, certificate = document["run"], document["certificate"]
    return {"impl": run["impl"], "version": certificate["implementation_version"], "device": certificate["device"],
            "profile": run["profile"], "seed": run["seed"], "started": run["started"], "complete": run["complete"],
            "certificate": certificate["status"], "link": _link(source, out), "isa": instruction_set(certificate),
            "verdicts": {v["version"]: v for v in document["versions"]}}


def _cell(outcome: str, cases: int, anchor: str | None, policy: list[str] | None = None,
          coherent: bool = True, packed: bool = False) -> dict:
    """``packed``: every failure behind the cell showed only in packed models."""
    return {"outcome": outcome, "cases": cases, "anchor": anchor, "policy": policy, "coherent": coherent,
            "packed": packed}


def _clause_cell(document: Document, version: int, clause_id: str) -> dict:
    clause = next((c for c in document["clauses"] if c["version"] == version and c["id"] == clause_id), None)
    if clause is None:
        return _cell(NOT_RUN, 0, None)
    census = next((c for c in document["census"] if c["version"] == version and c["topic"] == clause_id), None)
    if clause["kind"] == "undefined" and census is not None:
        return _cell(clause["outcome"], census["records"], census["anchor"], census["policy"], census["coherent"])
    return _cell(clause["outcome"], clause["cases"], clause["failure_anchor"] or clause["anchor"])


def _type_cell(document: Document, version: int, clause_id: str, type_name: str) -> dict:
    clause = next((c for c in document["clauses"] if c["version"] == version and c["id"] == clause_id), None)
    tally = (clause or {}).get("types", {}).get(type_name, {})
    failures = [f for f in document["failures"]
                if (f["version"], f["clause"], f["type"]) == (version, clause_id, type_name)]
    anchor = failures[0]["anchor"] if failures else clause["anchor"] if clause else None
    packed = bool(failures) and all(f["packed"] for f in failures)
    return _cell(worst(tally), sum(tally.values()), anchor, packed=packed)


def label(column: dict) -> str:
    """How a run is named among replays (results.replays.label)."""
    return replays.label(column["version"], column["impl"], column["isa"]["cap"])


def _asked_here(cell: dict, entries: list[dict], links: dict[str, str | None]) -> dict:
    """``cell`` with the other runs' counterexamples of its row asked in its run (``entries``):
    failing where one fails here, whatever its own run met."""
    failing = [e for e in entries if e["outcome"] == replays.FAILS]
    failing = [e for i, e in enumerate(failing) if e["source"] not in {f["source"] for f in failing[:i]}]  # one a run
    found_in = [{"source": e["source"], "detail": e["detail"],
                 "link": f"{links[e['source']]}#{e['anchor']}" if links.get(e["source"]) else None} for e in failing]
    outcome = FAIL if failing and cell["outcome"] not in JUDGED_FAILURES else cell["outcome"]
    return {**cell, "outcome": outcome, "own": cell["outcome"], "found_in": found_in,
            "not_asked": [f"{e['source']}: {e['detail']}" for e in entries if e["outcome"] == replays.NOT_ASKED]}


def _replayed(entries: list[dict], version: int, clause: str, type_name: str | None = None) -> list[dict]:
    return [e for e in entries if e["version"] == version and e["clause"] == clause
            and (type_name is None or e["type_name"] == type_name)]


def _replays_summary(found: list[dict | None]) -> dict:
    """What the page says of its replays: whether every run was asked, how many models, how long."""
    asked = [data for data in found if data is not None]
    return {"complete": bool(asked) and len(asked) == len(found),
            "cap": max((d.get("cap", 0) for d in asked), default=0),
            "asked": sum(len(d["replays"]) for d in asked),
            "seconds": round(sum(d.get("seconds", 0) for d in asked), 1),
            "left_out": sum(n for d in asked for n in d.get("left_out", {}).values() if isinstance(n, int))}


def matrix(runs: list[tuple[Document, Path]], out: Path) -> dict:
    """The page's data: ``runs`` are (report document, the folder holding its report.html)."""
    documents = [document for document, _ in runs]
    columns = [_column(d, source, out) for d, source in runs]
    links = {label(column): column["link"] for column in columns}
    found = [replays.read(source) if len(runs) > 1 else None for _, source in runs]
    asked = [[e for e in data["replays"] if e["source"] in links] if data else [] for data in found]
    versions = sorted({v["version"] for d in documents for v in d["versions"]})
    sections = [{"version": version, "rows": [_row(clause, version, documents, asked, links) for clause in
                                              sorted(_clauses(documents, version).values(),
                                                     key=lambda c: clause_number(c["id"]))]}
                for version in versions]
    return {"columns": columns, "versions": versions, "sections": sections, "replays": _replays_summary(found),
            "isa_differs": differences([column["isa"] for column in columns])}


def _clauses(documents: list[Document], version: int) -> dict[str, dict]:
    """The clauses of ``version`` any run has a row for, by id, with every type any run judged."""
    clauses: dict[str, dict] = {}
    for document in documents:
        for c in document["clauses"]:
            if c["version"] == version:
                clauses.setdefault(c["id"], {"id": c["id"], "title": c["title"], "kind": c["kind"], "types": []})
                known = clauses[c["id"]]["types"]
                known += [t for t in c["types"] if t not in known]
    return clauses


def _row(clause: dict, version: int, documents: list[Document], asked: list[list[dict]], links: dict) -> dict:
    """One clause's row: a cell per run (with the other runs' counterexamples asked there, for a
    judged clause), and beneath it a row per type some run fails it on; the others are folded."""
    cells = [_clause_cell(d, version, clause["id"]) for d in documents]
    typed = []
    if clause["kind"] != "undefined":
        cells = [_asked_here(c, _replayed(a, version, clause["id"]), links)
                 for c, a in zip(cells, asked, strict=True)]
        for type_name in clause["types"]:
            type_cells = [_asked_here(_type_cell(d, version, clause["id"], type_name),
                                      _replayed(a, version, clause["id"], type_name), links)
                          for d, a in zip(documents, asked, strict=True)]
            if any(c["outcome"] in JUDGED_FAILURES for c in type_cells):
                typed.append({"type": type_name, "cells": type_cells})
    return {**clause, "anchor": clause_anchor(version, clause["id"]), "cells": cells, "typed": typed,
            "folded": len(clause["types"]) - len(typed)}
