"""Reports: a run's raw records -> report.json (the aggregated document), report.html (the
certification report), junit.xml and regressions/ (its failures as ONNX node tests); and the
comparison of two runs. In three rooms, each importing only those before it: document/ (to
report.json), pages/ (from report.json), folders/ (the tools that read and write report folders)."""

from __future__ import annotations

import json
from pathlib import Path

from results import RawRun, files

from .document.aggregate import SCHEMA, aggregate
from .document.parts import Document
from .folders import regressions
from .pages.junit import to_junit
from .pages.render import render_report

__all__ = ["SCHEMA", "aggregate", "write_documents", "write_reports"]


def write_documents(document: Document, report_dir: Path, lang: str = "en") -> dict[str, Path]:
    """Write the three files and regressions/ for an already aggregated document, each renamed
    into place whole and never through a link (results.files.write, results.files.write_folder).
    Nothing is written where a regressions/ there is not the suite's (regressions.NotAnExport)."""
    report_dir = Path(report_dir)
    regressions.check_replaceable(report_dir / regressions.FOLDER)
    report_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
    return {"html": files.write(report_dir, "report.html", render_report(document, lang).encode("utf-8")),
            "json": files.write(report_dir, "report.json", text.encode("utf-8")),
            "junit": files.write(report_dir, "junit.xml", to_junit(document)),
            "regressions": regressions.write(document, report_dir)}


def write_reports(raw: RawRun, report_dir: Path, lang: str = "en") -> dict[str, Path]:
    """Write report.html, report.json (aggregated, schema-valid), junit.xml and regressions/ into
    report_dir (created if needed); return their paths by kind (html, json, junit, regressions).
    Content coming from the implementation under test is only ever escaped, never interpreted."""
    return write_documents(aggregate(raw), report_dir, lang)
