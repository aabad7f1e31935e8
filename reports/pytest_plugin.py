"""The report writer as a pytest plugin (loaded with ``-p reports.pytest_plugin``): when the
suites announce a finished run (``pytest_argmin_run_finished``), it writes report.html,
report.json, junit.xml and regressions/ next to the run's raw.json.gz, and prints one verdict line per version
at the end of the terminal output. It does the same for an earlier run that died unfinished and
was recovered when this one started (``pytest_argmin_run_recovered``), and says where. The
suites never import it."""

from __future__ import annotations

from pathlib import Path

import pytest

from generators.profiles import seed_text
from results import IMPLEMENTATION_LOG, RAW, RawRun, RunInfo
from results.records import REPRODUCE
from results.terminal import printable
from results.verdict import NOT_JUDGED

from . import write_documents
from .document.aggregate import aggregate
from .document.parts import Attributes, CensusEntry, Document, Value, Version
from .folders import baseline, regressions
from .pages import render
from .pages.i18n import MessagesError, Translator
from .pages.isa import cap_text
from .pages.standing import causes_line, certificate_line, scope_text, strictness_text, type_policy

_WRITTEN = pytest.StashKey[tuple[RawRun, Document, dict[str, Path]]]()
_RECOVERED = pytest.StashKey[Path]()
_BASELINE = pytest.StashKey[tuple[str, baseline.Causes]]()


_LOST_SHOWN = 20  # lost tests named on the terminal; the report lists every one

# What the implementation printed: named where there is any.
_LOG_KIND = "implementation output (its stdout and stderr)"
# How the end of the terminal output names what was written, where not "<kind> report".
_NAMED = {_LOG_KIND: _LOG_KIND, "regressions": "regression tests (ONNX node tests)"}


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before the suites load the implementation (their own pytest_configure): everything this
    writer needs at the end of the run is imported and compiled now."""
    try:
        render.preload()
    except MessagesError as exc:
        raise pytest.UsageError(str(exc)) from None
    report_dir = config.getoption("--report-dir", None)
    try:  # a regressions/ there that the suite did not write stops the run now, not at its end
        if report_dir:
            regressions.check_replaceable(Path(report_dir) / regressions.FOLDER)
    except regressions.NotAnExport as exc:
        raise pytest.UsageError(str(exc)) from None
    path = config.getoption("--baseline", None)
    if path:  # read before the run: a bad baseline stops it (exit status 2), not its end
        try:
            config.stash[_BASELINE] = baseline.read(Path(path))
        except baseline.BaselineError as exc:
            raise pytest.UsageError(str(exc)) from None


def _write(run: RawRun, report_dir: Path,
           against: tuple[str, baseline.Causes] | None = None) -> tuple[Document, dict[str, Path]]:
    document = aggregate(run)
    if against is not None:
        baseline.record(run, document, report_dir, against)
    paths = {"raw": Path(report_dir) / RAW, **write_documents(document, report_dir, lang=run.info.lang)}
    log = Path(report_dir) / IMPLEMENTATION_LOG
    if log.is_file() and log.stat().st_size:
        paths[_LOG_KIND] = log
    return document, paths


@pytest.hookimpl(optionalhook=True)
def pytest_argmin_run_finished(run: RawRun, report_dir: Path, config: pytest.Config) -> None:
    config.stash[_WRITTEN] = (run, *_write(run, report_dir, config.stash.get(_BASELINE, None)))


@pytest.hookimpl(optionalhook=True)
def pytest_argmin_run_recovered(run: RawRun, report_dir: Path, config: pytest.Config) -> None:
    config.stash[_RECOVERED] = _write(run, report_dir)[1]["html"]


def summary_lines(run: RawRun, paths: dict[str, Path], document: Document | None = None) -> list[str]:
    """One verdict line per version, naming the profile and what it proves, with its scope and
    strictness beside it and any census warning; then what the run was and cost, and where the
    reports are."""
    info = run.info
    label = info.profile_label.get("en")
    profile = f"{info.profile} profile" + (f": {label}" if label else "")
    part = "" if info.shard is None else f" [shard {info.shard['index']} of {info.shard['count']}, not the whole run]"
    document = document or aggregate(run)
    census = {c["anchor"]: c for c in document["census"]}
    verdicts = [line for v in document["versions"] for line in _version(v, census, f"[{profile}]{part}")]
    written = [f"  {_NAMED.get(kind, kind + ' report')}: {path}" for kind, path in paths.items()]
    return [*_heading(info), *verdicts, *_afterword(info, document), *written]


def _heading(info: RunInfo) -> list[str]:
    """What ran, and what the verdicts beneath do not cover: an incomplete run, lost tests, a shard."""
    lines = [f"ArgMin conformance of {info.impl}, profile {info.profile}, seed {seed_text(info.seed, info.profile)}:"]
    if info.profile_description.get("en"):
        lines.append(f"  {info.profile} = {info.profile_description['en']}")
    if not info.complete:
        lines.append(f"INCOMPLETE RUN: {info.incomplete_reason}")
    lost = info.lost or []
    lines += [f"  LOST TEST (no results reached the run): {key}" for key in lost[:_LOST_SHOWN]]
    if len(lost) > _LOST_SHOWN:
        lines.append(f"  ... and {len(lost) - _LOST_SHOWN} more lost tests (report.json's run.lost lists them all)")
    if info.shard is not None:
        lines.append(f"SHARD {info.shard['index']} OF {info.shard['count']}: these verdicts cover this part's "
                     f"{len(info.shard['tests'])} of the run's {info.shard['plan_tests']} tests only; merge every "
                     f"shard's folder with `nox -s merge` for the run's verdicts")
    return lines


def _version(v: Version, census: dict[str, CensusEntry], run_tag: str) -> list[str]:
    """A version's verdict line (``run_tag``: the profile and the part of the run), its
    strictness and its census warnings."""
    t = Translator("en")
    if v["verdict"] == NOT_JUDGED:  # nothing ran to read a headline, a scope or a strictness from
        return [f"  ArgMin-{v['version']}: {t(NOT_JUDGED).upper()}: {t(v['reason'])} {run_tag}"]
    why = f" ({causes_line(v['causes'])})" if v["causes"] else ""
    if v["inferred_only"]:
        why += " (all inferred, not stated by the ONNX text: see the report's clause sources)"
    scope = scope_text(t, v["scope"], v["type_restriction"] is not None)
    lines = [f"  ArgMin-{v['version']}: {v['verdict'].upper()}{why}; {scope} {run_tag} ({v['judged']} cases judged)",
             f"      {strictness_text(t, v['strictness'])}"]
    for warning in v["census_warnings"]:
        cause = f" (goes with {warning['same_cause']}'s wrong answers)" if warning["same_cause"] else ""
        lines.append(f"      census {warning['topic']} {warning['title']}: {', '.join(warning['warnings'])}{cause}")
        lines += [f"        {line}" for line in _exceptions(t, census[warning["anchor"]])]
    return lines


def _afterword(info: RunInfo, document: Document) -> list[str]:
    """What the run is (a certificate or not), its instruction-set cap, what its models cost, its
    schedule and its comparison with a baseline."""
    lines = [f"  {certificate_line(document['certificate'])}"]
    cap = document["certificate"].get("isa_cap")
    if cap:
        by = "--isa" if cap["by"] == "--isa" else "the run's environment"
        lines.append(f"  instruction set capped: {cap_text(cap)} (set by {by})")
    if info.models_compiled is not None:
        loaded = f", {info.models_loaded:,} more loaded from the compile cache" if info.models_loaded else ""
        took = f" in {info.model_seconds:,.1f} s" if info.model_seconds is not None else ""
        nodes = sum(row.get("nodes", 0) for row in info.model_usage or ())
        held = f" ({nodes:,} nodes)" if nodes else ""
        fresh = [u for u in info.model_usage or () if u["suite"] == REPRODUCE]
        again = f"; {sum(u['compiles'] for u in fresh):,} of them for {sum(u['calls'] for u in fresh):,} calls " \
                f"asking failures again in fresh workers" if fresh else ""
        lines.append(f"  models compiled: {info.models_compiled:,}{held}{took} for {info.calls_made:,} calls{loaded} "
                     f"(packing {info.packing}; {info.workers} test process{'es' * (info.workers > 1)}{again})")
    if info.schedule is not None:
        shapes = f" and {info.schedule['shapes']:,} shapes" if info.schedule["shapes"] else ""
        lines.append(f"  schedule: {info.schedule['size']} signatures per version and type (compiled per "
                     f"{info.schedule['compile_key']}), {info.schedule['signatures']:,} signatures{shapes} in all; "
                     f"--schedule off draws every signature")
    if info.baseline is not None:
        lines += [f"  {line}" for line in baseline.lines(info.baseline)]
    return lines


def _exceptions(t: Translator, entry: CensusEntry) -> list[str]:
    """Per type of a census topic whose policy has exceptions: how many answers follow it, and the
    exceptions among the topic's examples ("int32: first minimum, 270 of 272; 2 answer(s) fit no
    rule, e.g. [1, 1, 1] -> 1")."""
    lines = []
    for ty in entry["types"]:
        if ty["exceptions"]:
            shown = [f"{_shown(e['input'])}{_attributes(e['attributes'])} -> {_shown(e['observed'])}"
                     for e in entry["examples"] if e["type"] == ty["type"] and not e["fits"]]
            examples = f", {t('exceptions-examples', examples='; '.join(shown))}" if shown else ""
            lines.append(f"{ty['type']}: {type_policy(t, ty)}{examples}")
    return lines


def _shown(value: Value) -> str:
    return value["display"] if isinstance(value, dict) else str(value)


def _attributes(attributes: Attributes) -> str:
    return f" ({', '.join(f'{k}={v}' for k, v in attributes.items())})" if attributes else ""


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    recovered = config.stash.get(_RECOVERED, None)
    if recovered is not None:
        terminalreporter.write_line(f"An earlier run into this report dir died before its end; its results are "
                                    f"in {recovered.parent}, report marked incomplete: {recovered}")
    written = config.stash.get(_WRITTEN, None)
    if written is not None:
        run, document, paths = written
        for line in summary_lines(run, paths, document):
            terminalreporter.write_line(printable(line))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """With a baseline, a complete run's exit status says whether it found a new failure."""
    written = session.config.stash.get(_WRITTEN, None)
    info = written[0].info if written else None
    if info is not None and info.baseline is not None and info.complete and session.exitstatus in (0, 1):
        session.exitstatus = 1 if info.baseline["new"] else 0
