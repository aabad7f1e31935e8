"""The end of a run: write the raw results and the reports, and the lines the terminal shows.

This is the one place where the suites hand over to the report layer below them."""

from __future__ import annotations

import json
from pathlib import Path

from .options import Settings
from .results import RawRun, to_json
from .verdict import verdicts

LAST_RUN: dict = {}  # the finished run's RawRun and report paths, for python -m suites


def write_run(raw: RawRun, settings: Settings) -> dict[str, Path]:
    """Write raw.json first (so nothing is lost if rendering fails), then the reports."""
    settings.report_dir.mkdir(parents=True, exist_ok=True)
    raw_path = settings.report_dir / "raw.json"
    raw_path.write_text(json.dumps(to_json(raw), indent=1), encoding="utf-8")
    paths = {"raw": raw_path}
    from reports import write_reports

    paths.update(write_reports(raw, settings.report_dir, lang=settings.lang))
    return paths


def summary_lines(raw: RawRun, paths: dict[str, Path]) -> list[str]:
    """One verdict line per version, then where the reports are."""
    info = raw.info
    restriction = f" (types restricted to {', '.join(info.dtypes)})" if info.dtypes else ""
    lines = [f"ArgMin conformance of {info.impl}, profile {info.profile}, seed {info.seed}:"]
    if not info.complete:
        lines.append(f"INCOMPLETE RUN: {info.incomplete_reason}")
    for version, verdict in verdicts(raw.results, info.versions).items():
        judged = [r for r in raw.results if r.version == version and r.kind != "undefined"]
        failed = sum(r.outcome != "pass" for r in judged)
        clauses = sorted({r.clause for r in judged if r.outcome != "pass"}, key=lambda c: int(c[1:]))
        why = f"; failing clauses {', '.join(clauses)}" if clauses else ""
        lines.append(f"  ArgMin-{version}: {verdict.upper()}{restriction} ({len(judged)} cases judged, "
                     f"{failed} not passed{why})")
    lines += [f"  {kind} report: {path}" for kind, path in paths.items()]
    return lines
