"""Every failure asked again where a vendor runs its replay: in a fresh worker process, through
the path the replays take (the one-node model, or exactly the recorded pack: the adapter's
``answer_model``), without the compile cache (a replay compiles its models too).

A failure asked again in the worker that found it proves little: the code under test keeps
state there, and chooses what to answer. So each failure is asked in a fresh worker, and is:

- *reproduces alone* (results.records.REPRODUCES_ALONE): a fresh worker fails it too, so its
  replays fail as files;
- *needs history* (NEEDS_HISTORY): a fresh worker answers it right, but fails it after some of
  the models the worker that found it ran before it (engine.asking.history): the shortest such
  sequence found (``shortest``), which the card records and both replays run first, so that they
  fail as files;
- *flaky* (FLAKY): it fails neither alone nor after that history. ArgMin is deterministic: a
  wrong answer is a failure whether or not it recurs, so a flake is reported, never passed.

The cost is bounded per test process. One fresh worker (``fresh``) asks every failure of the run
as it is found: it has run only other failures' models, all small, before it. A second runner
(``trials``) asks in a new worker each time, and only where needed: a failure the fresh worker
answered right, twice alone (a wrong answer at random is no reproduction), then after its whole
history, and where that fails after parts of it, at most ``TRIALS`` workers; and once alone a
failure the fresh worker failed otherwise than the worker that found it (another wrong answer:
OpenVINO 2026.4.1 answers some packs with what earlier models left in memory, which a fresh
process's zeroed memory hides), or that the worker that found it answered two ways (the judge's
same call, answered otherwise). A needs-history failure must fail again after its shortest
history in ``CONFIRMATIONS`` more workers. What these workers compile is counted in the run's
model counts apart (results.records.REPRODUCE).

The shared fresh worker is a trade: a failure that fails there, the same way, only because of
another failure's model asked before it would read as reproducing alone, its replays passing as
files. One worker per failure would rule that out, at a worker's start (about a second) per
failure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.asking.calls import Node, Packed, Reply
from engine.asking.history import Ran, asked
from engine.asking.isolation import Runner
from engine.asking.loader import UsageError
from engine.judging.judge import answer, same_answer
from results import Counterexample, HistoryModel, PackNode
from results.outcomes import FAULTS
from results.records import FLAKY, NEEDS_HISTORY, REPRODUCES_ALONE
from results.tensors import to_tensor

TRIALS = 32  # new workers asked per failure a fresh worker answers right (history's delta debugging included)
ALONE = 3  # new workers asked it alone at most, where the shared fresh worker's answer does not settle it
CONFIRMATIONS = 1  # new workers that must fail it after the shortest history found, as it did there
SHOWN = 64  # input elements a history model's node may hold as they were: more are made zeros where it still fails

Fails = Callable[[Reply], bool]  # whether an answer to the failure's case fails it again


@dataclass(frozen=True)
class Failed:
    """A failure as asked again: the model it failed in (``nodes``, the case's at ``position``;
    one node: its one-node model), at ``version`` in ``form``, and the models its worker ran
    before it (``history``, oldest first)."""

    version: int
    form: str | None
    nodes: tuple[Node, ...]
    position: int
    history: tuple[Ran, ...]
    answered: Reply | None = None  # the wrong answer it gave there


@dataclass(frozen=True)
class Reproduction:
    """Where a failure reproduces (results.records.REPRODUCTIONS), the fresh worker's answer
    (``again``: a new worker's where only that one failed it), the shortest history it needs and
    the answer after it (for a flake: after the whole history held, where there was one)."""

    kind: str
    again: Reply
    history: tuple[Ran, ...] | None = None
    after: Reply | None = None


def mark(ce: Counterexample, found: Reproduction) -> None:
    """Mark ``ce`` with where its failure reproduces: the fresh worker's answer, whether it is a
    flake, and the history it needs with the answer after it."""
    ce.again, ce.reproduction, ce.flaky = answer(found.again), found.kind, found.kind == FLAKY
    ce.after_history = None if found.after is None else answer(found.after)
    if found.history is not None:
        ce.history = [HistoryModel(ran.version, ran.form, [PackNode(to_tensor(node.data), dict(node.attributes))
                                                           for node in ran.nodes]) for ran in found.history]


def shortest(history: Sequence[Ran], fails_after: Callable[[Sequence[Ran]], Reply | None],
             trials: int) -> tuple[list[Ran], Reply, int] | None:
    """The shortest part of ``history`` (in order) found after which the failure shows again, the
    wrong answer it gave, and the trials left; None where the whole history does not make it
    fail. ``fails_after(models)`` is that answer after ``models``, or None where it answered right
    (as it did after none: asked alone).

    Delta debugging over the history, one model it needs at a time: the whole history first (a
    flake costs one trial); then the shortest end of it after which it still fails, with the models
    already kept before it, starts with a model it needs (found galloping back from the last model,
    then by bisection: the state is mostly left by recent models, found in a few trials); what else
    it needs lies after that one. Done where the models kept make it fail alone."""
    if trials < 1:
        return None
    answer, trials = fails_after(history), trials - 1
    if answer is None:
        return None
    kept: list[Ran] = []
    rest = list(history)  # kept + rest makes it fail
    while rest and trials > 0:
        # Sizes of rest's end known not to make it fail with what is kept (``right``: nothing alone
        # does not), and to make it fail.
        right, wrong, galloping = -1 if kept else 0, len(rest), True
        while wrong - right > 1 and trials > 0:
            size = (right + 1 if right < 1 else 2 * right) if galloping else (right + wrong) // 2
            if size >= wrong:
                galloping = False
                continue
            trials -= 1
            found = fails_after([*kept, *rest[len(rest) - size:]])
            if found is None:
                right = size
            else:
                wrong, answer, galloping = size, found, False
        if wrong == 0 or wrong - right > 1:  # what is kept fails alone; or no trial is left to look closer
            rest = rest[len(rest) - wrong:]
            break
        kept.append(rest[len(rest) - wrong])
        rest = rest[len(rest) - wrong + 1:]
    return [*kept, *rest], answer, trials


def _zeros(ran: Ran) -> Ran | None:
    """``ran`` with every node fed zeros of its input's shape (None where it already is, or its
    inputs are few enough to show as they are)."""
    if sum(node.data.size for node in ran.nodes) <= SHOWN or not any(node.data.any() for node in ran.nodes):
        return None
    nodes = tuple(Node(np.zeros_like(node.data), node.attributes, node.dummy) for node in ran.nodes)
    return Ran(ran.version, ran.form, node=nodes[0]) if ran.packed is None else \
        Ran(ran.version, ran.form, packed=Packed(nodes, ran.packed.position))


def _lightened(kept: list[Ran], wrong: Reply, spare: int,
               fails_after: Callable[[Sequence[Ran]], Reply | None]) -> tuple[list[Ran], Reply]:
    """``kept`` (a history after which the failure shows, ``wrong`` the answer after it) with each
    model's inputs made zeros where it still fails after them, for short replays, within ``spare``
    trials; and the wrong answer after the last change."""
    for index in range(len(kept)):
        lighter = _zeros(kept[index])
        if lighter is not None and spare > 0:
            spare -= 1
            answer = fails_after([*kept[:index], lighter, *kept[index + 1:]])
            if answer is not None:
                kept[index], wrong = lighter, answer
    return kept, wrong


class Reproducer:
    """Asks a test process's failures again (see the module docstring); ``start`` makes a runner
    of the implementation under test (a worker process of its own, with no compile cache)."""

    def __init__(self, start: Callable[[], Runner]) -> None:
        self._start = start
        self._fresh: Runner | None = None
        self._trials: Runner | None = None
        self._asked = False  # whether the trial runner's current worker has asked anything
        # What its workers' answers cost so far, for the run's counts: models compiled, loaded from
        # the compile cache (none: it has none), calls, and the seconds the models took.
        self.spent: tuple[int, int, int, float, int] = (0, 0, 0, 0.0, 0)

    def reproduce(self, failed: Failed, fails: Fails, timeout: float, steady: bool = True) -> Reproduction | None:
        """Where ``failed`` reproduces; None where no worker but the one that found it could be
        started (a device one process holds, say). ``steady``: the worker that found it answered it
        the same way each time it asked. The shared fresh worker's wrong answer is enough only for
        a steady failure that it answers as the worker that found it did; otherwise workers of its
        own must fail it as that one, or each other, did (a runtime wrong at random fails the shared
        one now and then, and one that answers with what is left in memory fails it after the other
        failures' models)."""
        fresh = self._runner("_fresh")
        if fresh is None:
            return None
        fresh.timeout = timeout
        first = self._ask(fresh, (), failed)
        wrong_first = fails(first)

        def alike(answer: Reply, others: Sequence[Reply | None]) -> bool:
            return any(other is not None and same_answer(answer, other) for other in others)

        if wrong_first and steady and alike(first, [failed.answered]):
            return Reproduction(REPRODUCES_ALONE, first)
        trials = self._runner("_trials")
        if trials is None:
            return Reproduction(REPRODUCES_ALONE if wrong_first else FLAKY, first)
        trials.timeout = timeout
        answers: list[Reply | None] = []  # each new worker's answer, right or wrong
        after: list[Reply | None] = []  # ... of those asked after some history

        def fails_after(models: Sequence[Ran]) -> Reply | None:
            """The failure's wrong answer from a new worker after ``models`` (after some history, the
            answer the worker that found it gave: a history that reproduces it, reproduces it as it
            was); None where it answered right, or otherwise."""
            if self._asked:
                trials.fresh()
            self._asked = True
            answer = self._ask(trials, models, failed)
            (after if models else answers).append(answer)
            if answer is None or not fails(answer) or (models and not alike(answer, [failed.answered or answer])):
                return None
            return answer

        # Alone, in workers of its own: wrong as another fresh worker was (a wrong answer at random,
        # or read from memory nothing wrote, is no reproduction), or wrong every time it is asked so.
        wrongs = [first] if wrong_first else []
        for _ in range(ALONE):
            answer = fails_after(())
            if answer is None:
                break
            if alike(answer, wrongs):
                return Reproduction(REPRODUCES_ALONE, answer)
            wrongs.append(answer)
        else:
            return Reproduction(REPRODUCES_ALONE, wrongs[0])
        right = answers[-1]
        found = shortest(failed.history, fails_after, TRIALS - len(answers) - CONFIRMATIONS) \
            if failed.history else None
        if found is not None:
            kept, wrong = _lightened(*found, fails_after)
            if all(fails_after(kept) is not None for _ in range(CONFIRMATIONS)):
                return Reproduction(NEEDS_HISTORY, right, tuple(kept), wrong)
        shown = next((answer for answer in reversed(after) if answer is not None and not fails(answer)), None)
        return Reproduction(FLAKY, right, None, shown)

    def _runner(self, name: str) -> Runner | None:
        """The fresh or the trial runner, started on first use; None where it does not load."""
        runner = getattr(self, name)
        if runner is None:
            runner = self._start()
            try:
                runner.load()
            except UsageError:
                runner.close()
                return None
            setattr(self, name, runner)
        return runner

    def _ask(self, runner: Runner, history: Sequence[Ran], failed: Failed) -> Reply | None:
        """The failure's answer from ``runner``'s worker after ``history``, each model asked as it
        ran (one node: its one-node model; more: exactly that packed model), in one request; None
        where a model of the history crashed or hung the worker (then the failure was asked in
        another one)."""
        calls, units = asked([*history, Ran(failed.version, failed.form, packed=Packed(failed.nodes, failed.position))])
        replies = runner.call_many(calls, units=units, exact=True)
        compiles, loaded, made, seconds, nodes = self.spent
        self.spent = (compiles + sum(r.compiles for r in replies), loaded + sum(r.loaded for r in replies),
                      made + len(replies), seconds + sum(r.model_seconds for r in replies),
                      nodes + sum(r.compiled_nodes for r in replies))
        if any(reply.status in FAULTS for reply in replies[:units[-1][0]]):
            return None
        return replies[units[-1][failed.position]]

    def close(self) -> None:
        for runner in (self._fresh, self._trials):
            if runner is not None:
                runner.close()
