"""Where a judged case's time goes, per runtime: generating, transferring, inside the
implementation, in the oracle, judging and recording, in µs per case and as shares, and the
implementation's share of the total (the limit the suite's own speed is measured against).

Run from the checkout: ``python benchmarks/bench_breakdown.py [--impls onnxruntime,tvm]
[--versions 13] [--profile quick] [--repeat N]``. Each runtime runs every suite (all model forms)
of the selected versions with process isolation, as a run does, with the engine's functions
wrapped by a stopwatch here: nothing in the engine knows it is measured. Stages are exclusive (a
stage's time leaves out the stages it calls), so they add up to the whole:

- generate: Hypothesis and the strategies (everything of a test that no other stage claims), and
  the state twins;
- transfer: a call's round trip to the worker, minus the implementation's own time
  (``Reply.seconds``, measured in the worker), restarts of a worker that crashed or hung included
  (tract aborts on an axis out of range); in-process, the call wrapper's copies;
- implementation: ``Reply.seconds``, compile and run;
- oracle: ``spec.oracle`` as the judge and the census use it;
- judge: ``engine.judging.judge`` and ``engine.judging.census`` without the oracle, the re-asks and the records;
- record: the case digests, tensors written out, results kept and streamed;
- other: the session's bookkeeping (settled inputs, searches, the minimizer's logic), and any
  wait for the thread that works out the oracle's expectations and the input digests while the
  worker answers (what that thread does is off the critical path and counted nowhere).

Medians of each stage's µs per case over the repetitions; shares are of the sum of the medians."""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import engine.judging.ahead  # noqa: E402
import engine.judging.census  # noqa: E402
import engine.judging.judge  # noqa: E402
import engine.judging.session  # noqa: E402
from engine.config.options import validate  # noqa: E402
from engine.config.plan import SUITES, plan  # noqa: E402
from engine.judging.run import run_task  # noqa: E402
from engine.judging.session import Nonconformance, Session  # noqa: E402
from generators import profiles  # noqa: E402
from results import stream  # noqa: E402

STAGES = ("generate", "transfer", "implementation", "oracle", "judge", "record", "other")
DEFAULT_IMPLS = ("onnxruntime", "zoo.correct:numpy_argmin", "openvino", "tract")
# A built-in whose runtime is not installed is left out (named), not an error.
_DISTRIBUTIONS = {"openvino": "openvino", "tract": "tract", "tvm": "tvm", "tinygrad": "tinygrad", "iree": "iree"}


class Stopwatch:
    """Exclusive time per stage: while a stage runs inside another, the clock runs for the inner
    one only. Only the thread that made it is timed: what a helper thread does meanwhile (the
    session prepares judgements while the worker answers) is off the run's critical path.
    ``clock`` is injectable so the bookkeeping can be tested without timing anything."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self._thread = threading.get_ident()
        self.totals: dict[str, float] = defaultdict(float)
        self._stack: list[str] = []
        self._since = 0.0

    def enter(self, stage: str) -> None:
        now = self.clock()
        if self._stack:
            self.totals[self._stack[-1]] += now - self._since
        self._stack.append(stage)
        self._since = now

    def leave(self) -> None:
        now = self.clock()
        self.totals[self._stack.pop()] += now - self._since
        self._since = now

    def move(self, seconds: float, source: str, target: str) -> None:
        """Charge ``seconds`` already counted for ``source`` to ``target`` instead."""
        self.totals[source] -= seconds
        self.totals[target] += seconds

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self.enter(name)
        try:
            yield
        finally:
            self.leave()

    def timed(self, fn: Callable[..., Any], name: str) -> Callable[..., Any]:
        """``fn``, with its time charged to stage ``name``."""
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() != self._thread:
                return fn(*args, **kwargs)
            with self.stage(name):
                return fn(*args, **kwargs)
        return wrapper


# (owner, attribute, stage): the names the engine calls, wrapped where they are looked up.
_WRAPPED = (
    (Session, "check_all", "other"), (Session, "check", "other"), (Session, "found", "other"),
    (engine.judging.session, "twin", "generate"), (engine.judging.ahead, "twin", "generate"),
    (engine.judging.session, "verdict", "judge"),
    *((engine.judging.judge, name, "oracle") for name in ("expect", "read", "verify", "violations")),
    *((engine.judging.census, name, "oracle") for name in ("argmin", "order_keys")),
    *((engine.judging.judge, name, "record") for name in ("input_digest", "answer_digest", "to_tensor")),
    (Session, "_record", "record"),
)


def _call_many(stopwatch: Stopwatch, original: Callable[..., Any]) -> Callable[..., Any]:
    """Session.call_many as a transfer, less the implementation's own time measured in the worker."""
    @functools.wraps(original)
    def call_many(*args: Any, **kwargs: Any) -> Any:
        with stopwatch.stage("transfer"):
            replies = original(*args, **kwargs)
        stopwatch.move(sum(reply.seconds for reply in replies), "transfer", "implementation")
        return replies
    return call_many


@contextlib.contextmanager
def instrumented(stopwatch: Stopwatch) -> Iterator[Stopwatch]:
    """The engine's stages wrapped for the duration of the block, restored after it."""
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in _WRAPPED]
    saved.append((Session, "call_many", Session.call_many))
    try:
        for owner, name, stage in _WRAPPED:
            setattr(owner, name, stopwatch.timed(getattr(owner, name), stage))
        Session.call_many = _call_many(stopwatch, Session.call_many)
        yield stopwatch
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


@dataclass(frozen=True)
class Breakdown:
    """One runtime's medians: µs per judged case by stage, over ``cases`` cases per repetition."""

    impl: str
    cases: int
    micros: dict[str, float]

    @property
    def total(self) -> float:
        return sum(self.micros.values())

    def share(self, stage: str) -> float:
        return self.micros[stage] / self.total if self.total else 0.0


def summarize(impl: str, samples: Sequence[tuple[int, dict[str, float]]]) -> Breakdown:
    """Medians over repetitions of (cases judged, seconds per stage): µs per case by stage."""
    per_case = [{stage: seconds.get(stage, 0.0) / cases * 1e6 for stage in STAGES}
                for cases, seconds in samples if cases]
    micros = {stage: statistics.median(sample[stage] for sample in per_case) if per_case else 0.0
              for stage in STAGES}
    return Breakdown(impl, statistics.median(cases for cases, _ in samples) if samples else 0, micros)


def table(breakdowns: Sequence[Breakdown]) -> list[str]:
    """The breakdowns as aligned lines: µs per case and share per stage, then the total and the
    implementation's share."""
    width = max([len(b.impl) for b in breakdowns] + [len("runtime")])
    head = f"{'runtime':<{width}} {'cases':>6} " + " ".join(f"{stage:>16}" for stage in STAGES)
    lines = [head, f"{'':<{width}} {'':>6} " + " ".join(f"{'us/case  share':>16}" for _ in STAGES)]
    for b in breakdowns:
        cells = " ".join(f"{b.micros[stage]:>9.0f} {b.share(stage):>5.0%}" for stage in STAGES)
        lines.append(f"{b.impl:<{width}} {b.cases:>6} {cells}")
    lines += [f"  {b.impl}: {b.total:.0f} us per case in all, the implementation {b.share('implementation'):.0%} "
              f"of it, the suite {b.total - b.micros['implementation']:.0f} us" for b in breakdowns]
    return lines


def measure(impl: str, values: dict[str, str]) -> tuple[int, dict[str, float]]:
    """(cases judged, seconds per stage) of every suite of the selected versions against
    ``impl`` under process isolation; the worker's start-up is left out."""
    settings = validate({"impl": impl, "isolation": "process", **values})
    with tempfile.TemporaryDirectory() as out:
        session = Session(settings, stream=stream.Writer(Path(out), "main"))
        session.runner.load()
        session.second.runner()  # the census's second worker, started ahead: start-up is paid per run, not per case
        with instrumented(Stopwatch()) as stopwatch:
            for suite in SUITES:
                for task in plan(settings, suite):
                    with stopwatch.stage("generate"), contextlib.suppress(Nonconformance):
                        run_task(session, task, f"bench::{suite}::{task.id}")
        session.close()
    return len(session.results), dict(stopwatch.totals)


def available(impl: str) -> bool:
    """Whether a built-in's runtime is installed here (plug-ins and onnxruntime always are)."""
    distribution = _DISTRIBUTIONS.get(impl.split(":")[0])
    return distribution is None or importlib.util.find_spec(distribution) is not None


def breakdowns(impls: Sequence[str], values: dict[str, str], repeat: int) -> list[Breakdown]:
    """Each runtime's breakdown, the runtimes interleaved within a repetition (a machine whose
    load changes affects them alike)."""
    samples: dict[str, list[tuple[int, dict[str, float]]]] = {impl: [] for impl in impls}
    for _ in range(repeat):
        for impl in impls:
            samples[impl].append(measure(impl, values))
    return [summarize(impl, samples[impl]) for impl in impls]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--impls", default=",".join(DEFAULT_IMPLS),
                        help="runtimes to break down; a leading + adds to the default list (e.g. +tvm,tinygrad,iree)")
    parser.add_argument("--versions", default="13", help="ArgMin versions (default 13)")
    parser.add_argument("--profile", default="quick", help="profile of the measured runs (default quick)")
    parser.add_argument("--seed", default="7")


def chosen(text: str) -> tuple[list[str], list[str]]:
    """The runtimes ``--impls`` names that are installed, and those that are not."""
    names = [*DEFAULT_IMPLS, *text[1:].split(",")] if text.startswith("+") else text.split(",")
    names = list(dict.fromkeys(name for name in names if name))
    return [n for n in names if available(n)], [n for n in names if not available(n)]


def report(args: argparse.Namespace, repeat: int) -> None:
    impls, missing = chosen(args.impls)
    values = {"versions": args.versions, "profile": args.profile, "seed": args.seed}
    print(f"cost per judged case, ArgMin {args.versions}, profile {args.profile}, seed {args.seed}, process "
          f"isolation, every suite and model form, median of {repeat}"
          + (f" (not installed, left out: {', '.join(missing)})" if missing else "") + ":")
    for line in table(breakdowns(impls, values, repeat)):
        print(f"  {line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--repeat", type=int, default=3, help="repetitions; medians are printed (default 3)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1; use e.g. --repeat 3")
    profiles.register()
    report(args, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
