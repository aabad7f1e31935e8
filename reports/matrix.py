"""Many runs on one page, the way wpt.fyi shows browsers: one column per implementation, one row
per version and clause (and per type where a run failed it), each cell coloured by its outcome
and linked to that run's own report at the clause or failure it stands for.

Built from report documents alone; the rows are the union of what the runs tested. Each column
names the instruction set its run was made on, and the page says so first where they differ. A type row
appears under a clause when some run did not pass that clause on that type; the types every run
passed are folded into the clause row."""

from __future__ import annotations

import os
from pathlib import Path

from results.outcomes import CENSUS, PASS, SEVERITY

from .aggregate import NOT_RUN, clause_anchor, clause_number, worst
from .document import Document
from .isa import differences, instruction_set

JUDGED_FAILURES = tuple(o for o in SEVERITY if o not in (PASS, CENSUS))


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


def matrix(runs: list[tuple[Document, Path]], out: Path) -> dict:
    """The page's data: ``runs`` are (report document, the folder holding its report.html)."""
    documents = [document for document, _ in runs]
    versions = sorted({v["version"] for d in documents for v in d["versions"]})
    sections = []
    for version in versions:
        clauses: dict[str, dict] = {}
        for document in documents:
            for c in document["clauses"]:
                if c["version"] == version:
                    clauses.setdefault(c["id"], {"id": c["id"], "title": c["title"], "kind": c["kind"], "types": []})
                    known = clauses[c["id"]]["types"]
                    known += [t for t in c["types"] if t not in known]
        rows = []
        for clause in sorted(clauses.values(), key=lambda c: clause_number(c["id"])):
            cells = [_clause_cell(d, version, clause["id"]) for d in documents]
            typed = []
            if clause["kind"] != "undefined":
                for type_name in clause["types"]:
                    type_cells = [_type_cell(d, version, clause["id"], type_name) for d in documents]
                    if any(c["outcome"] in JUDGED_FAILURES for c in type_cells):
                        typed.append({"type": type_name, "cells": type_cells})
            rows.append({**clause, "anchor": clause_anchor(version, clause["id"]), "cells": cells, "typed": typed,
                         "folded": len(clause["types"]) - len(typed)})
        sections.append({"version": version, "rows": rows})
    columns = [_column(d, source, out) for d, source in runs]
    return {"columns": columns, "versions": versions, "sections": sections,
            "isa_differs": differences([column["isa"] for column in columns])}
