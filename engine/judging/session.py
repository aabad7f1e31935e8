"""The per-process session of a run: it calls the implementation (through an isolation
Runner), judges each case, keeps and streams the results, and bounds the cost of crashes and
hangs.

One test (a version and type of a suite) is a series of searches. Each search is a Hypothesis
run over the test's strategy; when it finds a failure, the minimizer simplifies it (Hypothesis'
own shrinker is not run: see engine.judging.run), and the failure is recorded with its
counterexample. Its key (clause, type, problem) is then set aside and the next search looks for
the others, so one bug never masks a second. A test whose cases all pass is a single search, as
long as before.

Counting: each distinct input is judged once per test (searches and Hypothesis' replays repeat inputs)
and recorded once, as it first comes, unless it is part of the search's own failure, which is
recorded at the end with its counterexample. A case that fails only in ways already set aside
is recorded as another occurrence of that failure. Inputs first met while minimizing are
not recorded."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np

import spec
from engine.asking.calls import CallArgs, Node, Packed, Reply
from engine.asking.history import Ran, asked
from engine.asking.isolation import Runner
from engine.asking.loader import UsageError
from engine.asking.packing import TWIN_FORMS, lighter, smallest, within
from engine.config.options import Settings, implementation
from engine.contract.adapters import Schedule
from engine.contract.forms import SYMBOLIC
from engine.judging.judge import NONDETERMINISTIC, Failure, Judgement, answer, judge, prepare
from engine.judging.minimize import minimize
from engine.judging.reproduce import Failed, Reproducer
from generators import Case
from generators.schedule import Entry
from generators.twin import twin
from results import CaseResult, CensusRecord, Counterexample, HistoryModel, Pack, PackNode
from results.outcomes import FAULTS, OK, RAISED, TIMEOUT, UNASKED, UNSUPPORTED
from results.records import ANOTHER_PROCESS, FLAKY, REPRODUCE, SAME_PROCESS, TestEnd, Usage
from results.stream import Writer
from results.tensors import to_tensor

# After this many timeouts in a run, a call is a hang once it takes far longer than the slowest
# call seen so far; without it, an implementation that hangs on many inputs would cost
# --timeout seconds per test and the run would take hours.
TIMEOUTS_BEFORE_ADAPTING = 3
# Crashes or timeouts allowed per test before the test stops asking the implementation new inputs;
# once the run has seen FAULTS_BEFORE_THRIFT of them, one per test (the first is recorded, unminimized).
FAULTS_PER_TEST = 2
FAULTS_BEFORE_THRIFT = 6
SEARCHES_PER_TEST = 6  # distinct failures looked for in one test before it stops searching
PRECEDED = (1, 2, 4, 8)  # the last models asked again before a packed failure that does not come again alone
ALSO_FAILS_ON = 3  # other failing inputs shown with a counterexample
_ALSO_LIMIT = 64  # ... each at most this many elements

Key = tuple[str, str, str, bool]  # (clause, type name, problem, whether it shows only in a packed model)
# Suites whose cases may be asked through packed models (engine.asking.packing): valid
# and census inputs. Never rejection cases: an invalid model fails its whole pack, every time.
PACKED_SUITES = ("property", "census")


class Nonconformance(AssertionError):
    """A case the implementation got wrong: it ends the Hypothesis search like any failed assertion."""


def _odd(record: CensusRecord) -> bool:
    """Whether a census answer fits no policy, is flagged, or changed when asked again."""
    return not record.fits or bool(record.flags) or record.deterministic is False


def _oddity(record: CensusRecord) -> tuple:
    """What makes a census answer odd, as the census reads it: its topic and group, the policies
    it fits, its flags and whether it changed when asked again."""
    return record.topic, record.group, tuple(record.fits), tuple(record.flags), record.deterministic


def key_of(judgement: Judgement, failure: Failure) -> Key:
    return failure.clause, judgement.case.type_name, failure.problem, judgement.result.packed is not None


@dataclass
class _TestState:
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
    # headline fails the pytest test (``end``).
    reported: list[tuple[str, str, str]] = field(default_factory=list)
    computed: bool = False  # whether a valid input of this test was answered (not refused)
    confirmed: set[tuple] = field(default_factory=set)  # census oddities a one-node model showed too
    faults: int = 0


class Session:
    """Runs cases against the implementation for one process. ``stream``, when given, receives
    every record as soon as it is final (see results.stream)."""

    def __init__(self, settings: Settings, runner: Runner | None = None, stream: Writer | None = None) -> None:
        self.settings = settings
        self.runner = runner or implementation(settings)
        self._census_runner: Runner | None = None  # the census's second asks (another worker process): _second
        self.stream = stream
        self.results: list[CaseResult] = []
        self.census: list[CensusRecord] = []
        self.timeouts = 0
        self.faults = 0  # crashes and timeouts in the whole run
        self.slowest_ok = 0.0
        self.state: _TestState | None = None
        self.test_id = ""
        self._taken = (0, 0)  # how many results and census records take_new has handed out
        self.ends: list[TestEnd] = []  # the end marks of the tests this process ran (``ended``)
        self._ends_taken = 0  # how many of them take_new has handed out
        self.form: str | None = None  # the model form of the current test (engine.contract.forms)
        # Models the implementation compiled and loaded from the compile cache, the seconds both
        # took, and calls made, so far; and those counts at the last _usage.
        self.compiles = self.loaded = self.calls = self.compiled_nodes = 0
        self.model_seconds = 0.0
        self._usage_taken = (0, 0, 0, 0.0, 0)
        self.suite: str | None = None  # the suite of the current test
        self.schedule: Schedule | None = None  # the signatures of the current test's schedule (``begin``)
        # Judging work done while a worker process answers (check_all); in-process, nothing waits.
        self._ahead = ThreadPoolExecutor(1, "argmin-judge-ahead") if self.runner.isolation == "process" else None
        # Where each failure reproduces: asked again in fresh worker processes (engine.judging.reproduce),
        # which compile what they ask as a replay does, without the compile cache; in-process, none.
        self._reproducer = Reproducer(lambda: implementation(replace(settings, compile_cache=None))) \
            if self.runner.isolation == "process" else None
        # the reproducer's spent, as _usage last counted it
        self._reproduced_taken: tuple[int, int, int, float, int] = (0, 0, 0, 0.0, 0)

    # -- calling ---------------------------------------------------------------------------
    def _timeout(self) -> float:
        if self.timeouts < TIMEOUTS_BEFORE_ADAPTING:
            return self.settings.timeout
        return min(self.settings.timeout, max(1.0, 20 * self.slowest_ok))

    def call(self, data: np.ndarray, version: int, attributes: Mapping[str, int]) -> Reply:
        return self.call_many([(data, version, attributes, self.form)])[0]

    def call_many(self, calls: list[CallArgs], runner: Runner | None = None, pack: bool = False,
                  units: list[list[int]] | None = None, faults: int | None = None) -> list[Reply]:
        """``pack``: the calls may go through packed models (where --packing is on), cut into
        ``units`` where given, and through the models of the test's schedule; ``faults``: crashes
        and hangs after which the rest is not asked (``Runner.call_many``). A call not packed is
        asked alone, a one-node model of its own."""
        runner = runner or self.runner
        runner.timeout = self._timeout()
        packing = pack and self.settings.packing
        return self._counted(runner.call_many(calls, pack=packing, units=units, faults=faults,
                                              schedule=self.schedule if packing else None))

    def ask_pack(self, nodes: Sequence[Node], version: int, before: Sequence[Ran] = ()) -> list[Reply]:
        """Exactly the packed model of ``nodes``, in their order (a recorded pack, rebuilt): the
        one way a packed failure is asked again (its minimizer; with --isolation none its second
        ask), as the replays ask it (the adapter's ``answer_model``), never cut or served otherwise;
        after the models ``before``, each asked as it ran, where given."""
        self.runner.timeout = self._timeout()
        calls, units = asked([*before, Ran(version, self.form, packed=Packed(tuple(nodes), 0))])
        return self._counted(self.runner.call_many(calls, units=units, exact=True))[units[-1][0]:]

    def _counted(self, replies: list[Reply]) -> list[Reply]:
        """``replies``, once the calls and models they cost are counted."""
        asked = [reply for reply in replies if reply.status != UNASKED]
        self.calls += len(asked)
        for reply in asked:
            self.compiles += reply.compiles
            self.compiled_nodes += reply.compiled_nodes
            self.loaded += reply.loaded
            self.model_seconds += reply.model_seconds
            if reply.status == TIMEOUT:
                self.timeouts += 1
            elif reply.status == OK:
                self.slowest_ok = max(self.slowest_ok, reply.seconds)
        return replies

    # -- one test ----------------------------------------------------------------------------
    def begin(self, test_id: str, form: str | None = None, suite: str | None = None,
              schedule: Sequence[Entry] = ()) -> None:
        """A new test; ``schedule``: the entries its cases are drawn within (generators.schedule),
        whose signatures a runtime that compiles per node serves from one model a rank."""
        self.state, self.test_id, self.form, self.suite = _TestState(), test_id, form, suite
        self.schedule = tuple(dict.fromkeys(entry.signature for entry in schedule)) or None

    def check_all(self, cases: Sequence[Case], suite: str) -> None:
        """Judge a batch of cases in order (see ``check``), asking the implementation about all
        of them in one round trip first, and meanwhile working out what judging them takes."""
        ahead = self._prepare(cases)
        self._prefetch(cases, suite in PACKED_SUITES)
        if ahead is not None:
            ahead.result()
        for case in cases:
            self.check(case, suite)

    def _prepare(self, cases: Sequence[Case]) -> Future | None:
        """``judge.prepare`` for the new cases of a batch and their twins, in the background:
        the process owning the run would otherwise sit idle while the worker answers. Not once the
        test's fault budget is spent: nothing more is asked, so nothing is judged."""
        if self._ahead is None or self.state.faults >= self._faults_allowed():
            return None
        firsts: dict[str, Case] = {}
        for case in cases:  # of repeated inputs, the first is the one judged
            if case.key() not in self.state.settled:
                firsts.setdefault(case.key(), case)
        twins = [t for c in firsts.values() if c.intent == "semantic" and (t := twin(c, c.key())) is not None]
        return self._ahead.submit(prepare, [*firsts.values(), *twins])

    def _prefetch(self, cases: Sequence[Case], pack: bool) -> None:
        """Ask the implementation, in one batch, what judging ``cases`` will ask: each new input;
        right after it its twin (a state bug shows only when the twin follows its case); then, in
        a second batch, each census input a second time (the census checks the answer does not
        change), in another worker process where there is one. ``pack``: through packed models
        where --packing is on (``_asked_in``), the planner's probes asked first, on their own."""
        state = self.state
        if state.faults >= self._faults_allowed():
            return
        if pack and self.settings.packing:
            fresh = [case for case in cases if case.key() not in state.settled and case.key() not in state.prefetched]
            if probes := self.runner.planner.probes(self._calls(fresh)):
                self._prefetch([fresh[index] for index in probes], pack)  # the rest of their kinds packs after
        pairs: list[tuple[Case, Case | None]] = []
        for case in cases:
            key = case.key()
            if key in state.settled or key in state.prefetched:
                continue
            state.prefetched[key] = []
            second = twin(case, key) if case.intent == "semantic" else None
            if second is not None and second.key() in state.settled:
                second = None
            if second is not None:
                state.prefetched.setdefault(second.key(), [])
                state.twinned[second.key()] = case
            pairs.append((case, second))
        if not pairs:
            return
        planned, units = self._asked_in(pairs, pack)
        replies = self.call_many(self._calls([case for case, _ in planned]), pack=pack, units=units,
                                 faults=self._faults_allowed() - state.faults)
        census: dict[int, Case] = {}  # by position in ``planned``
        for index, ((case, kept), reply) in enumerate(zip(planned, replies, strict=True)):
            if kept and reply.status != UNASKED:  # an unasked case is judged only if the budget allows: asked then
                state.prefetched[case.key()].append(reply)
                # Not where the first ask crashed or hung: the census does not ask those again.
                if case.intent == "undefined" and reply.status not in FAULTS:
                    census[index] = case
        if census:
            # In the packs of the first asks: the same models, which the compile cache holds.
            replies = self.call_many(self._calls(list(census.values())), self._census_worker(), pack,
                                     units=within(units, list(census)))
            state.again.update((c.key(), reply) for c, reply in zip(census.values(), replies, strict=True))

    def _calls(self, cases: Sequence[Case]) -> list[CallArgs]:
        return [(c.data, c.version, c.attributes, self.form) for c in cases]

    def _asked_in(self, pairs: Sequence[tuple[Case, Case | None]],
                pack: bool) -> tuple[list[tuple[Case, bool]], list[list[int]] | None]:
        """What to ask, in order, for cases and their twins (None where a case has none), each
        with whether its answer is kept; and the packs to ask them in (None: one by one, or as
        the runner cuts them). One by one, each twin follows its case; packed, the twins run on
        their cases' models (``Planner.with_twins``). Not in the initializer form, whose every
        model is new: there a twin is just another node."""
        if not (pack and self.settings.packing) or self.form not in TWIN_FORMS:
            return [(c, True) for pair in pairs for c in pair if c is not None], None
        asked, units = self.runner.planner.with_twins(self._calls([case for case, _ in pairs]),
                                                      [second is not None for _, second in pairs])
        planned = [(pairs[~index][1], True) if index < 0 else (pairs[index][0], position < len(pairs))
                   for position, index in enumerate(asked)]
        return planned, units

    def _census_worker(self) -> Runner:
        """Where a census input is asked the second time: a second worker process, started on
        first use (only census tests need it); the one runner with --isolation none, or where the
        implementation does not load a second time (a device one process holds, say)."""
        if self._census_runner is None:
            self._census_runner = self.runner
            if self.runner.isolation != "none":
                second = implementation(self.settings)
                try:
                    second.load()
                    self._census_runner = second
                except UsageError:
                    second.close()
        return self._census_runner

    def _census_second_answer(self, case: Case) -> tuple[Reply, str]:
        """The census's second answer to ``case`` (asked ahead, or asked now: a one-node model)
        and where it was asked."""
        second = self._census_worker()
        reply = self.state.again.pop(case.key(), None)
        if reply is None:
            reply = self.call_many([(case.data, case.version, case.attributes, self.form)], second)[0]
        return reply, SAME_PROCESS if second is self.runner else ANOTHER_PROCESS

    def _asked(self, case: Case) -> Reply:
        """The implementation's answer to ``case``: prefetched, or asked now."""
        waiting = self.state.prefetched.get(case.key())
        return waiting.pop(0) if waiting else self.call(case.data, case.version, case.attributes)

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
                self._remember(key_of(judgement, failure), judgement)
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
        if state.faults >= self._faults_allowed():
            return None
        reply = self._asked(case)
        if reply.status in FAULTS:
            state.faults += 1
            self.faults += 1

        def again(data: np.ndarray, attributes: Mapping[str, int]) -> Reply:
            """The judge asks once more, to sharpen a failure's blame: the same input again or a variant."""
            if data is case.data and attributes == case.attributes:
                return self._asked(case)
            return self.call(data, case.version, attributes)

        if reply.nodes > 1:
            judgement = self._judged_as_answered(case, suite, reply)
            if reply.status == UNSUPPORTED:
                pass  # a pack refused as a whole, of a type refused alone too (engine.asking.worker.answers)
            elif judgement.failed and not all(key_of(judgement, f) in state.aside for f in judgement.failures):
                # (A packed failure whose every clause and problem this test has confirmed alone
                # already is one more occurrence of a known failure: not asked again.)
                judgement = self._judged_alone(case, suite, judgement, again)
            elif not {_oddity(record) for record in judgement.census if _odd(record)} <= state.confirmed:
                # (An oddity this test has seen alone already is one more occurrence of it.)
                judgement = self._census_alone(case, suite, again)
                state.confirmed.update(_oddity(record) for record in judgement.census if _odd(record))
        else:
            judgement = judge(spec.load(case.version), case, reply, suite, again,
                              lambda: self._census_second_answer(case))
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

    def _judged_as_answered(self, case: Case, suite: str, reply: Reply) -> Judgement:
        """The judgement of an answer as it came, without the re-asks that sharpen a failure's
        blame: for an answer from a packed model they would be one-node models, and a failure is
        asked alone anyway; for a counterexample asked once more, only whether it fails matters."""
        refused = Reply(RAISED, None, "not asked: the answer is judged as it came", 0.0)
        return judge(spec.load(case.version), case, reply, suite,
                     lambda data, attributes: reply if attributes == case.attributes else refused,
                     lambda: self._census_second_answer(case))

    def _judged_alone(self, case: Case, suite: str, packed: Judgement,
               again: Callable[[np.ndarray, Mapping[str, int]], Reply]) -> Judgement:
        """A case that failed in a packed model, asked again alone (a one-node model). Failing
        there too, it is judged from that answer, exactly as without packing; answering right,
        the packed failure is a finding of its own, marked with the pack's node count. A twin
        is asked right after its case, as one by one: its failure may be the state the case left."""
        alone = judge(spec.load(case.version), case, self._asked_again(case), suite, again)
        if not alone.failed:
            packed.result.packed = packed.reply.nodes
            return packed
        return alone

    def _census_alone(self, case: Case, suite: str,
                      again: Callable[[np.ndarray, Mapping[str, int]], Reply]) -> Judgement:
        """A census answer from a packed model that fits no policy, is flagged or changed when
        asked again, judged from a one-node model instead (asked twice, as one by one): the
        census records the runtime's policy, never a bug that only its packed models have. Once a
        one-node model has shown an oddity, the test takes its other packed occurrences as they came."""
        first = self.call(case.data, case.version, case.attributes)
        # The packed judgement took the second answer asked ahead: this one is asked now, alone.
        return judge(spec.load(case.version), case, first, suite, again, lambda: self._census_second_answer(case))

    def _faults_allowed(self) -> int:
        return FAULTS_PER_TEST if self.faults < FAULTS_BEFORE_THRIFT else 1

    def take_new(self) -> tuple[list[CaseResult], list[CensusRecord], list[Usage], list[TestEnd]]:
        """The records made since the last call, and the end marks of the tests that made them:
        what an xdist worker hands to its controller."""
        results, census = self._taken
        self._taken = (len(self.results), len(self.census))
        ends, self._ends_taken = self.ends[self._ends_taken:], len(self.ends)
        return self.results[results:], self.census[census:], self._usage(), ends

    def delivered(self) -> tuple[int, int]:
        """How many case and census records this process has made so far (``ended`` counts from it)."""
        return len(self.results), len(self.census)

    def ended(self, test: str, since: tuple[int, int]) -> None:
        """Test ``test`` (its test key) has made all its records, those after ``since``: its end
        mark goes to the stream after them, or with them to the controller (``take_new``)."""
        mark = TestEnd(test, len(self.results) - since[0], len(self.census) - since[1])
        self.ends.append(mark)
        if self.stream is not None:
            self.stream.end(mark)

    def _usage(self) -> list[Usage]:
        """The models compiled (and loaded) and calls made since the last time, by the current
        test's suite and form, and apart (suite REPRODUCE) those the failures' fresh workers
        asked (model-based implementations only)."""
        now = (self.compiles, self.calls, self.loaded, self.model_seconds, self.compiled_nodes)
        compiles, calls, loaded, seconds, nodes = (a - b for a, b in zip(now, self._usage_taken, strict=True))
        self._usage_taken = now
        spent = self._reproducer.spent if self._reproducer is not None else (0, 0, 0, 0.0, 0)
        again = [a - b for a, b in zip(spent, self._reproduced_taken, strict=True)]
        self._reproduced_taken = spent
        if self.settings.forms is None:
            return []
        counted = [Usage(compiles, calls, loaded, round(seconds, 6), self.suite, self.form, nodes)] if calls else []
        if again[2]:
            counted.append(Usage(again[0], again[2], again[1], round(again[3], 6), REPRODUCE, self.form, again[4]))
        return counted

    def _record(self, result: CaseResult, census: list[CensusRecord]) -> None:
        self.results.append(result)
        self.census.extend(census)
        if self.stream is not None:
            self.stream.result(result)
            for record in census:
                self.stream.census(record)

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
        unminimized = state.faults >= self._faults_allowed()
        # A packed-only failure is not minimized: every candidate would be asked alone, and pass.
        packed = judgement.result.packed is not None
        if minimizing and failure.problem not in FAULTS and not unminimized and not packed:
            judgement = self._minimized(judgement, key)
        pack, model = None, Packed((Node(judgement.case.data, judgement.case.attributes),), 0)
        if packed and judgement.reply.pack is not None:
            pack, model, judgement = self._smallest_pack(judgement, key)
            failure = self._failure_of(judgement, key)
        result = judgement.recorded_as(failure)
        result.counterexample = judgement.evidence(self._failure_of(judgement, key))
        result.counterexample.minimized = not unminimized and not packed
        result.counterexample.also = [j.example() for j in self._also_failing(key, judgement)]
        result.counterexample.pack = pack
        self._reproduce(result.counterexample, judgement, model)
        self._record(result, [])
        state.recorded.add(judgement.case.key())
        state.aside.add(key)
        state.reported.append((f"{failure.clause} {failure.problem} ({judgement.case.type_name}): {failure.message}",
                               judgement.result.kind, failure.problem))

    def _smallest_pack(self, judgement: Judgement, key: Key) -> tuple[Pack, Packed, Judgement]:
        """The packed model a packed-only failure shows in: the smallest one found that fails the
        same way, its nodes' inputs made small, the case's own last (engine.asking.packing), each candidate
        asked as exactly that model (``ask_pack``), right after the last 1, 2, 4 or 8 models its
        worker ran before it where the pack it was found in fails again only so; or the one it was
        found in, marked not reproduced, where that one, asked again, did not fail so. With it,
        that model as asked
        (to be asked again in a fresh worker) and the judgement of the case as the pack holds it
        (a smaller input than it was found with, where that still fails the same way)."""
        case, suite = judgement.case, judgement.result.suite
        judged = [(judgement.reply.pack, judgement)]  # each pack that failed, and the case's judgement in it

        before: Sequence[Ran] = ()  # the models asked before each candidate

        def ask(nodes: Sequence[Node], position: int) -> Packed | None:
            reply = self.ask_pack(nodes, case.version, before)[position]
            if reply.nodes < 2 or reply.pack is None:
                return None
            mine = case if nodes[position].data is case.data else replace(case, data=nodes[position].data)
            found = self._judged_as_answered(mine, suite, reply)
            if not any((f.clause, f.problem) == (key[0], key[2]) for f in found.failures):
                return None
            found.result.packed, found.result.test = judgement.result.packed, judgement.result.test  # as it was found
            found.result.form = self.form
            judged.append((reply.pack, found))
            return reply.pack

        found, history = judgement.reply.pack, judgement.reply.before
        shown = smallest(found, ask)
        for size in PRECEDED:  # a failure the worker's state made: after the last models it ran before it
            if shown is not None or size > len(history):
                break
            before = history[-size:]
            shown = smallest(found, ask)
        shown = shown if shown is None else lighter(shown, ask)
        nodes = [PackNode(to_tensor(node.data), dict(node.attributes)) for node in (shown or found).nodes]
        pack = Pack(self.form, (shown or found).position, nodes, reproduced=shown is not None)
        if shown is None:  # the pack it was found in, asked again, did not fail so
            return pack, found, judgement
        return pack, shown, next(j for p, j in reversed(judged) if p is shown)

    def _reproduce(self, ce: Counterexample, judgement: Judgement, model: Packed) -> None:
        """Ask a failure once more, exactly as it failed (``model``: its one-node model, or its
        recorded pack), and record where it reproduces: in fresh worker processes, after the
        history it needs where it needs one (engine.judging.reproduce); with --isolation none, or
        where no second worker loads, in the process that found it (a crash or a hang is not asked
        again there)."""
        case, suite = judgement.case, judgement.result.suite

        def fails(reply: Reply) -> bool:
            return self._judged_as_answered(case, suite, reply).failed

        found = None
        if self._reproducer is not None:
            failed = Failed(case.version, self.form, model.nodes, model.position, judgement.reply.before,
                            judgement.reply)
            found = self._reproducer.reproduce(failed, fails, self._timeout(), ce.problem != NONDETERMINISTIC)
        if found is None:
            if ce.problem not in FAULTS:
                again = self.ask_pack(model.nodes, case.version)[model.position] if len(model.nodes) > 1 \
                    else self._asked_again(case)
                ce.again, ce.flaky = answer(again), not fails(again)
            return
        ce.again, ce.reproduction, ce.flaky = answer(found.again), found.kind, found.kind == FLAKY
        ce.after_history = None if found.after is None else answer(found.after)
        if found.history is not None:
            ce.history = [HistoryModel(ran.version, ran.form, [PackNode(to_tensor(node.data), dict(node.attributes))
                                                               for node in ran.nodes]) for ran in found.history]

    def _asked_again(self, case: Case) -> Reply:
        """``case`` asked once more, alone, as one by one would ask it: a twin right after the
        case it is the twin of (its failure may be the state that case left)."""
        before = self.state.twinned.get(case.key())
        if before is not None:
            self.call(before.data, before.version, before.attributes)
        return self.call(case.data, case.version, case.attributes)

    @staticmethod
    def _failure_of(judgement: Judgement, key: Key) -> Failure:
        return next(f for f in judgement.failures if key_of(judgement, f) == key)

    def _minimized(self, judgement: Judgement, key: Key) -> Judgement:
        suite = judgement.result.suite

        def fails(candidate: Case) -> bool:
            found = self._settle(candidate, suite, record=False)
            if found is not None and any(key_of(found, f) == key for f in found.failures):
                self._remember(key, found)
                return True
            return False

        simplest = self._scouted(judgement, key, fails) or minimize(judgement.case, fails)
        return self.state.settled[simplest.key()] if simplest is not judgement.case else judgement

    def _scouted(self, judgement: Judgement, key: Key, fails: Callable[[Case], bool]) -> Case | None:
        """For a runtime that compiles per node, a failure of the static or initializer form is
        minimized in the symbolic form first, where one compiled node serves every shape of its
        signature (in the initializer form each candidate is a compile of its own): the simplest
        case found there, once the test's own form fails on it the same way (``fails``). None where
        the symbolic form does not show the failure, or the test's form passes its simplest case:
        the failure is then minimized in its own form. The symbolic answers are judged as they came."""
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

    def _remember(self, key: Key, judgement: Judgement) -> None:
        """Keep a failing input for the "also fails on" list (a few per failure key)."""
        seen = self.state.seen.setdefault(key, {})
        if len(seen) < 4 * ALSO_FAILS_ON:
            seen.setdefault(judgement.case.key(), judgement)

    def _also_failing(self, key: Key, shown: Judgement) -> list[Judgement]:
        """Up to ALSO_FAILS_ON other small inputs that fail the same way, new shapes first."""
        pool = {k: j for k, j in self.state.seen.get(key, {}).items()
                if j.case.data.size <= _ALSO_LIMIT and k != shown.case.key()}
        ordered = sorted(pool.values(), key=lambda j: (j.case.data.size, j.case.data.ndim))
        shapes = {shown.case.data.shape}
        fresh = [j for j in ordered if j.case.data.shape not in shapes and not shapes.add(j.case.data.shape)]
        rest = [j for j in ordered if all(j is not f for f in fresh)]
        return (fresh + rest)[:ALSO_FAILS_ON]

    def end(self) -> list[str]:
        """Close the test; one line per failure it found that tells against the headline: a crash
        or a hang, or a valid input answered wrongly or refused, unless the test's type refused
        every valid input (a type not implemented: the scope). A computed invalid model (the
        strictness) fails no pytest test: the report has it, and the verdict does not change."""
        state, self.state = self.state, None
        if self.stream is not None:  # else an xdist worker's take_new hands it over
            for usage in self._usage():
                self.stream.usage(usage)
        return [line for line, kind, problem in state.reported if problem in FAULTS or (
            kind == "semantic" and (problem != UNSUPPORTED or state.computed))]

    def close(self) -> None:
        if self._ahead is not None:
            self._ahead.shutdown()
        if self._reproducer is not None:
            self._reproducer.close()
        self.runner.close()
        if self._census_runner is not None:
            self._census_runner.close()  # the runner itself, or the second one
        if self.stream is not None:
            self.stream.close()
