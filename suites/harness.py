"""The pytest side of a run: one Conformance object per process calls the implementation,
judges each case, keeps the results, and bounds the cost of crashes and hangs.

Counting: within one Hypothesis test, the cases generated up to the first failure are recorded
as they come; the calls Hypothesis makes while shrinking are not counted, and the failure is
recorded once, with the smallest counterexample (the one Hypothesis replays last)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

import hypothesis
import numpy as np

import spec
from generators import BATCH, Case, profiles, rejection_cases, semantic_cases, undefined_cases
from generators.onnx_cases import onnx_node_cases

from .isolation import Reply, Runner
from .judge import Judgement, judge
from .options import Settings
from .results import CaseResult, CensusRecord, RawRun, RunInfo, census_from_json, results_from_json, to_json

# After this many timeouts in a run, a call is a hang once it takes far longer than the slowest
# call seen so far; without it, an implementation that hangs on many inputs would cost
# --timeout seconds per test and the run would take hours.
TIMEOUTS_BEFORE_ADAPTING = 3
# Crashes or timeouts allowed per test before shrinking stops asking the implementation; once
# the run has seen FAULTS_BEFORE_THRIFT of them, one per test (the first is recorded, unshrunk).
FAULTS_PER_TEST = 2
FAULTS_BEFORE_THRIFT = 6


class Nonconformance(AssertionError):
    """A case the implementation got wrong; Hypothesis shrinks it like any failed assertion."""


def _twin(case: Case, key: str) -> Case | None:
    """For one valid case in four: the same input with its last element lowered to the type's
    smallest value, asked right after. Same shape and same leading bytes, different answer: an
    implementation that keeps state between calls (a cache keyed on too little) answers stale."""
    if "state:twin" in case.tags or case.data.size < 2 or int(key[:2], 16) % 4:
        return None
    lowest = case.data.dtype.type(np.iinfo(case.data.dtype).min if case.data.dtype.kind in "iu" else -np.inf)
    if case.data.flat[-1] == lowest:
        return None  # the twin would be the case itself
    data = case.data.copy()
    data.flat[-1] = lowest
    return Case(case.version, data, case.attributes, (*case.tags, "state:twin"), case.intent)


@dataclass(frozen=True)
class _Failure:
    judgement: Judgement
    message: str  # what Hypothesis prints


@dataclass
class _TestState:
    """Bookkeeping of one Hypothesis test (one version and dtype of one suite)."""

    recorded: list[CaseResult] = field(default_factory=list)
    census: list[CensusRecord] = field(default_factory=list)
    failure: Judgement | None = None  # the latest failing judgement: after shrinking, the smallest
    settled: dict[str, _Failure | None] = field(default_factory=dict)  # input key -> its failure, if any
    faults: int = 0


class Conformance:
    """Runs cases against the implementation for one pytest process."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.runner = Runner(settings.impl, isolation=settings.isolation, timeout=settings.timeout)
        self.results: list[CaseResult] = []
        self.census: list[CensusRecord] = []
        self.timeouts = 0
        self.faults = 0  # crashes and timeouts in the whole run
        self.slowest_ok = 0.0
        self.state: _TestState | None = None
        self.test_id = ""

    # -- calling ---------------------------------------------------------------------------
    def _timeout(self) -> float:
        if self.timeouts < TIMEOUTS_BEFORE_ADAPTING:
            return self.settings.timeout
        return min(self.settings.timeout, max(1.0, 20 * self.slowest_ok))

    def call(self, data: np.ndarray, opset: int, attributes: Mapping[str, int]) -> Reply:
        self.runner.timeout = self._timeout()
        reply = self.runner.call(data, opset, attributes)
        if reply.status == "timeout":
            self.timeouts += 1
        elif reply.status == "ok":
            self.slowest_ok = max(self.slowest_ok, reply.seconds)
        return reply

    # -- one Hypothesis test -----------------------------------------------------------------
    def begin(self, test_id: str) -> None:
        self.state, self.test_id = _TestState(), test_id

    def check(self, case: Case, suite: str) -> None:
        """Judge one case (and its twin); raise Nonconformance when the implementation got it wrong."""
        failure = self._settle(case, suite)
        if failure is not None:
            self.state.failure = failure.judgement
            raise Nonconformance(failure.message)

    def _settle(self, case: Case, suite: str) -> _Failure | None:
        """The failure of ``case`` or of its twin, else None. Each input is judged once per test:
        shrinking replays whole batches, and the cases that pass in them are not asked again."""
        state = self.state
        key = case.key()
        if key in state.settled:
            return state.settled[key]
        if state.faults >= self._faults_allowed():
            # Shrinking a crash or a hang costs a worker restart or a timeout per try: stop
            # asking. A new input then counts as passing, unjudged and unrecorded, so Hypothesis
            # settles on the smallest input it has seen fail, and can still simplify the other
            # cases of its batch. (A census test has no failure to shrink: it stops observing.)
            return None
        reply = self.call(case.data, case.version, case.attributes)
        if reply.status in ("crash", "timeout"):
            state.faults += 1
            self.faults += 1
        version = spec.load(case.version)
        judgement = judge(version, case, reply, suite,
                          lambda data, attributes: self.call(data, case.version, attributes))
        judgement.result.test = self.test_id
        failure = None
        if judgement.failed:
            failure = _Failure(judgement, f"[{judgement.result.clause}] {judgement.result.outcome} on "
                                          f"{case.dtype_name}{list(case.data.shape)} with {dict(case.attributes)}")
        else:
            if state.failure is None:
                state.recorded.append(judgement.result)
                state.census.extend(judgement.census)
            twin = _twin(case, key)
            if twin is not None and judgement.result.kind == "semantic":
                failure = self._settle(twin, suite)
        state.settled[key] = failure
        return failure

    def _faults_allowed(self) -> int:
        return FAULTS_PER_TEST if self.faults < FAULTS_BEFORE_THRIFT else 1

    def end(self) -> None:
        state, self.state = self.state, None
        self.results.extend(state.recorded)
        self.census.extend(state.census)
        if state.failure is not None:
            result = state.failure.result
            result.counterexample = state.failure.evidence()
            result.counterexample.minimized = state.faults < self._faults_allowed()
            self.results.append(result)

    def close(self) -> None:
        self.runner.close()


@dataclass(frozen=True)
class Task:
    """One unit of a run: a suite at one version (and, for per-type suites, one type)."""

    suite: str  # fixed, property, rejection, census
    version: int
    dtype: str | None = None
    clause: str | None = None  # rejection tasks: one per rejection clause

    @property
    def id(self) -> str:
        return f"v{self.version}" + "".join(f"-{part}" for part in (self.dtype, self.clause) if part)


def run_test(conformance: Conformance, test_id: str, strategy, task: Task) -> None:
    """Run one Hypothesis test over ``strategy`` (batches of cases) with the run's profile and seed."""
    settings = conformance.settings

    profile = profiles.load(settings.profile)
    # The explain phase traces every executed line to annotate a failure: slow, and our
    # counterexample already says what went wrong.
    phases = [phase for phase in profile.phases if phase is not hypothesis.Phase.explain]

    @hypothesis.settings(profile, database=None, report_multiple_bugs=False, phases=phases)
    @hypothesis.given(cases=strategy)
    def test(cases: tuple[Case, ...]) -> None:
        for case in cases:
            conformance.check(case, task.suite)

    if settings.seed is not None:
        # Each test gets its own seed derived from the run's, so the twelve types of a version
        # do not all see the same shapes and positions.
        derived = int.from_bytes(hashlib.sha256(f"{settings.seed}:{task.suite}:{task.id}".encode()).digest()[:8], "big")
        test = hypothesis.seed(derived)(test)
    conformance.begin(test_id)
    try:
        test()
    finally:
        conformance.end()


def run_fixed(conformance: Conformance, test_id: str, cases: list[Case]) -> None:
    """Judge every fixed case (no search, no shrinking); raise once at the end if any failed."""
    failures = []
    for case in cases:
        conformance.begin(f"{test_id}[{case.tags[-1]}]")
        try:
            conformance.check(case, "fixed")
        except Nonconformance as exc:
            failures.append(f"{case.tags[-1]}: {exc}")
        finally:
            conformance.end()
    if failures:
        raise Nonconformance("\n".join(failures))


def plan(settings: Settings, suite: str) -> list[Task]:
    """The tasks of one suite for the selected versions and types."""
    tasks = []
    for number in settings.versions:
        if suite == "fixed":
            tasks.append(Task(suite, number))
            continue
        if suite == "rejection":
            tasks += [Task(suite, number, clause=c.id) for c in spec.load(number).of_kind("rejection")]
            continue
        tasks += [Task(suite, number, name) for name in spec.load(number).type_names
                  if settings.dtypes is None or name in settings.dtypes]
    return tasks


def run_task(conformance: Conformance, task: Task, test_id: str) -> None:
    version = spec.load(task.version)
    if task.suite == "fixed":
        restriction = conformance.settings.dtypes
        run_fixed(conformance, test_id, [c for c in onnx_node_cases(version)
                                         if restriction is None or c.dtype_name in restriction])
    elif task.suite == "property":
        run_test(conformance, test_id, semantic_cases(version, task.dtype, batch=BATCH), task)
    elif task.suite == "rejection":
        run_test(conformance, test_id, rejection_cases(version, task.clause, batch=BATCH), task)
    else:
        run_test(conformance, test_id, undefined_cases(version, task.dtype, batch=BATCH), task)


SUITES = ("fixed", "property", "rejection", "census")


def run_all(settings: Settings) -> Conformance:
    """A whole run without pytest (for adequacy scoring and the project's own tests):
    every task of every suite, each nonconformance recorded and the run carried on."""
    conformance = Conformance(settings)
    try:
        for suite in SUITES:
            for task in plan(settings, suite):
                with contextlib.suppress(Nonconformance):
                    run_task(conformance, task, f"{suite}::{task.id}")
    finally:
        conformance.close()
    return conformance


# -- the run as a whole ----------------------------------------------------------------------
def part_path(report_dir: Path, worker: str) -> Path:
    return report_dir / ".parts" / f"{worker}.json"


def write_part(conformance: Conformance, worker: str) -> None:
    """A pytest-xdist worker's results, for the controller to merge."""
    path = part_path(conformance.settings.report_dir, worker)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"results": [to_json(r) for r in conformance.results],
                "census": [to_json(c) for c in conformance.census]}
    path.write_text(json.dumps(document), encoding="utf-8")


def read_parts(report_dir: Path) -> tuple[list[CaseResult], list[CensusRecord]]:
    results, census = [], []
    for path in sorted((report_dir / ".parts").glob("*.json")):
        part = json.loads(path.read_text("utf-8"))
        results += results_from_json(part["results"])
        census += census_from_json(part["census"])
        path.unlink()
    return results, census


def choose_seed(settings: Settings) -> Settings:
    """A run without --seed still gets one, so its report says how to reproduce it."""
    if settings.seed is not None or settings.profile == "certify":
        return settings
    return replace(settings, seed=int(os.environ.get("ARGMIN_SEED") or random.SystemRandom().randrange(2**31)))


def raw_run(settings: Settings, started: float, results: list[CaseResult], census: list[CensusRecord],
            complete: bool, reason: str | None, environment: dict) -> RawRun:
    info = RunInfo(impl=settings.impl, versions=list(settings.versions),
                   dtypes=list(settings.dtypes) if settings.dtypes else None, profile=settings.profile,
                   seed=settings.seed,
                   started=datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="seconds"),
                   duration_s=round(time.time() - started, 3), complete=complete, incomplete_reason=reason,
                   isolation=settings.isolation, timeout_s=settings.timeout, lang=settings.lang)
    return RawRun(info, environment, results, census)
