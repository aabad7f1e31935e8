"""Adequacy: the suite's power measured on the zoo, next to ONNX's own 16 ArgMin node cases.

``python -m zoo.adequacy [--profile quick] [--seed 1] [--out DIR] [--entries a,b] [--versions 12,13] [--jobs N]
[--models [--forms symbolic] [--schedule off]]`` runs every selected entry through the whole suite
(engine.judging.run.run_all) and, separately and on a fresh runner, through ONNX's own cases alone;
prints the matrix entry x version and writes it to DIR/adequacy.json and DIR/adequacy.html. Exit
status 1 when a correct entry is judged non-conformant at some version or a broken one is missed
at a version where it violates. With ``--models`` each entry is a model-level plug-in
(zoo.through_models): the suite builds its models, in every form (or ``--forms``), and, as for a
runtime that compiles per node, draws its symbolic cases within schedules (unless ``--schedule off``).

Each entry runs in its own process (a pool of --jobs), so module state of one entry (caches,
counters) never reaches another. Entries that crash or hang run under process isolation with a
short timeout; the others in-process, for speed.

Time to first detection is the implementation's own time: the sum of ``duration_s`` of that
version's recorded results, in run order, up to and including the first failing one (cases
generated while Hypothesis shrinks are not recorded, so not counted)."""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import sys
import time
import warnings
from pathlib import Path

import hypothesis.errors

import spec
from engine.asking.loader import UsageError
from results.outcomes import PASS
from results.verdict import CONFORMANT, NON_CONFORMANT, Standing, is_judged, judged, standing

from . import through_models
from .registry import ENTRIES, FAULT_CLASSES, Entry, entry

FAULT_TIMEOUT = "1"  # seconds per call for crashing and hanging entries: each hang costs this much


def _isolation(item: Entry) -> str:
    return "process" if item.bug_class in FAULT_CLASSES else "none"


def onnx_column(item: Entry, versions: tuple[int, ...], timeout: float) -> dict[int, list[str]]:
    """Per version, the names of ONNX's own cases the entry fails (empty: ONNX's cases pass it)."""
    from engine.asking.isolation import Runner
    from engine.judging.judge import judge
    from generators.onnx_cases import onnx_node_cases

    failed: dict[int, list[str]] = {}
    with Runner(item.impl, isolation=_isolation(item), timeout=timeout) as runner:
        for version in versions:
            vspec = spec.load(version)
            failed[version] = []
            for case in onnx_node_cases(vspec):
                reply = runner.call(case.data, version, case.attributes)
                judgement = judge(vspec, case, reply, "fixed",
                                  lambda data, attributes, v=version: runner.call(data, v, attributes))
                if judgement.failed:
                    failed[version].append(case.tags[-1].split(":", 1)[1])
    return failed


def _first_detection(results: list, version: int) -> dict | None:
    """The first judged failure at a version, with the cases and implementation time it took."""
    seconds = 0.0
    for cases, result in enumerate(judged(results, version), 1):
        seconds += result.duration_s
        if result.outcome != PASS:
            return {"clause": result.clause, "outcome": result.outcome, "suite": result.suite,
                    "cases": cases, "impl_s": seconds}
    return None


def score(name: str, profile: str, seed: str, versions: str = "", dtypes: str = "",
          models: dict[str, str] | None = None) -> dict:
    """One entry's row of the matrix: our verdict and ONNX's cases' verdict per version
    (``versions``/``dtypes``: optional comma-separated restrictions of the run, for fast tests;
    ``models``: the entry as a model-level plug-in, with these options: forms, schedule)."""
    from engine.config.options import validate
    from engine.judging.run import run_all
    from generators import profiles

    warnings.filterwarnings("ignore", category=hypothesis.errors.HypothesisWarning)  # large counterexample reprs
    warnings.filterwarnings("ignore", category=RuntimeWarning)  # the entries' own numpy warnings (NaN compares)
    profiles.register()
    item = entry(name)
    options = {"impl": item.impl if models is None else through_models.impl(item.impl), "profile": profile,
               "seed": seed, "isolation": _isolation(item), "versions": versions, "dtypes": dtypes, **(models or {})}
    if options["isolation"] == "process":
        options["timeout"] = FAULT_TIMEOUT
    settings = validate(options)
    started = time.perf_counter()
    onnx_failed = onnx_column(item, settings.versions, settings.timeout)
    onnx_s = time.perf_counter() - started
    started = time.perf_counter()
    session = run_all(settings)
    wall = time.perf_counter() - started
    ours = {v: standing(session.results, v, session.census, type_names=settings.type_names)
            for v in settings.versions}
    cells = {}
    for version in settings.versions:
        mine = ours[version]
        cells[version] = {
            "expected": NON_CONFORMANT if version in item.non_conformant else CONFORMANT,
            "expected_clause": item.violates.get(version),
            "ours": mine.verdict, "clauses": list(mine.clauses),
            "lenient": [e.clause for e in mine.strictness.clauses if e.computed],
            "not_implemented": list(mine.scope.not_implemented),
            "shown": _shown(item, mine, version),
            "first": _first_detection(session.results, version),
            "onnx": NON_CONFORMANT if onnx_failed[version] else CONFORMANT, "onnx_failed": onnx_failed[version],
        }
    return {"name": item.name, "impl": item.impl, "correct": item.correct, "role": item.role,
            "bug_class": item.bug_class,
            "summary": item.summary, "isolation": settings.isolation, "wall_s": wall, "onnx_wall_s": onnx_s,
            "cases": sum(map(is_judged, session.results)), "versions": cells}


def _shown(item: Entry, mine: Standing, version: int) -> bool:
    """Whether the run shows the entry's deviation at this version where its role puts it (the
    headline, the strictness or the scope), and shows none where it has none."""
    clause = item.violates.get(version)
    if clause is None:
        return mine.verdict == CONFORMANT and not any(e.computed for e in mine.strictness.clauses) \
            and not mine.scope.not_implemented
    if item.role == "strictness":
        return mine.verdict == CONFORMANT and any(e.clause == clause and e.computed for e in mine.strictness.clauses)
    if item.role == "scope":
        claimed = [t for t in item.not_implemented if t in mine.scope.claimed]
        return mine.verdict == CONFORMANT and set(claimed) <= set(mine.scope.not_implemented)
    return mine.verdict == NON_CONFORMANT and clause in mine.clauses


def _verdict_set(row: dict, key: str) -> set[int]:
    return {int(n) for n, cell in row["versions"].items() if cell[key] == NON_CONFORMANT}


def headline(rows: list[dict]) -> dict:
    """Broken entries caught (their deviation shown at exactly their violating versions, where its
    role puts it: the headline, the strictness or the scope) and correct entries passed
    (conformant everywhere), for our suite and for ONNX's cases (verdicts only: ONNX's node
    tests have no rejection or scope); and the run's failures."""
    broken = [r for r in rows if not r["correct"]]
    correct = [r for r in rows if r["correct"]]
    figures: dict = {"broken": len(broken), "correct": len(correct)}
    figures["ours_caught"] = sum(all(c["shown"] for c in r["versions"].values()) for r in broken)
    figures["onnx_caught"] = sum(_verdict_set(r, "onnx") == _violating(r) for r in broken)
    for key in ("ours", "onnx"):
        figures[f"{key}_passed"] = sum(not _verdict_set(r, key) for r in correct)
    figures["failures"] = [f"{r['name']} v{n}: expected {c['expected']} ({r['role']}), judged {c['ours']}"
                           for r in rows for n, c in r["versions"].items() if not c["shown"]]
    return figures


def _violating(row: dict) -> set[int]:
    return {int(n) for n, cell in row["versions"].items() if cell["expected_clause"]}


def _short(verdict: str) -> str:
    return "NC" if verdict == NON_CONFORMANT else "ok"


def text(rows: list[dict], figures: dict) -> str:
    lines = [f"{'entry':32} {'v':>2}  {'expected':10} {'ours':10} {'first detection (cases, impl s)':32} onnx"]
    for row in rows:
        for version, cell in row["versions"].items():
            expected = _short(cell["expected"]) + (f" {cell['expected_clause']}" if cell["expected_clause"] else "")
            first = cell["first"]
            detection = f"{first['clause']} after {first['cases']}, {first['impl_s']:.4f} s" if first else "-"
            mark = "" if cell["shown"] else "  <-- MISMATCH"
            lines.append(f"{row['name']:32} {version:>2}  {expected:10} {_short(cell['ours']):10} {detection:32} "
                         f"{_short(cell['onnx'])}{mark}")
    lines.append(f"our suite:     broken entries caught {figures['ours_caught']}/{figures['broken']}, "
                 f"correct entries passed {figures['ours_passed']}/{figures['correct']}")
    lines.append(f"ONNX's cases:  broken entries caught {figures['onnx_caught']}/{figures['broken']}, "
                 f"correct entries passed {figures['onnx_passed']}/{figures['correct']}")
    lines += [f"FAILURE: {failure}" for failure in figures["failures"]]
    return "\n".join(lines)


def html(document: dict) -> str:
    from reports.pages.render import render_adequacy

    return render_adequacy(document)


def run(names: list[str], profile: str, seed: str, jobs: int, versions: str = "",
        models: dict[str, str] | None = None) -> list[dict]:
    """Score each entry in a fresh process (spawned, one entry per process), in zoo order."""
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context, max_tasks_per_child=1) as pool:
        futures = [pool.submit(score, name, profile, seed, versions, "", models) for name in names]
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            row = future.result()
            print(f"[{done}/{len(names)}] {row['name']} scored in {row['wall_s']:.0f} s", file=sys.stderr, flush=True)
        return [future.result() for future in futures]


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m zoo.adequacy", description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="quick", help="suite profile (default quick)")
    parser.add_argument("--seed", default="1", help="Hypothesis seed (default 1)")
    parser.add_argument("--out", default="reports/out", help="where adequacy.json and adequacy.html go")
    parser.add_argument("--entries", default="", help="comma-separated zoo entry names (default: all)")
    parser.add_argument("--versions", default="", help="comma-separated ArgMin versions (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="entries scored in parallel (default 2)")
    parser.add_argument("--models", action="store_true", help="each entry as a model-level plug-in, scored as a "
                                                              "runtime that compiles per node is")
    parser.add_argument("--forms", default="", help="with --models: the model forms (default: all)")
    parser.add_argument("--schedule", default="auto", help="with --models: auto (default), on or off")
    args = parser.parse_args(argv)
    if (args.forms or args.schedule != "auto") and not args.models:
        parser.error("--forms and --schedule score entries as model plug-ins: add --models")
    args.model_options = {"forms": args.forms, "schedule": args.schedule} if args.models else None
    if args.jobs < 1:
        parser.error("--jobs must be at least 1; use e.g. --jobs 2")
    args.names = [n.strip() for n in args.entries.split(",") if n.strip()] or [e.name for e in ENTRIES]
    try:
        for name in args.names:
            entry(name)
        from engine.config.options import validate
        from generators import profiles

        profiles.register()
        validate({"impl": ENTRIES[0].impl if not args.models else through_models.impl(ENTRIES[0].impl),
                  "profile": args.profile, "seed": args.seed, "versions": args.versions,
                  **(args.model_options or {})})
    except KeyError as exc:
        parser.error(exc.args[0])
    except (UsageError, spec.SpecError) as exc:
        parser.error(str(exc))
    return args


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    started = time.perf_counter()
    rows = run(args.names, args.profile, args.seed, args.jobs, args.versions, args.model_options)
    figures = headline(rows)
    document = {"profile": args.profile, "seed": args.seed, "jobs": args.jobs, "models": args.model_options,
                "wall_s": time.perf_counter() - started, "headline": figures, "entries": rows,
                "detection_time": "implementation seconds: sum of duration_s of the version's recorded results "
                                  "up to and including the first failing one"}
    print(text(rows, figures))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "adequacy.json").write_text(json.dumps(document, indent=1), encoding="utf-8")
    (out / "adequacy.html").write_text(html(document), encoding="utf-8")
    print(f"wrote {out / 'adequacy.html'} and adequacy.json in {document['wall_s']:.0f} s")
    return 1 if figures["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
