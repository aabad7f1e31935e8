"""``python -m reports render RAW_OR_REPORT --out DIR [--lang zh-TW]``,
``python -m reports compare OLD NEW [--html OUT]`` (exit 1 on a regression),
``python -m reports matrix RUN RUN ... [--out FILE]`` (several runs on one page),
``python -m reports history RUN RUN ... --out FILE.html`` (one runtime's releases, and FILE.json),
``python -m reports verify REPORT [--rerun] [--certificate]`` (check a report; exit 1 when a check
fails),
``python -m reports rebuild DIR`` (the reports of a run that died unfinished, from its stream),
``python -m reports merge SHARD_DIR... --out DIR [--baseline DIR_OR_FILE]`` (one run from its ``--shard``
folders; exit status as a run's), ``python -m reports baseline REPORT --out FILE`` (a
``--baseline`` expectations file from a report) and ``python -m reports export REPORT --out DIR
[--passing N]`` (its failures as ONNX backend node tests, as every report folder's regressions/).

A run is named by its report folder, its report.json, or its raw results (raw.json.gz)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from results import RAW, RawRun, Unreadable, from_json, load, raw_path, read_json, replays, save, stream
from results.terminal import printable
from results.verdict import exit_status

from . import SCHEMA, aggregate, write_documents, write_reports
from .document.parts import Document
from .folders import baseline, regressions
from .folders.merge import MergeError, merge
from .folders.verify import CannotVerify, Check, answer, verify
from .pages.compare import as_text, compare
from .pages.history import as_json, history
from .pages.i18n import LANGUAGES, MessagesError
from .pages.matrix import matrix
from .pages.render import render_comparison, render_history, render_matrix
from .pytest_plugin import summary_lines

DEFAULT_MATRIX = Path(__file__).resolve().parent / "out" / "matrix.html"


class UsageError(Exception):
    """Bad input from the command line; the message is one line naming the problem and the fix."""


def _read(path: Path) -> dict:
    try:
        document = read_json(path)
    except Unreadable as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the file ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not a JSON file ({exc}); pass a report.json or a raw run file") from None
    if not isinstance(document, dict):
        raise UsageError(f"{path}: expected a JSON object; pass a report.json or a raw run file")
    return document


def report_file(path: Path) -> Path:
    """The file a run argument names: a report folder means its report.json (or, without one, its
    raw results)."""
    if path.is_dir():
        return path / "report.json" if (path / "report.json").exists() else raw_path(path)
    return path


def load_report(path: Path) -> Document:
    """A report document, aggregating a raw run file (results.to_json output) on the way."""
    path = report_file(path)
    document = _read(path)
    if document.get("schema") == SCHEMA:
        return document
    if "schema" in document:
        raise UsageError(f"{path}: schema {document['schema']!r} is not {SCHEMA!r}; re-render it with "
                         f"`nox -s render` from its raw results")
    if {"info", "environment", "results", "census"} <= document.keys():
        try:
            return aggregate(from_json(document))
        except (TypeError, KeyError, ValueError) as exc:
            raise UsageError(f"{path}: not a valid raw run ({type(exc).__name__}: {exc})") from None
    raise UsageError(f"{path}: neither a report ({SCHEMA}) nor a raw run; pass the report.json a run wrote")


def _rebuild(report_dir: Path, lang: str | None) -> dict[str, Path]:
    """Reports marked incomplete for the run that left its stream in ``report_dir``, written
    where results.stream.set_aside puts them."""
    try:
        recovered = stream.set_aside(report_dir, by="python -m reports rebuild")
    except stream.InUse as exc:
        raise UsageError(str(exc)) from None
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise UsageError(f"{report_dir}: the stream of the unfinished run cannot be read ({type(exc).__name__}: "
                         f"{exc}); its records are in {stream.folder(report_dir)}") from None
    if recovered is None:
        raise UsageError(f"{report_dir}: no unfinished run to rebuild (no {stream.FOLDER}/{stream.HEADER}); to "
                         f"re-render a finished run use nox -s render -- {report_dir / RAW} --out DIR")
    run, folder = recovered
    return {"raw": folder / RAW, **write_reports(run, folder, lang or run.info.lang)}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m reports", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    render = commands.add_parser("render", help="write report.html, report.json and junit.xml")
    render.add_argument("source", type=Path, help="a report.json or a raw run file (raw.json.gz)")
    render.add_argument("--out", type=Path, required=True, help="directory for the three files")
    render.add_argument("--lang", choices=LANGUAGES, default="en")
    diff = commands.add_parser("compare", help="what changed between two runs; exit 1 on a regression")
    diff.add_argument("old", type=Path)
    diff.add_argument("new", type=Path)
    diff.add_argument("--html", type=Path, help="also write the comparison as an HTML page")
    diff.add_argument("--lang", choices=LANGUAGES, default="en")
    side = commands.add_parser("matrix", help="several runs on one page, one column per implementation")
    side.add_argument("runs", type=Path, nargs="+", help="report folders or report.json files")
    side.add_argument("--out", type=Path, default=DEFAULT_MATRIX, help=f"the page to write (default {DEFAULT_MATRIX})")
    side.add_argument("--lang", choices=LANGUAGES, default="en")
    releases = commands.add_parser("history", help="one runtime's releases side by side, oldest first")
    releases.add_argument("runs", type=Path, nargs="+", help="one report folder or report.json per release")
    releases.add_argument("--out", type=Path, required=True, help="the page to write (its data beside it, .json)")
    rebuild = commands.add_parser("rebuild", help="reports marked incomplete for a run that died before its end "
                                                  "(SIGKILL, out of memory), from the results it streamed into DIR")
    rebuild.add_argument("report_dir", type=Path, metavar="DIR", help="the run's --report-dir")
    rebuild.add_argument("--lang", choices=LANGUAGES, help="report language (default: the run's own)")
    check = commands.add_parser("verify", help="check a report without the implementation; exit 1 when a check fails "
                                               "(with --certificate, also where it is no certificate)")
    check.add_argument("report", type=Path, help="a report folder or its report.json")
    check.add_argument("--rerun", action="store_true",
                       help="also run the suite again with the recorded settings and compare the results digests "
                            "(shows the implementation and command and asks first)")
    check.add_argument("--yes", action="store_true", help="with --rerun: run without asking")
    check.add_argument("--confirm-only", action="store_true",
                       help="with --rerun: stop once the rerun is shown and confirmed, exit 0 (nox -s verify then "
                            "installs what it needs and reruns)")
    check.add_argument("--certificate", action="store_true",
                       help="fail (exit 1) where the report is not a certificate; without it, that is only said")
    check.add_argument("--shard", metavar="K/N", help="with --rerun: run only the K-th of N parts of the run (as "
                                                      "--shard K/N made it) and compare that part's results")
    join = commands.add_parser("merge", help="one report from the report folders of a run's --shard K/N parts")
    join.add_argument("shards", type=Path, nargs="+", metavar="SHARD_DIR", help="each shard's --report-dir")
    join.add_argument("--out", type=Path, required=True, help="the merged report's folder")
    join.add_argument("--baseline", type=Path, help="compare with this baseline (a report folder, its report.json "
                                                    "or an expectations file), as a run's --baseline")
    join.add_argument("--lang", choices=LANGUAGES, help="report language (default: the shards' own)")
    expect = commands.add_parser("baseline", help="a --baseline expectations file: a report's failures")
    expect.add_argument("report", type=Path, help="a report folder or its report.json")
    expect.add_argument("--out", type=Path, required=True, help="the expectations file to write")
    tests = commands.add_parser(
        "export", help="a report's failures as ONNX backend node tests (model.onnx, test_data_set_0/), as in "
                       "every report folder's regressions/, for a runtime's own CI")
    tests.add_argument("report", type=Path, nargs="?", help="a report folder, its report.json or its raw results")
    tests.add_argument("--out", type=Path, help="the folder to write: a new or empty one, or an earlier export's "
                                                "(replaced)")
    tests.add_argument("--passing", metavar="N",
                       help="also up to N passing judged cases per (version, clause or suite, type), from the run's "
                            "raw results; only inputs the run recorded can be exported, and a run records a passing "
                            "case's input only as a digest, so these are the passing cases among the nodes of the "
                            "packed models recorded with failures (often none)")
    return parser


# What a malformed report makes the code that reads it raise: missing keys, wrong types.
MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError)


def _say(text: object, **options: object) -> None:
    print(printable(text), flush=True, **options)


def _verify(args: argparse.Namespace) -> int:
    if (args.shard is not None or args.confirm_only) and not args.rerun:
        raise CannotVerify("--shard and --confirm-only say how to rerun; add --rerun, or leave them out")
    checks: list[Check] = []
    try:
        for check in verify(args.report, rerun=args.rerun, confirm=None if args.yes else _confirm, say=_say,
                            shard=args.shard, certificate=args.certificate, confirm_only=args.confirm_only):
            _say(check)
            checks.append(check)
    except CannotVerify as exc:
        if not checks:  # nothing was checked: the one error line is the answer
            raise
        _say(f"error: {exc}", file=sys.stderr)
        _say(answer(checks, unfinished=True))
        return 2
    if args.confirm_only:  # the checks are made again, with the rerun, by the next process
        return 0
    _say(answer(checks))
    return 1 if any(check.counts and not check.ok for check in checks) else 0


def _confirm(question: str) -> bool:
    """The user's yes to ``question``; refused without asking when nobody can answer."""
    if not sys.stdin.isatty():
        raise CannotVerify("--rerun runs the implementation the report names; stdin is not a terminal, so nobody "
                           "can confirm: pass --yes to run it")
    answer = input(printable(question))
    return answer.strip().lower() in ("y", "yes")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _merge(shards: list[Path], out: Path, against: Path | None, lang: str | None) -> int:
    """Merge, write every report file and the verdict lines; the exit status a run would have."""
    regressions.check_replaceable(out / regressions.FOLDER)
    try:
        expected = baseline.read(against) if against is not None else None
        run = merge(shards)
    except (MergeError, baseline.BaselineError) as exc:
        raise UsageError(str(exc)) from None
    paths = {"raw": save(run, out)}
    document = aggregate(run)
    if expected is not None:
        baseline.record(run, document, out, expected)
    paths.update(write_documents(document, out, lang or run.info.lang))
    for line in summary_lines(run, paths, document):
        _say(line)
    return exit_status(run)


_MOST_PASSING = 10_000  # --passing N: per group


def _export(report: Path | None, out: Path | None, passing: str | None) -> int:
    """The report's node tests (and recorded passing cases) into ``out``, and one line on them."""
    if report is None or out is None:
        raise UsageError("name a report and a folder: python -m reports export REPORT_DIR --out DIR [--passing N]")
    per_group = int(passing) if passing is not None and passing.isascii() and passing.isdigit() else -1
    if passing is not None and not 0 <= per_group <= _MOST_PASSING:
        raise UsageError(f"--passing {passing!r}: give a whole number of cases per group, at most {_MOST_PASSING:,}")
    regressions.check_replaceable(out)  # before reading anything: the one line comes first
    document = load_report(report)
    cases = regressions.passing_cases(_raw_run(report), per_group) if per_group > 0 else []
    index = regressions.export(document, out, cases)
    sets = Counter(test["set"] for test in index["tests"])
    held = ", ".join(f"{sets[name]} in {name}/" for name in regressions.SETS if sets[name]) or "no test"
    _say(f"regressions: {out} ({held}; {len(index['left_out'])} left out: {out / regressions.INDEX} says which and "
         f"why; run them with pytest {out} --argmin-backend MODULE)")
    return 0


def _raw_run(report: Path) -> RawRun:
    """The raw results beside a report (--passing reads its cases)."""
    named = report_file(report)
    path = raw_path(named.parent) if named.name == "report.json" else named
    if not path.is_file():
        raise UsageError(f"--passing reads the run's raw results, and {path.parent} holds none ({RAW}); name the "
                         f"report folder a run wrote")
    try:
        return load(path)
    except Unreadable as exc:
        raise UsageError(str(exc)) from None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _command(args)
    except (UsageError, CannotVerify, MessagesError, regressions.NotAnExport) as exc:
        _say(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        _say(f"error: cannot read or write {exc.filename}: {exc.strerror}; check the path", file=sys.stderr)
        return 2
    except MemoryError:
        _say("error: this process ran out of memory reading the report (its limit is lower than the files need); "
             "check them where more memory is allowed", file=sys.stderr)
        return 2
    except MALFORMED as exc:
        text = " ".join(str(exc).split())[:200]
        _say(f"error: a malformed report or raw results file ({type(exc).__name__}: {text}); pass the files a "
             f"run wrote", file=sys.stderr)
        return 2


def _isa_note(page: dict) -> str:
    """A line for the terminal where the page's runs were not made on one instruction set."""
    if not page["isa_differs"]:
        return ""
    what = {"extensions": "their CPU's extensions", "cap": "the cap on the runtime's instruction set"}
    return (f"\nNOT ONE INSTRUCTION SET: the runs differ in {' and '.join(what[w] for w in page['isa_differs'])} "
            f"(the page names each run's)")


def _command(args: argparse.Namespace) -> int:
    if args.command in ("render", "rebuild"):
        if args.command == "render":
            paths = write_documents(load_report(args.source), args.out, args.lang)
        else:
            paths = _rebuild(args.report_dir, args.lang)
        for kind, path in paths.items():
            _say(f"{kind}: {path}")
        return 0
    if args.command == "merge":
        return _merge(args.shards, args.out, args.baseline, args.lang)
    if args.command == "baseline":
        _write(args.out, json.dumps(baseline.expectations(load_report(args.report)), indent=1) + "\n")
        _say(f"baseline: {args.out}")
        return 0
    if args.command == "verify":
        return _verify(args)
    if args.command == "export":
        return _export(args.report, args.out, args.passing)
    if args.command == "matrix":
        runs = [(load_report(path), report_file(path).parent) for path in args.runs]
        page = matrix(runs, args.out)
        _write(args.out, render_matrix(page, args.lang))
        _say(f"html: {args.out}{_isa_note(page)}")
        return 0
    if args.command == "history":
        page = history([(load_report(path), report_file(path).parent) for path in args.runs], args.out)
        _write(args.out, render_history(page))
        _write(args.out.with_suffix(".json"), json.dumps(as_json(page), indent=1))
        _say(f"html: {args.out}\njson: {args.out.with_suffix('.json')}{_isa_note(page)}")
        return 0
    comparison = compare(load_report(args.old), load_report(args.new), *(_asked(path) for path in (args.old, args.new)))
    _say(as_text(comparison))
    if args.html:
        _write(args.html, render_comparison(comparison, args.lang))
        _say(f"html: {args.html}")
    return 1 if comparison["regression"] else 0


def _asked(path: Path) -> list[dict]:
    """The other runs' counterexamples asked in the run at ``path`` (a folder or its report.json)."""
    found = replays.read(path if path.is_dir() else path.parent)
    return found["replays"] if found else []


if __name__ == "__main__":
    sys.exit(main())
