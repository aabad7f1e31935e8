"""The built-in runtimes side by side: one run of each through the front door (``python -m
suites``, every core, the compile cache in a fresh folder of its own unless told otherwise), one
after the other in one invocation, so the ratios compare runs made on the same machine at the same
time. For each: wall time, the run's own suite time, its ratio to onnxruntime's, the models it
compiled (and loaded from the compile cache) with the seconds they took, by suite and model form,
its verdict lines, and the target the project set for it.

Run from the checkout, in an environment with the runtimes installed (the test virtualenv has
them): ``python benchmarks/bench_runtimes.py [--impls onnxruntime,openvino,...] [--profile
standard] [--versions 13] [--seed 7] [--cache fresh|warm|off]``. ``warm`` runs each runtime twice
into the same folder and reports the second run (what a nightly run with the same seed sees)."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILT_IN = ("onnxruntime", "onnx-reference", "openvino", "tract", "tvm", "tinygrad", "iree")
VERDICT = re.compile(r"^\s+(ArgMin-\d+: .*?) \[", re.MULTILINE)
# The targets of a run of every version, by (runtime, profile): seconds of suite time, or a
# multiple of onnxruntime's suite time in the same invocation ("x").
TARGETS = {("onnxruntime", "certify"): (120.0, "s"), ("openvino", "standard"): (2.0, "x"),
           ("tvm", "standard"): (600.0, "s"), ("tinygrad", "standard"): (900.0, "s"),
           ("iree", "standard"): (1200.0, "s"), ("tvm", "certify"): (3600.0, "s"),
           ("tinygrad", "certify"): (3600.0, "s"), ("iree", "certify"): (3600.0, "s")}


@dataclass
class Measured:
    impl: str
    wall: float
    run: dict  # report.json's run section
    verdicts: list[str]


def measure(impl: str, options: list[str], cache: str) -> Measured:
    """One run of ``impl``; with ``cache`` "warm", the second of two into the same cache folder."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = ["--compile-cache", "off"] if cache == "off" else ["--compile-cache", str(Path(scratch) / "cache")]
        for _ in range(2 if cache == "warm" else 1):
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "suites", "--impl", impl, "--report-dir",
                                   str(Path(scratch) / "out"), *folder, *options], cwd=ROOT, capture_output=True,
                                  text=True, check=False)
            wall = time.perf_counter() - start
        if done.returncode not in (0, 1):
            raise SystemExit(f"{impl}: the run could not be carried out:\n{done.stderr[-2000:]}")
        run = json.loads((Path(scratch) / "out" / "report.json").read_text(encoding="utf-8"))["run"]
    return Measured(impl, wall, run, VERDICT.findall(done.stdout))


def against(measured: Measured, base: Measured | None, profile: str, all_versions: bool) -> str:
    """The run's target and whether it was met (only for a run of every version, as set)."""
    target = TARGETS.get((measured.impl, profile))
    if target is None or not all_versions:
        return ""
    limit, unit = target
    value = measured.run["duration_s"] / base.run["duration_s"] if unit == "x" and base else measured.run["duration_s"]
    shown = f"{value:.1f}x onnxruntime" if unit == "x" else f"{value:.0f} s"
    return f"target {limit:g}{' s' if unit == 's' else 'x onnxruntime'}: {'met' if value <= limit else 'NOT met'} " \
           f"({shown})"


def report(results: list[Measured], profile: str, options: list[str], all_versions: bool) -> None:
    base = next((m for m in results if m.impl == "onnxruntime"), None)
    print(f"\n{profile} runs ({' '.join(options)}), one after the other:")
    print(f"{'runtime':<15} {'wall s':>8} {'suite s':>8} {'x ort':>6} {'models':>8} {'loaded':>7} "
          f"{'model s':>8}  target")
    for m in results:
        run = m.run
        ratio = f"{run['duration_s'] / base.run['duration_s']:.1f}" if base else "-"
        print(f"{m.impl:<15} {m.wall:>8.0f} {run['duration_s']:>8.0f} {ratio:>6} {run.get('models_compiled') or 0:>8,} "
              f"{run.get('models_loaded') or 0:>7,} {run.get('model_seconds') or 0:>8.0f}  "
              f"{against(m, base, profile, all_versions)}")
    for m in results:
        print(f"\n{m.impl}: {m.run.get('workers', 1)} test processes; models by suite and form "
              f"(compiled / loaded / seconds / calls):")
        for usage in m.run.get("model_usage") or []:
            print(f"    {usage['suite']:<10} {usage['form']:<12} {usage['compiles']:>7,} {usage['loaded']:>7,} "
                  f"{usage['seconds']:>8.1f} {usage['calls']:>9,}")
        for line in m.verdicts:
            print(f"    {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--impls", default=",".join(BUILT_IN))
    parser.add_argument("--profile", default="standard")
    parser.add_argument("--seed", default="7")
    parser.add_argument("--versions")
    parser.add_argument("--cache", choices=("fresh", "warm", "off"), default="fresh")
    args = parser.parse_args()
    options = ["--profile", args.profile, "--seed", args.seed]
    options += ["--versions", args.versions] if args.versions else []
    results = []
    for impl in args.impls.split(","):
        results.append(measure(impl, options, args.cache))
        print(f"  {impl}: {results[-1].wall:.0f} s wall", flush=True)
    report(results, args.profile, options, all_versions=not args.versions)


if __name__ == "__main__":
    main()
