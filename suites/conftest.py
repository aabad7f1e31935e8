"""pytest hooks that make ``pytest suites --impl ...`` a conformance run (the same options as
``python -m suites``). The work is done by the engine; the results go to disk as they are
judged and, at the end, to whoever listens to ``pytest_argmin_run_finished`` (the reports).

SIGTERM (how CI systems and ``timeout`` cancel a job) ends a run as Ctrl-C does: the run stops,
its report is written marked incomplete, exit status 2. A run that died without writing its
report (SIGKILL, the OOM killer) left its stream on disk: the next run into the same report dir
sets it aside as a run marked incomplete (results.stream.set_aside) and announces it with
``pytest_argmin_run_recovered``."""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import FrameType

import pytest

import spec
from engine.asking.isolation import Runner
from engine.asking.loader import UsageError
from engine.asking.sandbox import undumpable
from engine.config import isa
from engine.config.options import OPTIONS, Settings, check_report_dir, choose_seed, implementation, run_info, validate
from engine.config.plan import Task
from engine.config.shards import select
from engine.judging.session import Nonconformance, Session
from generators import profiles
from results import IMPLEMENTATION_LOG, files, hooks, save, stream
from results.environment import collect, suite_state
from results.records import lost_tests, missing_census, test_key
from results.sizes import format_size

_STATE = pytest.StashKey[dict]()
RECORDS = "argmin-records"  # a test report's user property: the records an xdist worker made in that test
_INTERNAL: list[str] = []  # tests that failed inside the suite rather than the implementation
_INTERRUPTS: list[str] = []  # what interrupted the run (Ctrl-C, SIGTERM), first first
SANDBOX_INPUT = "argmin_sandbox"  # what an xdist worker's --sandbox must be (pytest_configure_node)
# Modules this process would otherwise import only after the implementation loaded (found by
# tests/test_hostile_runs.py): the suites' test modules, which pytest collects later, and what
# their imports, the tests and the reports reach lazily. The reports plug-in preloads its own.
PRELOAD = ("suites.test_semantic", "suites.test_rejection", "suites.test_census", "suites.test_onnx_node_cases",
           "numpy.random", "numpy.ma", "faulthandler", "pdb")
# What a pytest-xdist controller imports once its test processes start, after the implementation's.
PRELOAD_DISTRIBUTED = ("xdist.dsession", "xdist.workermanage", "xdist.remote", "xdist.report", "xdist.scheduler",
                       "getpass", "termios", "setproctitle")
TAMPERED = ("the run's results stream on disk was changed while it ran (by the implementation under test?); "
            "the report holds what the run judged itself, and the run is no certificate")


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM as Ctrl-C, once: a SIGTERM that comes while the run is already stopping (nox
    sends one after Ctrl-C, a CI may repeat its own) must not cut the report short."""
    if not _INTERRUPTS:
        _INTERRUPTS.append("SIGTERM")
        raise KeyboardInterrupt("SIGTERM")


def pytest_keyboard_interrupt() -> None:
    if not _INTERRUPTS:
        _INTERRUPTS.append("Ctrl-C")


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hooks)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("argmin", "ArgMin conformance")
    for name, metavar, text, default in OPTIONS:
        group.addoption(name, metavar=metavar, help=text, default=default)


def _xdist_worker(config: pytest.Config) -> str | None:
    return getattr(config, "workerinput", {}).get("workerid")


def _distributed(config: pytest.Config) -> bool:
    """This process is a pytest-xdist controller: the tests run in other processes."""
    return getattr(config.option, "dist", "no") != "no"


def pytest_configure(config: pytest.Config) -> None:
    values = {name.lstrip("-").replace("-", "_"): config.getoption(name) for name, *_ in OPTIONS}
    try:
        settings = validate(values)
    except (UsageError, spec.SpecError) as exc:
        raise pytest.UsageError(str(exc)) from None
    profiles.register()
    settings = choose_seed(settings)
    os.environ["ARGMIN_SEED"] = str(settings.seed) if settings.seed is not None else ""
    state = {"settings": settings, "started": time.time(), "runner": None, "session": None,
             "workers": len(getattr(config.option, "tx", None) or []) if _distributed(config) else 1}
    config.stash[_STATE] = state
    _INTERRUPTS.clear()
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    config.add_cleanup(lambda: signal.signal(signal.SIGTERM, previous))
    if settings.isolation == "process":
        undumpable()  # the implementation's worker cannot trace or patch the process that judges it
    if _xdist_worker(config) is not None:
        # Sandboxed where the controller's worker was (pytest_configure_node): an xdist worker
        # on another machine does not quietly run the implementation unsandboxed.
        state["settings"] = replace(settings, sandbox=config.workerinput.get(SANDBOX_INPUT, settings.sandbox))
        return
    suite = _before_the_implementation(settings, _distributed(config))
    # The process that owns the run loads the implementation first (in a worker process under
    # process isolation): a bad plug-in ends the run here, with the worker's one-line message.
    runner = None
    try:  # in-process (--isolation none) the constructor itself loads the implementation
        runner = implementation(settings)
        description = runner.load()
    except UsageError as exc:
        if runner is not None:
            runner.close()
        raise pytest.UsageError(str(exc)) from None
    if settings.impl_version is not None:  # the vendor's word, over whatever the module states
        description = {**description, "version": settings.impl_version, "version_stated_by": "--impl-version"}
    state["environment"] = collect(description, suite, runner.record(), isa.recorded(settings.impl, settings.isa))
    state["sandboxed"] = runner.sandbox.mechanism is not None
    _start_stream(config, state, runner)


def _before_the_implementation(settings: Settings, distributed: bool) -> dict:
    """What is settled before any of the implementation's code runs, so that nothing it could
    write is trusted: the report folder (made, or checked to hold nothing planted there and, as
    the default, no other implementation's report), the suite's state (its files hashed against
    its commit, its spec's digest), and every module this process will need (none is read from
    disk afterwards). Returns the suite's state."""
    try:
        check_report_dir(settings)
        files.prepare(settings.report_dir)
    except (files.Unsafe, UsageError) as exc:
        raise pytest.UsageError(str(exc)) from None
    (settings.report_dir / IMPLEMENTATION_LOG).unlink(missing_ok=True)  # an earlier run's output
    for name in PRELOAD:
        importlib.import_module(name)
    for name in PRELOAD_DISTRIBUTED if distributed else ():
        with contextlib.suppress(ImportError):  # setproctitle and termios are not everywhere
            importlib.import_module(name)
    return suite_state()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: object) -> None:
    """pytest-xdist, in the controller: each worker it starts requires the sandbox the
    controller's own worker had (``--sandbox require``), whatever its own settings say."""
    state = node.config.stash[_STATE]
    if state.get("sandboxed"):
        node.workerinput[SANDBOX_INPUT] = "require"


def _start_stream(config: pytest.Config, state: dict, runner: Runner) -> None:
    """Start the run's stream in its report folder (recovering an unfinished run found there)
    and keep ``runner`` for the tests, or close it where xdist workers run them."""
    settings = state["settings"]
    try:
        recovered = stream.set_aside(settings.report_dir, by="the next run into the same report dir")
        lock = stream.start(settings.report_dir, run_info(settings, state["started"], workers=state["workers"]),
                            state["environment"])
    except stream.InUse as exc:
        runner.close()
        raise pytest.UsageError(str(exc)) from None
    except (OSError, ValueError, TypeError, KeyError) as exc:
        runner.close()
        raise pytest.UsageError(f"{settings.report_dir}: an unfinished run's stream there cannot be read "
                                f"({type(exc).__name__}: {exc}); remove {stream.folder(settings.report_dir)} or "
                                f"choose another --report-dir") from None
    config.add_cleanup(lock.close)
    if recovered is not None:
        run, folder = recovered
        config.hook.pytest_argmin_run_recovered(run=run, report_dir=folder, config=config)
    # The report is built from this writer's memory: what this process judged, or, under xdist,
    # what the suite's own worker processes handed over with their test reports.
    state["writer"] = stream.Writer(settings.report_dir, "main")
    if _distributed(config):
        runner.close()  # the tests run in xdist workers, each with its own
        config.pluginmanager.register(_Collector(state["writer"]), "argmin-collector")
    else:
        state["runner"] = runner


class _Collector:
    """In a pytest-xdist controller: writes the records each worker sends with its test reports
    into the run's stream (so workers on other machines, ``--tx ssh=...``, need no shared disk)."""

    def __init__(self, writer: stream.Writer) -> None:
        self.writer = writer

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for key, value in report.user_properties:
            if key == RECORDS:
                self.writer.lines(value)
        # consumed here: a --junitxml file need not carry them
        report.user_properties = [(k, v) for k, v in report.user_properties if k != RECORDS]

    def pytest_sessionfinish(self) -> None:
        self.writer.close()


def _planned_key(node_id: str) -> str:
    """A collected test's key (results.records.test_key) from its node id: its module's suite."""
    module = importlib.import_module(f"suites.{Path(node_id.partition('::')[0]).stem}")
    return test_key(module.SUITE, node_id)


def pytest_collection_finish(session: pytest.Session) -> None:
    """The run's plan, where this process runs the tests itself: every test it collected."""
    state = session.config.stash.get(_STATE, None)
    if state is not None and state.get("writer") is not None and not _distributed(session.config):
        state["planned"] = sorted(_planned_key(item.nodeid) for item in session.items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: object, ids: list[str]) -> None:
    """pytest-xdist, in the controller: the run's plan, as its test processes collected it (each
    collects the same tests, or xdist stops the run)."""
    state = node.config.stash[_STATE]
    if state.get("planned") is None:
        state["planned"] = sorted(_planned_key(node_id) for node_id in ids)


def pytest_report_header(config: pytest.Config) -> list[str]:
    settings = config.stash[_STATE]["settings"]
    restriction = ", ".join(settings.type_names) if settings.type_names else "all of T"
    limit = format_size(settings.memory_limit) if settings.memory_limit else "none"
    return [f"implementation: {settings.impl} (isolation {settings.isolation}, timeout {settings.timeout:g} s, "
            f"memory limit {limit})",
            f"ArgMin versions: {', '.join(map(str, settings.versions))}; types: {restriction}",
            f"profile: {settings.profile}; seed: {profiles.seed_text(settings.seed, settings.profile)}; "
            f"reports: {settings.report_dir}"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "task" in metafunc.fixturenames:
        settings = metafunc.config.stash[_STATE]["settings"]
        tasks = select(settings, metafunc.module.SUITE)
        metafunc.parametrize("task", tasks, ids=[task.id for task in tasks])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A suite with no task in this run (a shard may hold none of its tests) is no test of the
    run: pytest's placeholder for an empty parameter set, which it would skip, is deselected."""
    empty = [item for item in items if not isinstance(getattr(item, "callspec", None) and
                                                      item.callspec.params.get("task"), Task)]
    if empty:
        items[:] = [item for item in items if item not in empty]
        config.hook.pytest_deselected(items=empty)


@pytest.fixture(scope="session")
def conformance(request: pytest.FixtureRequest) -> Session:
    config = request.config
    state = config.stash[_STATE]
    settings = state["settings"]
    # An xdist worker hands its records to the controller with each test's report instead.
    state["session"] = Session(settings, state["runner"], state.get("writer"))
    yield state["session"]
    state["session"].close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Mark a test that fails for any reason other than a nonconformance: a fault of the run.
    The mark travels in user_properties, so pytest-xdist brings it to the controller."""
    report = yield
    if call.excinfo is not None and not call.excinfo.errisinstance((Nonconformance, pytest.skip.Exception)):
        report.user_properties.append(("internal-error", call.excinfo.exconly().splitlines()[0]))
    session = item.config.stash[_STATE]["session"]
    if call.when == "call" and session is not None and _xdist_worker(item.config) is not None:
        records = stream.encode(*session.take_new())
        if records:
            report.user_properties.append((RECORDS, records))
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for key, message in report.user_properties:
        if key == "internal-error":
            _INTERNAL.append(f"{report.nodeid}: {message}")


def _incomplete_reason(session: pytest.Session, exitstatus: int) -> str | None:
    if _INTERNAL:
        return f"{len(_INTERNAL)} test(s) failed inside the suite, not the implementation; first: {_INTERNAL[0]}"
    if exitstatus in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR):
        return "the run stopped on an internal error"
    if exitstatus == pytest.ExitCode.INTERRUPTED or session.shouldstop:
        if _INTERRUPTS:
            return f"interrupted by {_INTERRUPTS[0]} before the end"
        return "interrupted before the end (a stop request)"
    return None


def _lost_reason(lost: list[str], missing: int, planned: int) -> str | None:
    """Why a run that lost tests is incomplete: how many, the first few, and what loses one."""
    if not lost and not missing:
        return None
    named = ", ".join(lost[:3]) + (f" and {len(lost) - 3} more" if len(lost) > 3 else "")
    what = f"{len(lost)} of {planned} planned tests delivered no end mark or not every record ({named})" if lost \
        else f"{missing} census records its tests counted are missing"
    return f"{what}: a test process died before its results reached the run (killed, e.g. by the out-of-memory killer)"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the report is being written: a SIGTERM now waits for it
    if state["session"] is not None:
        state["session"].close()  # idempotent; the fixture may not have been torn down on Ctrl-C
    elif state["runner"] is not None:
        state["runner"].close()
    settings, writer = state["settings"], state.get("writer")
    if writer is None:  # an xdist worker, or a run that never started
        return
    writer.close()
    reason = _incomplete_reason(session, exitstatus)
    if not writer.intact():
        reason = reason or TAMPERED
        print(f"\nWARNING: {TAMPERED}", file=sys.stderr)
    run = writer.run(run_info(settings, state["started"], workers=state["workers"], planned=state.get("planned", [])),
                     state["environment"])
    lost, missing = lost_tests(run), missing_census(run)
    reason = reason or _lost_reason(lost, missing, len(run.info.planned))
    run.info = replace(run.info, complete=reason is None, incomplete_reason=reason, lost=lost)
    save(run, settings.report_dir)
    stream.clear(settings.report_dir)
    config.hook.pytest_argmin_run_finished(run=run, report_dir=settings.report_dir, config=config)
