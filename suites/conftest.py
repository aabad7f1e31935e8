"""pytest hooks that make ``pytest suites --impl ...`` a conformance run (the same options as
``python -m suites``); the work is done in harness.py."""

from __future__ import annotations

import os
import time

import pytest

import spec
from suites import harness, publish
from suites.options import OPTIONS, validate
from suites.plugins import UsageError, describe

_STATE = pytest.StashKey[dict]()
_INTERNAL: list[str] = []  # tests that failed inside the suite rather than the implementation


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("argmin", "ArgMin conformance")
    for name, metavar, text, default in OPTIONS:
        group.addoption(name, metavar=metavar, help=text, default=default)


def _worker(config: pytest.Config) -> str | None:
    return getattr(config, "workerinput", {}).get("workerid")


def pytest_configure(config: pytest.Config) -> None:
    values = {name.lstrip("-").replace("-", "_"): config.getoption(name) for name, *_ in OPTIONS}
    try:
        settings = validate(values)
    except (UsageError, spec.SpecError) as exc:
        raise pytest.UsageError(str(exc)) from None
    from generators import profiles

    profiles.register()
    settings = harness.choose_seed(settings)
    os.environ["ARGMIN_SEED"] = str(settings.seed) if settings.seed is not None else ""
    config.stash[_STATE] = {"settings": settings, "started": time.time(), "conformance": None}


def pytest_report_header(config: pytest.Config) -> list[str]:
    settings = config.stash[_STATE]["settings"]
    restriction = ", ".join(settings.dtypes) if settings.dtypes else "all of T"
    return [f"implementation: {settings.impl} (isolation {settings.isolation}, timeout {settings.timeout:g} s)",
            f"ArgMin versions: {', '.join(map(str, settings.versions))}; types: {restriction}",
            f"profile: {settings.profile}; seed: {settings.seed}; reports: {settings.report_dir}"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "task" in metafunc.fixturenames:
        settings = metafunc.config.stash[_STATE]["settings"]
        tasks = harness.plan(settings, metafunc.module.SUITE)
        metafunc.parametrize("task", tasks, ids=[task.id for task in tasks])


@pytest.fixture(scope="session")
def settings(request: pytest.FixtureRequest):
    return request.config.stash[_STATE]["settings"]


@pytest.fixture(scope="session")
def conformance(request: pytest.FixtureRequest) -> harness.Conformance:
    state = request.config.stash[_STATE]
    state["conformance"] = harness.Conformance(state["settings"])
    yield state["conformance"]
    state["conformance"].close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Mark a test that fails for any reason other than a nonconformance: a fault of the run.
    The mark travels in user_properties, so pytest-xdist brings it to the controller."""
    report = yield
    if call.excinfo is not None and not call.excinfo.errisinstance((harness.Nonconformance, pytest.skip.Exception)):
        report.user_properties.append(("internal-error", call.excinfo.exconly().splitlines()[0]))
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for key, message in report.user_properties:
        if key == "internal-error":
            _INTERNAL.append(f"{report.nodeid}: {message}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    settings, conformance = state["settings"], state["conformance"]
    worker = _worker(config)
    if worker is not None:
        if conformance is not None:
            harness.write_part(conformance, worker)
        return
    results = list(conformance.results) if conformance else []
    census = list(conformance.census) if conformance else []
    parts = harness.read_parts(settings.report_dir)
    results += parts[0]
    census += parts[1]
    interrupted = exitstatus == pytest.ExitCode.INTERRUPTED or session.shouldstop
    reason = "interrupted before the end (Ctrl-C or a stop request)" if interrupted else None
    internal = exitstatus in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR)
    if internal:
        reason = "the run stopped on an internal error"
    if _INTERNAL:
        internal = True
        reason = f"{len(_INTERNAL)} test(s) failed inside the suite, not the implementation; first: {_INTERNAL[0]}"
    from reports.environment import collect

    environment = collect(describe(settings.impl))
    raw = harness.raw_run(settings, state["started"], results, census, not (interrupted or internal), reason,
                          environment)
    publish.LAST_RUN.clear()
    publish.LAST_RUN.update(raw=raw, paths=publish.write_run(raw, settings))


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if _worker(config) is not None or not publish.LAST_RUN:
        return
    for line in publish.summary_lines(publish.LAST_RUN["raw"], publish.LAST_RUN["paths"]):
        terminalreporter.write_line(line)
