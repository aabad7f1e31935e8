"""A session's ways to the implementation, and what its asks cost: the runner of its tests, the
census's second worker (engine.judging.census_second), the fresh workers that ask its failures
again (engine.judging.reproduce); a batch's answers asked ahead (engine.judging.ahead), kept in
the test's state; every ask with a timeout that adapts to hangs, and counted (calls made, models
compiled and loaded from the compile cache, the seconds both took and the nodes compiled) for
the run's usage records (results.records.Usage)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from engine.asking.calls import CallArgs, Node, Packed, Reply
from engine.asking.history import Ran, asked
from engine.asking.isolation import Runner
from engine.asking.packing import within
from engine.config.options import Settings
from engine.contract.adapters import Schedule
from engine.judging import ahead
from engine.judging.bookkeeping import TestState
from engine.judging.census_second import SecondWorker
from engine.judging.judge import NONDETERMINISTIC, answer
from engine.judging.reproduce import Failed, Reproducer, mark
from generators import Case
from results import Counterexample
from results.outcomes import FAULTS, OK, TIMEOUT, UNASKED
from results.records import REPRODUCE, Usage

# After this many timeouts in a run, a call is a hang once it takes far longer than the slowest
# call seen so far; without it, an implementation that hangs on many inputs would cost
# --timeout seconds per test and the run would take hours.
TIMEOUTS_BEFORE_ADAPTING = 3


class Asker:
    """The asking half of a session (engine.judging.session.Session): ``start`` makes a runner of
    the implementation under test from the run's settings."""

    def __init__(self, settings: Settings, runner: Runner | None, start: Callable[[Settings], Runner]) -> None:
        self.settings = settings
        self.runner = runner or start(settings)
        self.second = SecondWorker(self.runner, lambda: start(settings))
        # Where each failure reproduces: asked again in fresh worker processes, which compile what
        # they ask as a replay does, without the compile cache; in-process, none.
        self.reproducer = Reproducer(lambda: start(replace(settings, compile_cache=None))) \
            if self.runner.isolation == "process" else None
        self.state: TestState | None = None  # the current test's bookkeeping, with its answers asked ahead
        self.form: str | None = None  # the model form of the current test (engine.contract.forms)
        self.suite: str | None = None  # the suite of the current test
        self.schedule: Schedule | None = None  # the signatures of the current test's schedule
        self.timeouts = 0
        self.slowest_ok = 0.0
        # Models the implementation compiled and loaded from the compile cache, the seconds both
        # took, and calls made, so far; and those counts (and the reproducer's) at the last _usage.
        self.compiles = self.loaded = self.calls = self.compiled_nodes = 0
        self.model_seconds = 0.0
        self._usage_taken: tuple[int, int, int, float, int] = (0, 0, 0, 0.0, 0)
        self._reproduced_taken: tuple[int, int, int, float, int] = (0, 0, 0, 0.0, 0)  # Reproducer.spent

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

    def ask_ahead(self, cases: Sequence[Case], pack: bool, faults: int) -> None:
        """Ask the implementation, in one batch, what judging ``cases`` will ask: each new input;
        right after it its twin (a state bug shows only when the twin follows its case); then, in
        a second batch, each census input a second time (the census checks the answer does not
        change), in another worker process where there is one. ``pack``: through packed models
        where --packing is on (``ahead.asked_in``), the planner's probes asked first, on their own;
        ``faults``: the crashes and hangs the test may still meet."""
        state, packing = self.state, pack and self.settings.packing
        if packing:
            fresh = ahead.fresh(cases, state)
            if probes := self.runner.planner.probes(ahead.calls_of(fresh, self.form)):
                self.ask_ahead([fresh[index] for index in probes], pack, faults)  # the rest of their kinds after
        pairs = ahead.pairs(cases, state)
        if not pairs:
            return
        planned, units = ahead.asked_in(pairs, self.runner.planner, self.form, packing)
        replies = self.call_many(ahead.calls_of([case for case, _ in planned], self.form), pack=pack, units=units,
                                 faults=faults)
        census = ahead.kept(planned, replies, state)
        if census:
            # In the packs of the first asks: the same models, which the compile cache holds.
            replies = self.call_many(ahead.calls_of(list(census.values()), self.form), self.second.runner(), pack,
                                     units=within(units, list(census)))
            state.again.update((c.key(), reply) for c, reply in zip(census.values(), replies, strict=True))

    def _asked(self, case: Case) -> Reply:
        """The implementation's answer to ``case``: asked ahead, or asked now."""
        waiting = self.state.prefetched.get(case.key())
        return waiting.pop(0) if waiting else self.call(case.data, case.version, case.attributes)

    def _census_second_answer(self, case: Case) -> tuple[Reply, str]:
        """The census's second answer to ``case`` (asked ahead, or asked now: a one-node model)
        and where it was asked."""
        reply = self.state.again.pop(case.key(), None)
        if reply is None:
            reply = self.call_many([(case.data, case.version, case.attributes, self.form)], self.second.runner())[0]
        return reply, self.second.where()

    def _asked_again(self, case: Case) -> Reply:
        """``case`` asked once more, alone, as one by one would ask it: a twin right after the
        case it is the twin of (its failure may be the state that case left)."""
        before = self.state.twinned.get(case.key())
        if before is not None:
            self.call(before.data, before.version, before.attributes)
        return self.call(case.data, case.version, case.attributes)

    def _reproduce(self, ce: Counterexample, case: Case, answered: Reply, model: Packed,
                   fails: Callable[[Reply], bool]) -> None:
        """Ask a failure of ``case`` (``answered`` as it failed) once more, exactly as it failed
        (``model``: its one-node model, or its recorded pack), and mark ``ce`` with where it
        reproduces (``fails``: whether an answer fails it again): in fresh worker processes, after
        the history it needs where it needs one (engine.judging.reproduce); with --isolation none,
        or where no second worker loads, in the process that found it (a crash or a hang is not
        asked again there)."""
        found = None
        if self.reproducer is not None:
            failed = Failed(case.version, self.form, model.nodes, model.position, answered.before, answered)
            found = self.reproducer.reproduce(failed, fails, self._timeout(), ce.problem != NONDETERMINISTIC)
        if found is not None:
            mark(ce, found)
        elif ce.problem not in FAULTS:
            again = self.ask_pack(model.nodes, case.version)[model.position] if len(model.nodes) > 1 \
                else self._asked_again(case)
            ce.again, ce.flaky = answer(again), not fails(again)

    def _counted(self, replies: list[Reply]) -> list[Reply]:
        """``replies``, once the calls and models they cost are counted."""
        answered = [reply for reply in replies if reply.status != UNASKED]
        self.calls += len(answered)
        for reply in answered:
            self.compiles += reply.compiles
            self.compiled_nodes += reply.compiled_nodes
            self.loaded += reply.loaded
            self.model_seconds += reply.model_seconds
            if reply.status == TIMEOUT:
                self.timeouts += 1
            elif reply.status == OK:
                self.slowest_ok = max(self.slowest_ok, reply.seconds)
        return replies

    def _usage(self) -> list[Usage]:
        """The models compiled (and loaded) and calls made since the last time, by the current
        test's suite and form, and apart (suite REPRODUCE) those the failures' fresh workers
        asked (model-based implementations only)."""
        now = (self.compiles, self.calls, self.loaded, self.model_seconds, self.compiled_nodes)
        compiles, calls, loaded, seconds, nodes = (a - b for a, b in zip(now, self._usage_taken, strict=True))
        self._usage_taken = now
        spent = self.reproducer.spent if self.reproducer is not None else (0, 0, 0, 0.0, 0)
        again = [a - b for a, b in zip(spent, self._reproduced_taken, strict=True)]
        self._reproduced_taken = spent
        if self.settings.forms is None:
            return []
        counted = [Usage(compiles, calls, loaded, round(seconds, 6), self.suite, self.form, nodes)] if calls else []
        if again[2]:
            counted.append(Usage(again[0], again[2], again[1], round(again[3], 6), REPRODUCE, self.form, again[4]))
        return counted

    def close(self) -> None:
        if self.reproducer is not None:
            self.reproducer.close()
        self.runner.close()
        self.second.close()
