"""One runtime's releases side by side, oldest first: a row per (version, clause, type) that some
release did not pass, each cell linked to that release's own report, and a mark where a failure
appears (it passed in the release before) and where it is fixed (it passes again).

Built from the matrix's data (reports.matrix), so a cell means what it means there: where the
releases were asked each other's counterexamples, a cell fails when its own run failed or when
another release's counterexample fails there. A clause whose failures are not split by type (the
census of undefined behaviour) is one row of all types. Runs of one release under several
instruction sets or caps (``nox -s history -- --isas avx2,native``) are a column each, side by
side; a mark compares a release with the last one of the same instruction set and cap, never with
another cap."""

from __future__ import annotations

from pathlib import Path

from engine.runtimes.entry import release_key
from reports.document.aggregate import NOT_RUN
from reports.document.parts import Document
from results.outcomes import PASS

from .isa import cap_text
from .matrix import JUDGED_FAILURES, matrix

APPEARS, FIXED = "appears", "fixed"
ALL_TYPES = "all types"


def _lane(column: dict) -> tuple:
    """What a column is compared within: its instruction set and cap."""
    return tuple(column["isa"]["extensions"] or ()), cap_text(column["isa"]["cap"])


def _marked(cells: list[dict], lanes: list[tuple]) -> list[dict]:
    """The cells with their transition mark, against the last release of the same lane (``_lane``)
    that ran the row (a release that did not run it neither breaks nor fixes it). A cell fails
    where another release's counterexample fails there (reports.matrix), so a bug one sample
    missed is not marked as appearing later; a pass where such a counterexample could not be
    asked is no pass to mark against."""
    marked, before = [], {}
    for cell, lane in zip(cells, lanes, strict=True):
        failing = cell["outcome"] in JUDGED_FAILURES
        mark = None
        if cell["outcome"] != NOT_RUN and (failing or not cell.get("not_asked")):
            if failing and before.get(lane) == PASS:
                mark = APPEARS
            elif cell["outcome"] == PASS and before.get(lane) in JUDGED_FAILURES:
                mark = FIXED
            before[lane] = cell["outcome"]
        marked.append({**cell, "mark": mark})
    return marked


def history(runs: list[tuple[Document, Path]], out: Path) -> dict:
    """The page's data: ``runs`` are (report document, the folder holding its report.html), in
    any order; the columns come oldest release first (runs of one release in the order given)."""
    runs = sorted(runs, key=lambda run: release_key(run[0]["certificate"]["implementation_version"] or ""))
    page = matrix(runs, out)
    lanes = [_lane(column) for column in page["columns"]]
    rows = []
    for section in page["sections"]:
        for clause in section["rows"]:
            typed = [(t["type"], t["cells"]) for t in clause["typed"]]
            if not typed and any(c["outcome"] in JUDGED_FAILURES for c in clause["cells"]):
                typed = [(ALL_TYPES, clause["cells"])]
            rows += [{"version": section["version"], "clause": clause["id"], "title": clause["title"],
                      "type": type_name, "cells": _marked(cells, lanes)} for type_name, cells in typed]
    return {"columns": page["columns"], "versions": page["versions"], "rows": rows, "replays": page["replays"],
            "releases": [column["version"] for column in page["columns"]], "isa_differs": page["isa_differs"]}


def as_json(page: dict) -> dict:
    """The page's data without what only the HTML needs: per row, the outcome and mark by release."""
    return {"releases": page["releases"], "isa_differs": page["isa_differs"],
            "runs": [{key: column[key] for key in ("impl", "version", "profile", "seed", "complete", "link", "isa")}
                     for column in page["columns"]],
            "replays": page["replays"],
            "rows": [{"version": row["version"], "clause": row["clause"], "type": row["type"],
                      "outcomes": [cell["outcome"] for cell in row["cells"]],
                      "own": [cell.get("own", cell["outcome"]) for cell in row["cells"]],
                      "found_in": [[f["source"] for f in cell.get("found_in", [])] for cell in row["cells"]],
                      "marks": [cell["mark"] for cell in row["cells"]]} for row in page["rows"]]}
