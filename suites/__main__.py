"""``python -m suites --impl SPEC [options] [pytest options]``: the front door of a conformance
run. Exit status 0 when every selected version is conformant, 1 when any is not, 2 when the
run could not be carried out (with one line naming the problem and the fix)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

import spec

from . import publish
from .options import OPTIONS, validate
from .plugins import UsageError
from .verdict import CONFORMANT, verdicts

ROOT = Path(__file__).resolve().parent.parent


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m suites", description=__doc__,
                                     epilog="Other options (e.g. -n auto, -x, -k EXPR) are passed on to pytest.")
    for name, metavar, text, default in OPTIONS:
        parser.add_argument(name, metavar=metavar, help=text, default=default)
    return parser


def main(argv: list[str] | None = None) -> int:
    args, passthrough = _parser().parse_known_args(argv)
    try:
        validate(vars(args))
    except (UsageError, spec.SpecError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    values = {name: getattr(args, name.lstrip("-").replace("-", "_")) for name, *_ in OPTIONS}
    options = [f"{name}={value}" for name, value in values.items() if value is not None]
    code = pytest.main([str(ROOT / "suites"), f"--rootdir={ROOT}", "-p", "no:cacheprovider", "-q", "--tb=line",
                        *options, *passthrough])
    run = publish.LAST_RUN.get("raw")
    if run is None or code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR,
                               pytest.ExitCode.NO_TESTS_COLLECTED):
        print(f"error: the run could not be carried out (pytest exit status {int(code)}); see the messages above",
              file=sys.stderr)
        return 2
    if not run.info.complete:
        print(f"error: incomplete run ({run.info.incomplete_reason}); the reports say so", file=sys.stderr)
        return 2
    results = verdicts(run.results, run.info.versions)
    return 0 if all(v == CONFORMANT for v in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
