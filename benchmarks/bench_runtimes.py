"""The built-in runtimes side by side: runs of each through the front door (``python -m suites``,
every core, the compile cache in a fresh folder of its own), one after the other in one
invocation, so the ratios compare runs made on the same machine at the same time. For each
runtime, schedule (``--schedule``: auto draws a compiling runtime's cases within schedules, off
draws freely) and cache (cold: a fresh compile cache; warm: the same folder again, what a
nightly run with the same seed sees): wall time, the run's own suite time, its ratio to
onnxruntime's cold run, the models and nodes it compiled and those it loaded, the seconds they
took, by suite and model form, its verdict lines, and the target the project set for it.

Run from the checkout, in an environment with the runtimes installed (the test virtualenv has
them): ``python benchmarks/bench_runtimes.py [--impls onnxruntime,openvino,...] [--profile
standard] [--versions 13] [--seed 7] [--cache cold,warm|cold|off] [--schedule auto,off]``."""

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
# The targets of a run of every version, by (runtime, profile, cache): seconds of suite time, or a
# multiple of onnxruntime's cold suite time in the same invocation ("x").
TARGETS = {("onnxruntime", "certify", "cold"): (120.0, "s"), ("openvino", "standard", "cold"): (3.0, "x"),
           ("openvino", "standard", "warm"): (2.0, "x"), ("tvm", "standard", "cold"): (600.0, "s"),
           ("tvm", "standard", "warm"): (120.0, "s"), ("tinygrad", "standard", "cold"): (900.0, "s"),
           ("iree", "standard", "cold"): (1200.0, "s"), ("iree", "standard", "warm"): (180.0, "s")}


@dataclass
class Measured:
    impl: str
    schedule: str  # --schedule
    cache: str  # cold, warm or off
    wall: float
    run: dict  # report.json's run section
    verdicts: list[str]

    @property
    def nodes(self) -> int:
        return sum(usage.get("nodes", 0) for usage in self.run.get("model_usage") or ())


def measure(impl: str, options: list[str], caches: tuple[str, ...] = ("cold",),
            schedule: str = "auto") -> list[Measured]:
    """Runs of ``impl``, one per ``caches`` entry in order: cold into a fresh compile cache folder,
    warm into the same folder again (after a cold run, or a first run not reported), off without
    one."""
    measured = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = str(Path(scratch) / "cache")
        passes = ["cold", *caches] if caches[0] == "warm" else list(caches)
        for cache in passes:
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "suites", "--impl", impl, "--report-dir",
                                   str(Path(scratch) / "out"), "--compile-cache", "off" if cache == "off" else folder,
                                   "--schedule", schedule, *options], cwd=ROOT, capture_output=True, text=True,
                                  check=False)
            wall = time.perf_counter() - start
            if done.returncode not in (0, 1):
                raise SystemExit(f"{impl}: the run could not be carried out:\n{done.stderr[-2000:]}")
            run = json.loads((Path(scratch) / "out" / "report.json").read_text(encoding="utf-8"))["run"]
            measured.append(Measured(impl, schedule, cache, wall, run, VERDICT.findall(done.stdout)))
    return measured[-len(caches):]


def against(measured: Measured, base: Measured | None, profile: str, all_versions: bool) -> str:
    """The run's target and whether it was met (only for a run of every version, as set)."""
    target = TARGETS.get((measured.impl, profile, measured.cache))
    if target is None or not all_versions:
        return ""
    limit, unit = target
    value = measured.run["duration_s"] / base.run["duration_s"] if unit == "x" and base else measured.run["duration_s"]
    shown = f"{value:.1f}x onnxruntime" if unit == "x" else f"{value:.0f} s"
    return f"target {limit:g}{' s' if unit == 's' else 'x onnxruntime'}: {'met' if value <= limit else 'NOT met'} " \
           f"({shown})"


def report(results: list[Measured], profile: str, options: list[str], all_versions: bool) -> None:
    base = next((m for m in results if m.impl == "onnxruntime" and m.cache != "warm"), None)
    print(f"\n{profile} runs ({' '.join(options)}), one after the other:")
    print(f"{'runtime':<15} {'schedule':<8} {'cache':<5} {'wall s':>7} {'suite s':>8} {'x ort':>6} {'models':>7} "
          f"{'nodes':>7} {'loaded':>7} {'model s':>8}  target")
    for m in results:
        run = m.run
        ratio = f"{run['duration_s'] / base.run['duration_s']:.1f}" if base else "-"
        print(f"{m.impl:<15} {m.schedule:<8} {m.cache:<5} {m.wall:>7.0f} {run['duration_s']:>8.0f} {ratio:>6} "
              f"{run.get('models_compiled') or 0:>7,} {m.nodes:>7,} {run.get('models_loaded') or 0:>7,} "
              f"{run.get('model_seconds') or 0:>8.0f}  {against(m, base, profile, all_versions)}")
    for m in results:
        print(f"\n{m.impl}, schedule {m.schedule}, {m.cache}: {m.run.get('workers', 1)} test processes; models by "
              f"suite and form (compiled / nodes / loaded / seconds / calls):")
        for usage in m.run.get("model_usage") or []:
            print(f"    {usage['suite']:<10} {usage['form']:<12} {usage['compiles']:>7,} {usage.get('nodes', 0):>7,} "
                  f"{usage['loaded']:>7,} {usage['seconds']:>8.1f} {usage['calls']:>9,}")
        for line in m.verdicts:
            print(f"    {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--impls", default=",".join(BUILT_IN))
    parser.add_argument("--profile", default="standard")
    parser.add_argument("--seed", default="7")
    parser.add_argument("--versions")
    parser.add_argument("--cache", default="cold", help="cold, warm, off, or cold,warm (both, one after the other)")
    parser.add_argument("--schedule", default="auto", help="--schedule values to run each runtime with: auto,off")
    args = parser.parse_args()
    caches = tuple(args.cache.split(","))
    if not set(caches) <= {"cold", "warm", "off"} or ("off" in caches and len(caches) > 1):
        parser.error(f"--cache {args.cache!r}: use cold, warm, off or cold,warm")
    options = ["--profile", args.profile, "--seed", args.seed]
    options += ["--versions", args.versions] if args.versions else []
    results = []
    for impl in args.impls.split(","):
        for schedule in args.schedule.split(","):
            results += measure(impl, options, caches, schedule)
            walls = ", ".join(f"{m.cache} {m.wall:.0f} s" for m in results[-len(caches):])
            print(f"  {impl}, schedule {schedule}: {walls} wall", flush=True)
    report(results, args.profile, options, all_versions=not args.versions)


if __name__ == "__main__":
    main()
