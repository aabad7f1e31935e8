"""``python -m suites --impl SPEC [options] [pytest options]``: the front door of a conformance
run. Exit status 0 when every selected version is conformant, 1 when any is not, 2 when the
run could not be carried out (with one line naming the problem and the fix)."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import pytest

import spec
from engine.asking.loader import UsageError
from engine.config.options import OPTIONS, check_report_dir, validate
from results import RawRun
from results.terminal import error
from results.verdict import exit_status

ROOT = Path(__file__).resolve().parent.parent


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m suites", description=__doc__,
                                     epilog="Other options (e.g. -n 0, -x, -k EXPR) are passed on to pytest. A run "
                                            "uses every core (pytest-xdist) unless given -n 0 or --isolation none.")
    for name, metavar, text, default in OPTIONS:
        parser.add_argument(name, metavar=metavar, help=text, default=default)
    return parser


class _Outcome:
    """A plugin object handed to pytest.main: it hears how the run ended."""

    def __init__(self) -> None:
        self.run: RawRun | None = None
        self.usage_error: str | None = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_argmin_run_finished(self, run: RawRun) -> None:
        self.run = run

    @pytest.hookimpl(wrapper=True)
    def pytest_cmdline_main(self, config: pytest.Config):
        # A plug-in that fails to load (in its worker) ends the run in pytest_configure with a
        # UsageError: keep its one line for our own message instead of pytest's.
        try:
            return (yield)
        except pytest.UsageError as exc:
            self.usage_error = " ".join(str(exc).split())
            return pytest.ExitCode.USAGE_ERROR


# pytest-xdist options that say how the tests are spread: where one is given, the run does as told.
_SPREAD = ("-n", "--numprocesses", "--tx", "--dist", "-d")


def cores() -> int:
    """How many test processes a run spreads over: pytest-xdist's own setting for ``-n auto``
    (``PYTEST_XDIST_AUTO_NUM_WORKERS``) where it is set, else the cores this process may run on."""
    told = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
    if told.isdigit():
        return int(told)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _spread(passthrough: list[str], isolation: str) -> list[str]:
    """Every core by default (pytest-xdist, one test process per core: verdicts are the same,
    sooner); ``-n 0`` runs in this process alone, and any other spreading option is kept.
    ``--isolation none`` (debugging in this process) is not spread unless asked."""
    given = any(arg.split("=")[0] in _SPREAD or re.fullmatch(r"-n\S+", arg) for arg in passthrough)
    return [] if given or cores() < 2 or isolation == "none" else ["-n", str(cores())]


def main(argv: list[str] | None = None) -> int:
    args, passthrough = _parser().parse_known_args(argv)
    try:
        where = check_report_dir(validate(vars(args)))
    except (UsageError, spec.SpecError) as exc:
        error(exc)
        return 2
    print(where, flush=True)
    values = {name: getattr(args, name.lstrip("-").replace("-", "_")) for name, *_ in OPTIONS}
    options = [f"{name}={value}" for name, value in values.items() if value is not None]
    outcome = _Outcome()
    code = pytest.main([str(ROOT / "suites"), f"--rootdir={ROOT}", "-p", "no:cacheprovider", "-p",
                        "reports.pytest_plugin", "-W", "ignore::pytest.PytestAssertRewriteWarning",
                        # The run ends with its verdict lines and where the report is: pytest's
                        # per-test tracebacks and FAILED summary would only repeat, unminimized, what
                        # the report's failure cards say ("F" in the progress marks a test that found one).
                        "-qq", "--tb=no", "-rN", *options, *_spread(passthrough, args.isolation), *passthrough],
                       plugins=[outcome])
    if outcome.usage_error is not None:
        error(outcome.usage_error)
        return 2
    run = outcome.run
    if run is None or code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR,
                               pytest.ExitCode.NO_TESTS_COLLECTED):
        error(f"the run could not be carried out (pytest exit status {int(code)}); see the messages above")
        return 2
    if not run.info.complete:
        error(f"incomplete run ({run.info.incomplete_reason}); the reports say so")
        return 2
    return exit_status(run)


if __name__ == "__main__":
    sys.exit(main())
