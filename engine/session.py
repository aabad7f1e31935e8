"""The per-process session of a run: it calls the implementation (through an isolation
Runner), judges each case, keeps and streams the results, and bounds the cost of crashes and
hangs.

Counting: within one Hypothesis test, the cases generated up to the first failure are recorded
as they come; the calls Hypothesis makes while shrinking are not counted, and the failure is
recorded once, with the smallest counterexample (the one Hypothesis replays last)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

import spec
from generators import Case
from generators.twin import twin
from results import CaseResult, CensusRecord
from results.stream import Writer

from .isolation import Reply, Runner
from .judge import Judgement, judge
from .options import Settings

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


@dataclass(frozen=True)
class _Failure:
    judgement: Judgement
    message: str  # what Hypothesis prints


@dataclass
class _TestState:
    """Bookkeeping of one Hypothesis test (one version and type of one suite)."""

    failure: Judgement | None = None  # the latest failing judgement: after shrinking, the smallest
    settled: dict[str, _Failure | None] = field(default_factory=dict)  # input key -> its failure, if any
    faults: int = 0


class Session:
    """Runs cases against the implementation for one process. ``stream``, when given, receives
    every record as soon as it is final (see results.stream)."""

    def __init__(self, settings: Settings, runner: Runner | None = None, stream: Writer | None = None) -> None:
        self.settings = settings
        self.runner = runner or Runner(settings.impl, isolation=settings.isolation, timeout=settings.timeout,
                                       memory_limit=settings.memory_limit)
        self.stream = stream
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

    def call(self, data: np.ndarray, version: int, attributes: Mapping[str, int]) -> Reply:
        self.runner.timeout = self._timeout()
        reply = self.runner.call(data, version, attributes)
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
            if self.state.failure is None and self.stream is not None:
                # On disk before shrinking starts: a run killed meanwhile keeps the failure, unshrunk.
                found = failure.judgement.result
                self.stream.found(replace(found, counterexample=replace(failure.judgement.evidence(), minimized=False)))
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
        judgement = judge(spec.load(case.version), case, reply, suite,
                          lambda data, attributes: self.call(data, case.version, attributes))
        judgement.result.test = self.test_id
        failure = None
        if judgement.failed:
            failure = _Failure(judgement, f"[{judgement.result.clause}] {judgement.result.outcome} on "
                                          f"{case.type_name}{list(case.data.shape)} with {dict(case.attributes)}")
        else:
            if state.failure is None:
                self._record(judgement.result, judgement.census)
            second = twin(case, key)
            if second is not None and judgement.result.kind == "semantic":
                failure = self._settle(second, suite)
        state.settled[key] = failure
        return failure

    def _faults_allowed(self) -> int:
        return FAULTS_PER_TEST if self.faults < FAULTS_BEFORE_THRIFT else 1

    def _record(self, result: CaseResult, census: list[CensusRecord]) -> None:
        self.results.append(result)
        self.census.extend(census)
        if self.stream is not None:
            self.stream.result(result)
            for record in census:
                self.stream.census(record)

    def end(self) -> None:
        state, self.state = self.state, None
        if state.failure is not None:
            result = state.failure.result
            result.counterexample = state.failure.evidence()
            result.counterexample.minimized = state.faults < self._faults_allowed()
            self._record(result, [])

    def close(self) -> None:
        self.runner.close()
        if self.stream is not None:
            self.stream.close()
