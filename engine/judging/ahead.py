"""What a batch of cases asks ahead, in one round trip, before any of it is judged: each new
input and, right after it, its twin (a state bug shows only when the twin follows its case), in
the packs the planner cuts (engine.asking.packing), the twins on their cases' models; which
answers are kept for judging, and which census inputs are then asked a second time."""

from __future__ import annotations

from collections.abc import Sequence

from engine.asking.calls import CallArgs, Reply
from engine.asking.packing import TWIN_FORMS, Planner
from engine.judging.bookkeeping import TestState
from generators import Case
from generators.twin import twin
from results.outcomes import FAULTS, UNASKED

Pair = tuple[Case, "Case | None"]  # a case and its twin, where it has one


def calls_of(cases: Sequence[Case], form: str | None) -> list[CallArgs]:
    return [(c.data, c.version, c.attributes, form) for c in cases]


def judged_next(cases: Sequence[Case], state: TestState) -> list[Case]:
    """The cases of a batch the test has not judged yet (of repeated inputs, the first) and
    their twins: what judging the batch will take (judge.prepare works it out meanwhile)."""
    firsts: dict[str, Case] = {}
    for case in cases:
        if case.key() not in state.settled:
            firsts.setdefault(case.key(), case)
    twins = [t for c in firsts.values() if c.intent == "semantic" and (t := twin(c, c.key())) is not None]
    return [*firsts.values(), *twins]


def fresh(cases: Sequence[Case], state: TestState) -> list[Case]:
    """The cases neither judged nor asked ahead yet."""
    return [case for case in cases if case.key() not in state.settled and case.key() not in state.prefetched]


def pairs(cases: Sequence[Case], state: TestState) -> list[Pair]:
    """The fresh cases of a batch, each with its twin (a valid case's, not yet judged), both now
    waiting in ``state`` for their answers."""
    found: list[Pair] = []
    for case in cases:
        key = case.key()
        if key in state.settled or key in state.prefetched:  # judged, asked ahead, or repeated in the batch
            continue
        state.prefetched[key] = []
        second = twin(case, key) if case.intent == "semantic" else None
        if second is not None and second.key() in state.settled:
            second = None
        if second is not None:
            state.prefetched.setdefault(second.key(), [])
            state.twinned[second.key()] = case
        found.append((case, second))
    return found


def asked_in(found: Sequence[Pair], planner: Planner, form: str | None,
             packing: bool) -> tuple[list[tuple[Case, bool]], list[list[int]] | None]:
    """What to ask, in order, for cases and their twins, each with whether its answer is kept;
    and the packs to ask them in (None: one by one, or as the runner cuts them). One by one, each
    twin follows its case; packed, the twins run on their cases' models (``Planner.with_twins``).
    Not in the initializer form, whose every model is new: there a twin is just another node."""
    if not packing or form not in TWIN_FORMS:
        return [(c, True) for pair in found for c in pair if c is not None], None
    asked, units = planner.with_twins(calls_of([case for case, _ in found], form),
                                      [second is not None for _, second in found])
    planned = [(found[~index][1], True) if index < 0 else (found[index][0], position < len(found))
               for position, index in enumerate(asked)]
    return planned, units


def kept(planned: Sequence[tuple[Case, bool]], replies: Sequence[Reply], state: TestState) -> dict[int, Case]:
    """Keep the answers to judge in ``state`` (an unasked case is judged only if the budget
    allows: asked then); return the census inputs to ask a second time, by position in
    ``planned``: not where the first ask crashed or hung (the census does not ask those again)."""
    census: dict[int, Case] = {}
    for index, ((case, keep), reply) in enumerate(zip(planned, replies, strict=True)):
        if keep and reply.status != UNASKED:
            state.prefetched[case.key()].append(reply)
            if case.intent == "undefined" and reply.status not in FAULTS:
                census[index] = case
    return census
