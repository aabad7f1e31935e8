"""A version an interrupted run never reached reads NOT JUDGED, on the terminal, in the report
card and in report.json, never NON-CONFORMANT for 0 types; a failure found before the interrupt
still makes its version NON-CONFORMANT, and a complete run is judged as before."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jsonschema

from reports import aggregate
from reports.pages.render import render_report
from reports.pytest_plugin import summary_lines
from results import CaseResult, RawRun
from tests.report_fixtures.runs import passing_run

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "reports" / "document" / "report.schema.json")
                    .read_text())
REASON = "interrupted by SIGTERM before the end"


def _stopped(complete: bool = False, extra: list[CaseResult] = ()) -> RawRun:
    """ArgMin-11, -12 and -13 asked; ArgMin-12 ran whole, ArgMin-13 only its rejection cases,
    ArgMin-11 nothing (plus ``extra``)."""
    raw = passing_run()
    results = [r for r in raw.results if r.version == 12 or r.kind == "rejection"] + list(extra)
    info = dataclasses.replace(raw.info, versions=[11, 12, 13], complete=complete,
                               incomplete_reason=None if complete else REASON)
    return RawRun(info, raw.environment, results, [])


def _by_version(document: dict) -> dict[int, dict]:
    return {v["version"]: v for v in document["versions"]}


def test_versions_the_run_stopped_before_are_not_judged() -> None:
    document = aggregate(_stopped())
    jsonschema.Draft202012Validator(SCHEMA).validate(document)
    versions = _by_version(document)
    assert (versions[11]["verdict"], versions[11]["reason"]) == ("not-judged", "reason-interrupted")
    assert (versions[13]["verdict"], versions[13]["reason"]) == ("not-judged", "reason-interrupted-no-semantic")
    assert versions[12]["verdict"] == "conformant"
    lines = summary_lines(_stopped(), {}, document)
    assert any(line.strip().startswith("ArgMin-11: NOT JUDGED: the run was interrupted before any case of this "
                                       "version") for line in lines), lines
    assert not any("NON-CONFORMANT" in line for line in lines), lines
    html = render_report(document)
    assert 'data-version="11" data-verdict="not-judged"' in html
    assert "the run was interrupted before any case of this version" in html
    assert "執行在本版本的任何案例之前即已中斷" in render_report(document, "zh-TW")


def test_a_failure_before_the_interrupt_still_counts() -> None:
    crash = CaseResult(11, "float", "property", "semantic", "crash", ["C1"], "C1", [], "t", 0.0, None)
    assert _by_version(aggregate(_stopped(extra=[crash])))[11]["verdict"] == "non-conformant"


def test_a_complete_run_without_cases_of_a_version_is_non_conformant() -> None:
    versions = _by_version(aggregate(_stopped(complete=True)))
    assert (versions[11]["verdict"], versions[11]["reason"]) == ("non-conformant", "reason-no-semantic")
