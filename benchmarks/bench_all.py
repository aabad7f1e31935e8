"""The ``nox -s bench`` driver: every speed figure of the project, measured in one run, so the
ratios compare things measured side by side on the same machine at the same time.

Run from the checkout: ``python benchmarks/bench_all.py [--repeat N] [--skip-runs]``. Prints:

1. checked cases per second, ArgMin-13, every type, a correct numpy implementation: the whole
   suite (engine, judge, census, records) in-process and with process isolation, next to plain
   ``hypothesis.extra.numpy.arrays`` property tests (bench_generation's baselines: the same
   shapes as ours, and small shapes), as medians and ratios;
2. what process isolation adds per judged case (the same tasks in both modes), and per single
   call (bench_isolation);
3. (unless --skip-runs) the certify profile against onnxruntime, all versions, through the front
   door: suite time (the run's own duration) and wall time; and a standard run in one process
   (``-n 0``) and on every core (the default), its wall times, their ratio, and whether the
   verdicts agree; then the built-in runtimes side by side (bench_runtimes: ``--runtimes``, at
   ``--runtimes-profile``, each cold then warm, within schedules and with ``--runtimes-schedule
   auto,off`` drawing freely beside), each against its target: models, nodes, seconds;
4. the oracle's cost on 10^7 elements (bench_oracle);
5. where a judged case's time goes, per runtime (bench_breakdown: generate, transfer,
   implementation, oracle, judge, record), and the implementation's share of it.

Each figure the project sets a target for is printed next to it (``TARGETS``).

Suite rates are wall time (a worker's time is not this process's CPU time); the baselines are
CPU time. On a machine other work shares, run with --repeat 5 and read the medians."""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bench_breakdown  # noqa: E402  (a sibling script: benchmarks/ is this script's sys.path[0])
import bench_generation  # noqa: E402
import bench_isolation  # noqa: E402
import bench_oracle  # noqa: E402
import bench_runtimes  # noqa: E402
import hypothesis.errors  # noqa: E402

import spec  # noqa: E402
from engine.config.options import validate  # noqa: E402
from engine.config.plan import Task  # noqa: E402
from engine.judging.run import run_task  # noqa: E402
from engine.judging.session import Nonconformance, Session  # noqa: E402
from generators import profiles  # noqa: E402

VERSION = 13
NUMPY = "zoo.correct:numpy_argmin"
# The targets: (limit, whether the figure must be at most or at least it, unit).
TARGETS = {"in-process": (10.0, "at least", "x"), "isolation": (50.0, "at most", " us"),
           "certify": (120.0, "at most", " s")}


def against(target: str, value: float) -> str:
    """``value`` next to its target, and whether it meets it."""
    limit, sense, unit = TARGETS[target]
    met = value >= limit if sense == "at least" else value <= limit
    return f"(target: {sense} {limit:g}{unit}, {'met' if met else 'NOT met'})"


def suite_rate(isolation_mode: str, profile: str = "standard") -> tuple[int, float]:
    """(cases judged, wall seconds) of one property task per type of the version, end to end;
    worker start-up is left out (it is paid once per run, not per case)."""
    cases, seconds = 0, 0.0
    for name in spec.load(VERSION).type_names:
        settings = validate({"impl": NUMPY, "profile": profile, "isolation": isolation_mode, "seed": "1",
                             "versions": str(VERSION), "dtypes": name})
        session = Session(settings)
        session.runner.load()
        start = time.perf_counter()
        with contextlib.suppress(Nonconformance):
            run_task(session, Task("property", VERSION, name), f"bench::{name}")
        seconds += time.perf_counter() - start
        session.close()
        cases += len(session.results)
    return cases, seconds


def front_door(*args: str) -> tuple[float, dict]:
    """(wall seconds, report.json) of one ``python -m suites`` run against onnxruntime."""
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "suites", "--impl", "onnxruntime", "--seed", "7", "--report-dir", out,
                        *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        wall = time.perf_counter() - start
        return wall, json.loads((Path(out) / "report.json").read_text(encoding="utf-8"))


def _verdicts(report: dict) -> list[tuple[int, str, int]]:
    return [(v["version"], v["verdict"], v["judged"]) for v in report["versions"]]


def runs(args: argparse.Namespace) -> None:
    wall, report = front_door("--profile", "certify")
    suite_s = report["run"]["duration_s"]
    print(f"certify against onnxruntime, all versions: {report['run']['cases_run']} cases, suite time "
          f"{suite_s:.0f} s {against('certify', suite_s)}, wall {wall:.0f} s, "
          f"{report['run']['workers']} test processes")
    serial_wall, serial = front_door("--profile", "standard", "-n", "0")
    parallel_wall, parallel = front_door("--profile", "standard")
    same = "the same verdicts and case counts" if _verdicts(serial) == _verdicts(parallel) else \
        f"DIFFERENT verdicts: {_verdicts(serial)} vs {_verdicts(parallel)}"
    print(f"standard against onnxruntime: {serial_wall:.1f} s wall in one process, {parallel_wall:.1f} s on "
          f"{parallel['run']['workers']} ({serial_wall / parallel_wall:.2f}x), {same}")
    if args.runtimes:
        options = ["--profile", args.runtimes_profile, "--seed", "7"]
        measured = []
        for impl in args.runtimes.split(","):
            for schedule in args.runtimes_schedule.split(","):
                measured += bench_runtimes.measure(impl, options, ("cold", "warm"), schedule)
                print(f"  {impl}, schedule {schedule}: {measured[-2].wall:.0f} s cold, {measured[-1].wall:.0f} s "
                      f"warm", flush=True)
        bench_runtimes.report(measured, args.runtimes_profile, options, all_versions=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="repetitions; medians are printed (default 3)")
    parser.add_argument("--skip-runs", action="store_true", help="skip the certify, xdist and runtime runs (an hour)")
    parser.add_argument("--runtimes", default=",".join(bench_runtimes.BUILT_IN),
                        help="built-in runtimes to run side by side, all versions (default: all seven; '' for none)")
    parser.add_argument("--runtimes-profile", default="standard")
    parser.add_argument("--runtimes-schedule", default="auto",
                        help="--schedule values each runtime runs with, cold then warm: auto (default), or auto,off "
                             "for the free draw beside it")
    bench_breakdown.add_arguments(parser)
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1; use e.g. --repeat 3")
    warnings.filterwarnings("ignore", category=hypothesis.errors.HypothesisWarning)
    profiles.register()
    vspec = spec.load(VERSION)
    rates: dict[str, list[float]] = {key: [] for key in ("none", "process", "same", "small", "overhead")}
    for rep in range(args.repeat):
        (cases, none_s), (process_cases, process_s) = suite_rate("none"), suite_rate("process")
        rates["none"].append(cases / none_s)
        rates["process"].append(process_cases / process_s)
        rates["overhead"].append(process_s / process_cases - none_s / cases)
        for kind in ("same", "small"):
            rates[kind].append(bench_generation.measure([vspec], kind, 100, rep))
    med = {key: statistics.median(values) for key, values in rates.items()}
    print(f"checked cases per second, ArgMin-{VERSION}, all {len(vspec.type_names)} types, {NUMPY}, "
          f"median of {args.repeat}:")
    for key, label in (("none", "suite, in-process"), ("process", "suite, process isolation")):
        goal = f" {against('in-process', med[key] / med['same'])}" if key == "none" else ""
        print(f"  {label:28s} {med[key]:7.0f}/s  {med[key] / med['same']:5.1f}x arrays() same shapes, "
              f"{med[key] / med['small']:5.1f}x arrays() small shapes{goal}")
    print(f"  {'arrays(), same shapes':28s} {med['same']:7.0f}/s")
    print(f"  {'arrays(), small shapes':28s} {med['small']:7.0f}/s")
    figures = bench_isolation.benchmark()
    print(f"process isolation: {med['overhead'] * 1e6:.0f} us per judged case (batched round trips) "
          f"{against('isolation', med['overhead'] * 1e6)}; "
          f"{figures['overhead_s'] * 1e6:.0f} us per single call ({figures['process_s'] * 1e6:.0f} vs "
          f"{figures['none_s'] * 1e6:.0f} us); a worker starts and loads it in {figures['start_s'] * 1e3:.0f} ms")
    if not args.skip_runs:
        runs(args)
    print("oracle vs np.argmin:")
    bench_oracle.main(["--dtypes", "float,int64", "--repeat", str(max(args.repeat, 3))])
    bench_breakdown.report(args, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
