"""The report writer as a pytest plugin (loaded with ``-p reports.pytest_plugin``): when the
suites announce a finished run (``pytest_argmin_run_finished``), it writes report.html,
report.json and junit.xml next to the run's raw.json.gz, and prints one verdict line per version
at the end of the terminal output. It does the same for an earlier run that died unfinished and
was recovered when this one started (``pytest_argmin_run_recovered``), and says where. The
suites never import it."""

from __future__ import annotations

from pathlib import Path

import pytest

from results import RAW, RawRun
from results.verdict import failing_clauses, judged, verdicts

from . import write_reports
from .certificate import certificate, certificate_line
from .clauses import inferred_only

_WRITTEN = pytest.StashKey[tuple[RawRun, dict[str, Path]]]()
_RECOVERED = pytest.StashKey[Path]()


def _write(run: RawRun, report_dir: Path) -> dict[str, Path]:
    return {"raw": Path(report_dir) / RAW, **write_reports(run, report_dir, lang=run.info.lang)}


@pytest.hookimpl(optionalhook=True)
def pytest_argmin_run_finished(run: RawRun, report_dir: Path, config: pytest.Config) -> None:
    config.stash[_WRITTEN] = (run, _write(run, report_dir))


@pytest.hookimpl(optionalhook=True)
def pytest_argmin_run_recovered(run: RawRun, report_dir: Path, config: pytest.Config) -> None:
    config.stash[_RECOVERED] = _write(run, report_dir)["html"]


def summary_lines(run: RawRun, paths: dict[str, Path]) -> list[str]:
    """One verdict line per version, naming the profile and what it proves, then where the reports are."""
    info = run.info
    restriction = f" (types restricted to {', '.join(info.type_names)})" if info.type_names else ""
    label = info.profile_label.get("en")
    profile = f"{info.profile} profile" + (f": {label}" if label else "")
    lines = [f"ArgMin conformance of {info.impl}, profile {info.profile}, seed {info.seed}:"]
    if info.profile_description.get("en"):
        lines.append(f"  {info.profile} = {info.profile_description['en']}")
    if not info.complete:
        lines.append(f"INCOMPLETE RUN: {info.incomplete_reason}")
    for version, verdict in verdicts(run.results, info.versions).items():
        counted = judged(run.results, version)
        failed = sum(r.outcome != "pass" for r in counted)
        clauses = failing_clauses(run.results, version)
        why = f"; failing clauses {', '.join(clauses)}" if clauses else ""
        if inferred_only(run.results, version):
            why += " (all inferred, not stated by the ONNX text: see the report's clause sources)"
        lines.append(f"  ArgMin-{version}: {verdict.upper()}{restriction} [{profile}] ({len(counted)} cases judged, "
                     f"{failed} not passed{why})")
    lines.append(f"  {certificate_line(certificate(run))}")
    lines += [f"  {kind} report: {path}" for kind, path in paths.items()]
    return lines


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    recovered = config.stash.get(_RECOVERED, None)
    if recovered is not None:
        terminalreporter.write_line(f"An earlier run into this report dir died before its end; its results are "
                                    f"in {recovered.parent}, report marked incomplete: {recovered}")
    written = config.stash.get(_WRITTEN, None)
    if written is not None:
        for line in summary_lines(*written):
            terminalreporter.write_line(line)
