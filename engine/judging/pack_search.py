"""A failure only a packed model shows, taken to the packed model a vendor needs to see it.

A case that fails in a pack and passes alone is a bug of the pack, not of the case: a vendor needs
the model itself (its other nodes, their inputs and attributes, and the case's node) to see it.
The pack the case was found in may hold 64 nodes (a signature model up to 153): this asks smaller
ones, within a few asks, and keeps the smallest that fails the same way (``smallest``). Other
cases' nodes go, half of them at a time, then one by one; in a signature model (one with dummy
inputs) a case's node is fed a dummy instead, so the model stays the one that failed; then the
dummies go the same way, where a model without them still fails so (each is a few lines of a
snippet).

Then every node's input is made small (``lighter``), each while the pack still fails the same
way: first a single element of the same rank, then zeros of the same shape, then each axis cut to
its shortest leading or trailing part that still fails; the nodes of one shape together, the
other nodes' inputs first, largest first, and the case's own last (the one-node minimizer,
engine.judging.minimize, cannot make it smaller: alone, it answers right).

Each candidate is asked as exactly that model, right after the last 1, 2, 4 or 8 models its
worker ran before it where the pack it was found in fails again only so (``smallest_pack``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from engine.asking.calls import Node, Packed, Reply
from engine.asking.history import Ran
from engine.judging.bookkeeping import Key
from engine.judging.judge import Judgement
from generators import Case
from results import Pack, PackNode
from results.tensors import to_tensor

PRECEDED = (1, 2, 4, 8)  # the last models asked again before a packed failure that does not come again alone
ASKS = 20  # models asked at most per failure, the first the pack it was found in
LIGHTER_ASKS = 64  # models asked at most to make the nodes' inputs small

# Asks the model of these nodes, the case at this node: the model that answered where the case
# failed the same way again (whatever model the adapter chose), else None.
Ask = Callable[[Sequence[Node], int], "Packed | None"]


def smallest(found: Packed, ask: Ask, asks: int = ASKS) -> Packed | None:
    """The smallest pack ``ask`` shows the failure in, starting from ``found``; None where
    ``found`` itself, asked again, no longer fails."""
    shown = ask(found.nodes, found.position)
    if shown is None:
        return None
    left = asks - 1
    dummies = any(node.dummy for node in found.nodes)
    kept = list(range(len(found.nodes)))  # the nodes of ``found`` still there
    fed: set[int] = set()  # nodes of ``found`` fed a dummy instead of their case

    def attempt(keep: list[int], feed: set[int]) -> bool:
        """Adopt the model of the nodes ``keep``, those in ``feed`` fed a dummy, where it fails so."""
        nonlocal shown, left, kept, fed
        nodes = [_dummy(found.nodes[i]) if i in feed else found.nodes[i] for i in keep]
        if left == 0 or len(nodes) < 2:  # one node is a one-node model, which answers right
            return False
        left -= 1
        answered = ask(nodes, keep.index(found.position))
        if answered is not None:
            shown, kept, fed = answered, keep, feed
        return answered is not None

    def shrink(others: list[int], change: Callable[[set[int]], tuple[list[int], set[int]]]) -> None:
        """``change`` of parts of ``others``: halves, then smaller parts, down to one node at a time."""
        size = -(-len(others) // 2)
        while others and left > 0:
            dropped = False
            for part in [set(others[start:start + size]) for start in range(0, len(others), size)]:
                if attempt(*change(part)):
                    dropped, others = True, [i for i in others if i not in part]
            if not dropped:
                if size == 1:
                    break
                size = -(-size // 2)

    cases = [i for i, node in enumerate(found.nodes) if i != found.position and not node.dummy]
    if not dummies:
        shrink(cases, lambda part: ([i for i in kept if i not in part], fed))
        return shown
    shrink(cases, lambda part: (kept, fed | part))  # the signature model it failed in, fed dummies
    # Then its dummies go, where a model without them still fails so: a signature model holds up to 153 nodes.
    shrink([i for i in kept if i != found.position and (found.nodes[i].dummy or i in fed)],
           lambda part: ([i for i in kept if i not in part], fed - part))
    return shown


def _dummy(node: Node) -> Node:
    """A dummy input of ``node``'s rank and type in its place, as a signature model feeds one."""
    return Node(np.zeros((1,) * node.data.ndim, node.data.dtype), node.attributes, True)


def lighter(shown: Packed, ask: Ask, asks: int = LIGHTER_ASKS) -> Packed:
    """``shown`` with its nodes' inputs made as small as the failure allows, within ``asks``
    models. The nodes of one input shape change together (a bug between nodes may need their
    outputs alike: one node answering with another's), the other nodes' largest first, the
    case's last; each to one element, else zeros of its shape, then each axis, longest first, cut
    to its shortest leading or trailing part that still fails (1, 2, 4, ... elements: a twin
    differs from its case in the last element)."""
    nodes = list(shown.nodes)
    kinds: dict[tuple, list[int]] = {}
    for index, node in enumerate(nodes):
        if not node.dummy:
            kinds.setdefault((node.data.shape, node.data.dtype.str), []).append(index)
    groups = sorted(kinds.values(), key=lambda group: (shown.position in group, -nodes[group[0]].data.size))

    def attempt(group: list[int], change: Callable[[np.ndarray], np.ndarray]) -> bool:
        """Adopt ``change`` of every node of ``group`` where the pack still fails the same way."""
        nonlocal nodes, shown, asks
        if asks == 0:
            return False
        asks -= 1
        trial = list(nodes)
        for index in group:
            trial[index] = Node(change(nodes[index].data), nodes[index].attributes)
        answered = ask(trial, shown.position)
        if answered is not None:
            nodes, shown = trial, answered
        return answered is not None

    for group in groups:
        data = nodes[group[0]].data
        if data.size <= 1 or attempt(group, lambda d: np.zeros((1,) * d.ndim, d.dtype)):
            continue
        if any(nodes[index].data.any() for index in group):
            attempt(group, np.zeros_like)
        for axis in sorted(range(data.ndim), key=lambda a: -data.shape[a]):
            length = 1
            while length < nodes[group[0]].data.shape[axis] and asks:
                if attempt(group, lambda d, n=length, a=axis: np.take(d, range(n), axis=a)) or attempt(
                        group, lambda d, n=length, a=axis: np.take(d, range(d.shape[a] - n, d.shape[a]), axis=a)):
                    break
                length *= 2
    return shown


AskPack = Callable[[Sequence[Node], int, Sequence[Ran]], list[Reply]]  # nodes, version, the models before
JudgedAsAnswered = Callable[[Case, str, Reply], Judgement]  # a case, its suite, its answer: judged as it came


def smallest_pack(judgement: Judgement, key: Key, form: str | None, ask_pack: AskPack,
                  judged_as_answered: JudgedAsAnswered) -> tuple[Pack, Packed, Judgement]:
    """The pack record of a packed-only failure (``judgement``, of failure ``key``) in ``form``:
    the smallest model found that fails the same way, or the one it was found in, marked not
    reproduced, where that one, asked again, did not fail so. With it, that model as asked (to be
    asked again in a fresh worker) and the judgement of the case as the pack holds it (a smaller
    input than it was found with, where that still fails the same way)."""
    case, suite = judgement.case, judgement.result.suite
    judged = [(judgement.reply.pack, judgement)]  # each pack that failed, and the case's judgement in it
    before: Sequence[Ran] = ()  # the models asked before each candidate

    def ask(nodes: Sequence[Node], position: int) -> Packed | None:
        reply = ask_pack(nodes, case.version, before)[position]
        if reply.nodes < 2 or reply.pack is None:
            return None
        mine = case if nodes[position].data is case.data else replace(case, data=nodes[position].data)
        found = judged_as_answered(mine, suite, reply)
        if not any((f.clause, f.problem) == (key[0], key[2]) for f in found.failures):
            return None
        found.result.packed, found.result.test = judgement.result.packed, judgement.result.test  # as it was found
        found.result.form = form
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
    pack = Pack(form, (shown or found).position, nodes, reproduced=shown is not None)
    if shown is None:  # the pack it was found in, asked again, did not fail so
        return pack, found, judgement
    return pack, shown, next(j for p, j in reversed(judged) if p is shown)
