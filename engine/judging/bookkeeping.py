"""One test's bookkeeping: what it has judged and recorded, the failures it has set aside, the
census oddities a one-node model has shown, the other inputs that fail the same way (shown beside
a counterexample), its share of the run's budget of crashes and hangs, and the lines it reports
to pytest."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.asking.calls import Reply
from engine.judging.judge import Failure, Judgement
from generators import Case
from results import CensusRecord
from results.outcomes import FAULTS, UNSUPPORTED

# Crashes or timeouts allowed per test before the test stops asking the implementation new inputs;
# once the run has seen FAULTS_BEFORE_THRIFT of them, one per test (the first is recorded, unminimized).
FAULTS_PER_TEST = 2
FAULTS_BEFORE_THRIFT = 6
ALSO_FAILS_ON = 3  # other failing inputs shown with a counterexample
_ALSO_LIMIT = 64  # ... each at most this many elements

Key = tuple[str, str, str, bool]  # (clause, type name, problem, whether it shows only in a packed model)


def key_of(judgement: Judgement, failure: Failure) -> Key:
    return failure.clause, judgement.case.type_name, failure.problem, judgement.result.packed is not None


def failure_of(judgement: Judgement, key: Key) -> Failure:
    """The failure of ``judgement`` that ``key`` names."""
    return next(f for f in judgement.failures if key_of(judgement, f) == key)


def oddities(census: list[CensusRecord]) -> set[tuple]:
    """What makes each odd census answer (one that fits no policy, is flagged, or changed when
    asked again) odd: its topic, group, policies, flags and determinism."""
    return {(record.topic, record.group, tuple(record.fits), tuple(record.flags), record.deterministic)
            for record in census if not record.fits or record.flags or record.deterministic is False}


def faults_allowed(run_faults: int) -> int:
    """Crashes and hangs a test may meet, once the run has met ``run_faults`` of them."""
    return FAULTS_PER_TEST if run_faults < FAULTS_BEFORE_THRIFT else 1


@dataclass
class TestState:
    """Bookkeeping of one test (one version and type of one suite)."""

    settled: dict[str, Judgement | None] = field(default_factory=dict)  # input key -> judgement (None: unasked)
    recorded: set[str] = field(default_factory=set)  # input keys recorded
    aside: set[Key] = field(default_factory=set)  # failures already reported
    current: tuple[Judgement, Failure] | None = None  # this search's failure, as first found
    seen: dict[Key, dict[str, Judgement]] = field(default_factory=dict)  # failing inputs per failure key
    prefetched: dict[str, list[Reply]] = field(default_factory=dict)  # input key -> answers asked ahead
    again: dict[str, Reply] = field(default_factory=dict)  # census input key -> its second answer, asked ahead
    twinned: dict[str, Case] = field(default_factory=dict)  # a twin's input key -> the case it is the twin of
    # One line per failure found, for pytest, with its kind and problem: only a failure of the
    # headline fails the pytest test (``failing_lines``).
    reported: list[tuple[str, str, str]] = field(default_factory=list)
    computed: bool = False  # whether a valid input of this test was answered (not refused)
    confirmed: set[tuple] = field(default_factory=set)  # census oddities a one-node model showed too
    faults: int = 0

    def remember(self, key: Key, judgement: Judgement) -> None:
        """Keep a failing input for the "also fails on" list (a few per failure key)."""
        seen = self.seen.setdefault(key, {})
        if len(seen) < 4 * ALSO_FAILS_ON:
            seen.setdefault(judgement.case.key(), judgement)

    def also_failing(self, key: Key, shown: Judgement) -> list[Judgement]:
        """Up to ALSO_FAILS_ON other small inputs that fail the same way, new shapes first."""
        pool = {k: j for k, j in self.seen.get(key, {}).items()
                if j.case.data.size <= _ALSO_LIMIT and k != shown.case.key()}
        ordered = sorted(pool.values(), key=lambda j: (j.case.data.size, j.case.data.ndim))
        shapes = {shown.case.data.shape}
        fresh = [j for j in ordered if j.case.data.shape not in shapes and not shapes.add(j.case.data.shape)]
        rest = [j for j in ordered if all(j is not f for f in fresh)]
        return (fresh + rest)[:ALSO_FAILS_ON]

    def failing_lines(self) -> list[str]:
        """One line per failure found that tells against the headline: a crash or a hang, or a
        valid input answered wrongly or refused, unless the test's type refused every valid input
        (a type not implemented: the scope). A computed invalid model (the strictness) fails no
        pytest test: the report has it, and the verdict does not change."""
        return [line for line, kind, problem in self.reported if problem in FAULTS or (
            kind == "semantic" and (problem != UNSUPPORTED or self.computed))]
