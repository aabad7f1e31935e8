"""Standard runs against real runtimes, side by side: wall time, verdicts and failing clauses of
each, the ratio to onnxruntime, and how many models a run compiles (by suite and model form).

Run from the checkout, in an environment with the runtimes installed (the test virtualenv has them):
``python benchmarks/bench_runtimes.py [--impls onnxruntime,openvino] [--repeat N] [--versions 13]
[--dtypes float,double] [--seed 7]``. The runs of one repetition are interleaved (every runtime once,
then again), so a machine whose load changes affects them alike; medians over the repetitions."""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.options import validate  # noqa: E402
from engine.plan import SUITES, plan  # noqa: E402
from engine.run import run_task  # noqa: E402
from engine.session import Nonconformance, Session  # noqa: E402
from generators import profiles  # noqa: E402

VERDICT = re.compile(r"^\s+(ArgMin-\d+: .*)$", re.MULTILINE)


def standard_run(impl: str, options: list[str]) -> tuple[float, list[str]]:
    """Wall seconds of ``python -m suites --impl IMPL --profile standard`` and its verdict lines."""
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "suites", "--impl", impl, "--profile", "standard",
                               "--report-dir", out, *options], cwd=ROOT, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{impl}: the run could not be carried out:\n{done.stderr[-2000:]}")
    return seconds, VERDICT.findall(done.stdout)


def compiles_by_suite(impl: str, values: dict[str, str]) -> collections.Counter:
    """Models the adapter compiles in one standard run (in-process: the adapter counts them)."""
    profiles.register()
    settings = validate({"impl": impl, "profile": "standard", "isolation": "none", **values})
    session = Session(settings)
    adapter, counts = session.runner._fn, collections.Counter()
    for suite in SUITES:
        for task in plan(settings, suite):
            before = adapter.compiles
            with contextlib.suppress(Nonconformance):
                run_task(session, task, f"bench::{suite}::{task.id}")
            counts[suite, task.form] += adapter.compiles - before
    session.close()
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--impls", default="onnxruntime,onnx-reference,openvino,tract")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", default="7")
    parser.add_argument("--versions")
    parser.add_argument("--dtypes")
    parser.add_argument("--skip-compile-count", action="store_true")
    args = parser.parse_args()
    impls = args.impls.split(",")
    values = {"seed": args.seed, **{k: v for k, v in (("versions", args.versions), ("dtypes", args.dtypes)) if v}}
    options = [f"--{k}={v}" for k, v in values.items()]
    seconds: dict[str, list[float]] = {impl: [] for impl in impls}
    verdicts: dict[str, list[str]] = {}
    for _ in range(args.repeat):
        for impl in impls:
            took, verdicts[impl] = standard_run(impl, options)
            seconds[impl].append(took)
            print(f"  {impl}: {took:.0f} s (load average {os.getloadavg()[0]:.1f})", flush=True)
    base = statistics.median(seconds[impls[0]])
    print(f"\nstandard runs ({' '.join(options)}), median of {args.repeat}:")
    for impl in impls:
        median = statistics.median(seconds[impl])
        print(f"{impl}: {median:.0f} s wall, {median / base:.1f}x {impls[0]}")
        for line in verdicts[impl]:
            print(f"    {line}")
    if not args.skip_compile_count:
        counts = compiles_by_suite("onnxruntime", values)
        print(f"\nmodels compiled in one standard run: {sum(counts.values())}")
        for (suite, form), n in sorted(counts.items(), key=str):
            print(f"    {suite} ({form}): {n}")


if __name__ == "__main__":
    main()
