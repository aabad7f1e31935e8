"""The per-process session of a run: it asks the implementation (engine.judging.asker: through
an isolation Runner, a batch ahead), judges each case, searches for failures and minimizes them,
keeps and streams the results (engine.judging.recorder), and bounds the cost of crashes and hangs
(engine.judging.bookkeeping).

A test (a version and type of a suite) is a series of searches: a Hypothesis run over the test's
strategy that, on a failure, minimizes it (not Hypothesis' shrinker: engine.judging.run) and
records it with its counterexample; its key (clause, type, problem) is then set aside and the next
search looks for the others, so one bug never masks a second. Each distinct input is judged once
per test and recorded once, as it first comes, unless it is the search's own failure (recorded
at the end with its counterexample); a case failing only in ways set aside is another occurrence
of that failure. Inputs first met while minimizing are not recorded."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

import spec
from engine.asking.calls import Node, Packed, Reply
from engine.asking.isolation import Runner
from engine.config.options import Settings, implementation
from engine.contract.forms import SYMBOLIC
from engine.judging import ahead
from engine.judging.asker import Asker
from engine.judging.bookkeeping import Key, TestState, failure_of, faults_allowed, key_of, oddities
from engine.judging.judge import Ask, Judgement, prepare, verdict
from engine.judging.minimize import minimize
from engine.judging.pack_search import smallest_pack
from engine.judging.recorder import Recorder
from generators import Case
from generators.schedule import Entry
from generators.twin import twin
from results import CaseResult, CensusRecord
from results.outcomes import FAULTS, OK, RAISED, UNSUPPORTED
from results.records import TestEnd, Usage
from results.stream import Writer

SEARCHES_PER_TEST = 6  # distinct failures looked for in one test before it stops searching
# Suites whose cases may be asked through packed models (engine.asking.packing): valid
# and census inputs. Never rejection cases: an invalid model fails its whole pack, every time.
PACKED_SUITES = ("property", "census")


class Nonconformance(AssertionError):
    """A case the implementation got wrong: it ends the Hypothesis search like any failed assertion."""


class Session(Asker, Recorder):
    """Runs cases against the implementation for one process: asks (``Asker``), judges, searches
    and records (``Recorder``; ``stream``, when given, receives every record as soon as it is final:
    see results.stream)."""

    def __init__(self, settings: Settings, runner: Runner | None = None, stream: Writer | None = None) -> None:
        Asker.__init__(self, settings, runner, implementation)
        Recorder.__init__(self, stream)
        self.faults = 0  # crashes and timeouts in the whole run
        self.test_id = ""
        # Judging work done while a worker process answers (check_all); in-process, nothing waits.
        self._ahead = ThreadPoolExecutor(1, "argmin-judge-ahead") if self.runner.isolation == "process" else None

    # -- one test ----------------------------------------------------------------------------
    def begin(self, test_id: str, form: str | None = None, suite: str | None = None,
              schedule: Sequence[Entry] = ()) -> None:
        """A new test; ``schedule``: the entries its cases are drawn within (generators.schedule),
        whose signatures a runtime that compiles per node serves from one model a rank."""
        self.state, self.test_id, self.form, self.suite = TestState(), test_id, form, suite
        self.schedule = tuple(dict.fromkeys(entry.signature for entry in schedule)) or None

    def check_all(self, cases: Sequence[Case], suite: str) -> None:
        """Judge a batch of cases in order (see ``check``), asking the implementation about all
        of them in one round trip first, and meanwhile working out what judging them takes."""
        prepared = self._prepare(cases)
        if self.searching_on:
            self.ask_ahead(cases, suite in PACKED_SUITES, self._faults_allowed() - self.state.faults)
        if prepared is not None:
            prepared.result()
        for case in cases:
            self.check(case, suite)

    def _prepare(self, cases: Sequence[Case]) -> Future | None:
        """``judge.prepare`` for the new cases of a batch and their twins, in the background:
        the process owning the run would otherwise sit idle while the worker answers. Not once the
        test's fault budget is spent: nothing more is asked, so nothing is judged."""
        if self._ahead is None or not self.searching_on:
            return None
        return self._ahead.submit(prepare, ahead.judged_next(cases, self.state))

    def check(self, case: Case, suite: str) -> None:
        """Judge one case (and its twin); raise Nonconformance when it fails in a way not yet
        reported in this test."""
        state = self.state
        for judgement in self._judged(case, suite):
            open_failures = [f for f in judgement.failures if key_of(judgement, f) not in state.aside]
            if open_failures:
                failure = open_failures[0]
                if state.current is None and self.stream is not None:
                    # On disk before minimizing starts: a run killed meanwhile keeps the failure, unminimized.
                    found = judgement.recorded_as(failure)
                    found.counterexample = replace(judgement.evidence(failure), minimized=False)
                    self.stream.found(found)
                state.current = (judgement, failure)
                state.remember(key_of(judgement, failure), judgement)
                where = f" ({self.form} model)" if self.form else ""
                if judgement.result.packed:
                    where = f" (only in a packed {self.form} model of {judgement.result.packed} nodes)"
                raise Nonconformance(f"[{failure.clause}] {failure.problem} on {case.type_name}"
                                     f"{list(judgement.case.data.shape)} with {dict(judgement.case.attributes)}{where}")

    def _judged(self, case: Case, suite: str) -> list[Judgement]:
        """The case's judgement and, for a valid case with a twin, the twin's."""
        judgement = self._settle(case, suite)
        if judgement is None:
            return []
        second = twin(case, case.key()) if judgement.result.kind == "semantic" and not judgement.failed else None
        return [judgement] + ([] if second is None else [j for j in [self._settle(second, suite)] if j is not None])

    def _settle(self, case: Case, suite: str, record: bool = True) -> Judgement | None:
        """The judgement of ``case``, asking the implementation only the first time; None when
        the fault budget is spent (the input then counts as passing, unasked and unrecorded, so
        Hypothesis settles on the smallest input it has seen fail)."""
        state = self.state
        key = case.key()
        if key in state.settled:
            return state.settled[key]
        if not self.searching_on:
            return None
        reply = self._asked(case)
        if reply.status in FAULTS:
            state.faults += 1
            self.faults += 1
        if reply.nodes > 1:
            judgement = self._judged_as_answered(case, suite, reply)
            if reply.status == UNSUPPORTED:
                pass  # a pack refused as a whole, of a type refused alone too (engine.asking.worker.answers)
            elif judgement.failed and not all(key_of(judgement, f) in state.aside for f in judgement.failures):
                # (A packed failure whose every clause and problem this test has confirmed alone
                # already is one more occurrence of a known failure: not asked again.)
                judgement = self._judged_alone(case, suite, judgement)
            elif not oddities(judgement.census) <= state.confirmed:
                # (An oddity this test has seen alone already is one more occurrence of it.)
                judgement = self._census_alone(case, suite)
                state.confirmed.update(oddities(judgement.census))
        else:
            judgement = self._verdict(case, suite, reply)
        judgement.result.test, judgement.result.form = self.test_id, self.form
        for census in judgement.census:
            census.form = self.form
        state.computed = state.computed or (judgement.result.kind == "semantic" and reply.status == OK)
        state.settled[key] = judgement
        searching = state.current is None
        if record and searching and not any(key_of(judgement, f) not in state.aside for f in judgement.failures):
            self._record(judgement.result, judgement.census)
            state.recorded.add(key)
        return judgement

    def _verdict(self, case: Case, suite: str, reply: Reply, as_answered: bool = False) -> Judgement:
        """``reply`` judged (judge.verdict), the session asking what judging asks for: the census's
        second answer, and the case's input once more, to sharpen a failure's blame (the same call:
        asked ahead, or now; a variant of its attributes). ``as_answered``: the answer as it came,
        without those re-asks (the same call answered with ``reply``, a variant refused): for an
        answer from a packed model they would be one-node models, and a failure is asked alone
        anyway; for a counterexample asked once more, only whether it fails matters."""
        refused = Reply(RAISED, None, "not asked: the answer is judged as it came", 0.0)
        asked: list[Reply] = []
        second = None
        while isinstance(step := verdict(spec.load(case.version), case, reply, suite, asked, second), Ask):
            if step.second:
                second = self._census_second_answer(case)
            elif step.attributes == case.attributes:
                asked.append(reply if as_answered else self._asked(case))
            else:
                asked.append(refused if as_answered else self.call(case.data, case.version, step.attributes))
        return step

    def _judged_as_answered(self, case: Case, suite: str, reply: Reply) -> Judgement:
        return self._verdict(case, suite, reply, as_answered=True)

    def _judged_alone(self, case: Case, suite: str, packed: Judgement) -> Judgement:
        """A case that failed in a packed model, asked again alone (a one-node model). Failing
        there too, it is judged from that answer, exactly as without packing; answering right,
        the packed failure is a finding of its own, marked with the pack's node count. A twin
        is asked right after its case, as one by one: its failure may be the state the case left."""
        alone = self._verdict(case, suite, self._asked_again(case))
        if not alone.failed:
            packed.result.packed = packed.reply.nodes
            return packed
        return alone

    def _census_alone(self, case: Case, suite: str) -> Judgement:
        """A census answer from a packed model that fits no policy, is flagged or changed when
        asked again, judged from a one-node model instead (asked twice, as one by one): the
        census records the runtime's policy, never a bug that only its packed models have. Once a
        one-node model has shown an oddity, the test takes its other packed occurrences as they came."""
        first = self.call(case.data, case.version, case.attributes)
        # The packed judgement took the second answer asked ahead: this one is asked now, alone.
        return self._verdict(case, suite, first)

    def _faults_allowed(self) -> int:
        return faults_allowed(self.faults)

    def take_new(self) -> tuple[list[CaseResult], list[CensusRecord], list[Usage], list[TestEnd]]:
        """The records made since the last call, what they cost, and the end marks of the tests
        that made them: what an xdist worker hands to its controller."""
        return self.handed(self._usage())

    @property
    def searching_on(self) -> bool:
        """Whether another search of this test may find something: its fault budget is not spent."""
        return self.state.faults < self._faults_allowed()

    def found(self, minimizing: bool = True) -> None:
        """The current search ended on a failure: minimize it, record it with its counterexample,
        and set its key aside for the next search."""
        state = self.state
        judgement, failure = state.current
        state.current = None
        key = key_of(judgement, failure)
        unminimized = not self.searching_on
        # A packed-only failure is not minimized: every candidate would be asked alone, and pass.
        packed = judgement.result.packed is not None
        if minimizing and failure.problem not in FAULTS and not unminimized and not packed:
            judgement = self._minimized(judgement, key)
        pack, model = None, Packed((Node(judgement.case.data, judgement.case.attributes),), 0)
        if packed and judgement.reply.pack is not None:
            pack, model, judgement = smallest_pack(judgement, key, self.form, self.ask_pack, self._judged_as_answered)
            failure = failure_of(judgement, key)
        result = judgement.recorded_as(failure)
        result.counterexample = judgement.evidence(failure_of(judgement, key))
        result.counterexample.minimized = not unminimized and not packed
        result.counterexample.also = [j.example() for j in state.also_failing(key, judgement)]
        result.counterexample.pack = pack
        case, suite = judgement.case, judgement.result.suite
        self._reproduce(result.counterexample, case, judgement.reply, model,
                        lambda reply: self._judged_as_answered(case, suite, reply).failed)
        self._record(result, [])
        state.recorded.add(judgement.case.key())
        state.aside.add(key)
        state.reported.append((f"{failure.clause} {failure.problem} ({judgement.case.type_name}): {failure.message}",
                               judgement.result.kind, failure.problem))

    def _minimized(self, judgement: Judgement, key: Key) -> Judgement:
        """The failure's simplest case: its candidates (minimize.proposals) asked by the session,
        each judged as any case (but not recorded); it still fails where it fails with ``key``.
        Where a runtime compiles per node, scouted in the symbolic form first (``_scouted``)."""
        suite = judgement.result.suite

        def fails(candidate: Case) -> bool:
            found = self._settle(candidate, suite, record=False)
            if found is not None and any(key_of(found, f) == key for f in found.failures):
                self.state.remember(key, found)
                return True
            return False

        simplest = self._scouted(judgement, key, fails) or minimize(judgement.case, fails)
        return self.state.settled[simplest.key()] if simplest is not judgement.case else judgement

    def _scouted(self, judgement: Judgement, key: Key, fails: Callable[[Case], bool]) -> Case | None:
        """A failure of the static or initializer form, for a runtime that compiles per node,
        minimized in the symbolic form (one compiled node a signature): the simplest case there,
        where the test's form fails on it too (``fails``); else None (minimized in its own form)."""
        if self.form == SYMBOLIC or self.settings.compile_key != "node" or SYMBOLIC not in (self.settings.forms or ()):
            return None
        suite = judgement.result.suite

        def fails_symbolic(candidate: Case) -> bool:
            reply = self.call_many([(candidate.data, candidate.version, candidate.attributes, SYMBOLIC)])[0]
            judged = self._judged_as_answered(candidate, suite, reply)
            return reply.status not in FAULTS and any(key_of(judged, f) == key for f in judged.failures)

        if not fails_symbolic(judgement.case):
            return None
        simplest = minimize(judgement.case, fails_symbolic)
        return simplest if simplest is not judgement.case and fails(simplest) else None

    def end(self) -> list[str]:
        """Close the test; one line per failure it found that tells against the headline
        (``TestState.failing_lines``)."""
        state, self.state = self.state, None
        if self.stream is not None:  # else an xdist worker's take_new hands it over
            for usage in self._usage():
                self.stream.usage(usage)
        return state.failing_lines()

    def close(self) -> None:
        if self._ahead is not None:
            self._ahead.shutdown()
        Asker.close(self)
        if self.stream is not None:
            self.stream.close()
