"""The ``nox -s bench`` driver: every speed figure of the project, measured in one run.

Run from the checkout: ``python benchmarks/bench_all.py [--repeat N] [--skip-standard-run]``. Prints
medians over the repetitions of: end-to-end checked cases per second through the engine (one
property task per type of ArgMin-13, profile quick, in-process) for a numpy implementation and for
onnxruntime, next to the plain ``hypothesis.extra.numpy.arrays`` baseline of bench_generation; the
per-call overhead of process isolation; the wall time of one standard-profile run against
onnxruntime (a single run: it takes minutes); and the oracle's cost on 10^7 elements (bench_oracle)."""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bench_generation  # noqa: E402  (a sibling script: benchmarks/ is this script's sys.path[0])
import bench_oracle  # noqa: E402
import hypothesis.errors  # noqa: E402

import spec  # noqa: E402
from engine import isolation  # noqa: E402
from engine.options import validate  # noqa: E402
from engine.plan import Task  # noqa: E402
from engine.run import run_task  # noqa: E402
from engine.session import Nonconformance, Session  # noqa: E402
from generators import profiles  # noqa: E402

VERSION = 13
IMPLS = {"numpy (zoo.correct:numpy_argmin)": "zoo.correct:numpy_argmin", "onnxruntime": "onnxruntime"}


def harness_rate(impl: str) -> float:
    """Judged cases per second over one property task per type of the version, end to end."""
    cases, seconds = 0, 0.0
    for name in spec.load(VERSION).type_names:
        settings = validate({"impl": impl, "profile": "quick", "isolation": "none", "seed": "1",
                             "versions": str(VERSION), "dtypes": name})
        session = Session(settings)
        start = time.perf_counter()
        with contextlib.suppress(Nonconformance):
            run_task(session, Task("property", VERSION, name), f"bench::{name}")
        seconds += time.perf_counter() - start
        session.close()
        cases += len(session.results)
    return cases / seconds


def standard_run_seconds() -> float:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "suites", "--impl", "onnxruntime", "--profile", "standard",
                        "--report-dir", out], cwd=ROOT, stdout=subprocess.DEVNULL, check=False)
        return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="repetitions; medians are printed (default 3)")
    parser.add_argument("--skip-standard-run", action="store_true", help="skip the minutes-long standard run")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1; use e.g. --repeat 3")
    warnings.filterwarnings("ignore", category=hypothesis.errors.HypothesisWarning)
    profiles.register()
    vspec = spec.load(VERSION)
    rates: dict[str, list[float]] = {label: [] for label in (*IMPLS, "ours", "same")}
    for rep in range(args.repeat):
        for label, impl in IMPLS.items():
            rates[label].append(harness_rate(impl))
        for kind in ("ours", "same"):
            rates[kind].append(bench_generation.measure([vspec], kind, 100, rep))
    medians = {label: statistics.median(values) for label, values in rates.items()}
    print(f"checked cases per second, ArgMin-{VERSION}, all {len(vspec.type_names)} types, "
          f"median of {args.repeat}:")
    for label in IMPLS:
        print(f"  suite end to end, {label:32s} {medians[label]:8.0f}/s  "
              f"({medians[label] / medians['same']:.1f}x the arrays() baseline)")
    print(f"  generators + oracle, numpy in-process        {medians['ours']:8.0f}/s  "
          f"({medians['ours'] / medians['same']:.1f}x the arrays() baseline)")
    print(f"  hypothesis.extra.numpy.arrays baseline       {medians['same']:8.0f}/s  (same shapes)")
    figures = isolation.benchmark()
    print(f"process isolation, median per call: {figures['process_s'] * 1e6:.0f} us vs "
          f"{figures['none_s'] * 1e6:.0f} us in-process; overhead {figures['overhead_s'] * 1e6:.0f} us per case")
    if not args.skip_standard_run:
        print(f"standard-profile run against onnxruntime (one run): {standard_run_seconds():.0f} s wall")
    print("oracle vs np.argmin:")
    return bench_oracle.main(["--dtypes", "float,int64", "--repeat", str(max(args.repeat, 3))])


if __name__ == "__main__":
    sys.exit(main())
