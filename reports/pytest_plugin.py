"""The report writer as a pytest plugin (loaded with ``-p reports.pytest_plugin``): when the
suites announce a finished run (``pytest_argmin_run_finished``), it writes report.html,
report.json and junit.xml next to the run's raw.json, and prints one verdict line per version
at the end of the terminal output. The suites never import it."""

from __future__ import annotations

from pathlib import Path

import pytest

from results import RawRun
from results.verdict import failing_clauses, judged, verdicts

from . import write_reports

_WRITTEN = pytest.StashKey[tuple[RawRun, dict[str, Path]]]()


@pytest.hookimpl(optionalhook=True)
def pytest_argmin_run_finished(run: RawRun, report_dir: Path, config: pytest.Config) -> None:
    paths = {"raw": Path(report_dir) / "raw.json", **write_reports(run, report_dir, lang=run.info.lang)}
    config.stash[_WRITTEN] = (run, paths)


def summary_lines(run: RawRun, paths: dict[str, Path]) -> list[str]:
    """One verdict line per version, then where the reports are."""
    info = run.info
    restriction = f" (types restricted to {', '.join(info.type_names)})" if info.type_names else ""
    lines = [f"ArgMin conformance of {info.impl}, profile {info.profile}, seed {info.seed}:"]
    if not info.complete:
        lines.append(f"INCOMPLETE RUN: {info.incomplete_reason}")
    for version, verdict in verdicts(run.results, info.versions).items():
        counted = judged(run.results, version)
        failed = sum(r.outcome != "pass" for r in counted)
        clauses = failing_clauses(run.results, version)
        why = f"; failing clauses {', '.join(clauses)}" if clauses else ""
        lines.append(f"  ArgMin-{version}: {verdict.upper()}{restriction} ({len(counted)} cases judged, "
                     f"{failed} not passed{why})")
    lines += [f"  {kind} report: {path}" for kind, path in paths.items()]
    return lines


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    written = config.stash.get(_WRITTEN, None)
    if written is not None:
        for line in summary_lines(*written):
            terminalreporter.write_line(line)
