"""The smallest packed model that still shows a failure only packed models show.

A case that fails in a pack and passes alone is a bug of the pack, not of the case: a vendor needs
the model itself (its other nodes, their inputs and attributes, and the case's node) to see it.
The pack the case was found in may hold 64 nodes (a signature model up to 153): this asks smaller
ones, within a few asks, and keeps the smallest that fails the same way. Other cases' nodes go,
half of them at a time, then one by one; in a signature model (one with dummy inputs) a case's
node is fed a dummy instead, so the model stays the one that failed. Dummies stay: they cost
nothing to show, and a signature model feeds them whatever is asked.

Then every node's input is made small (``lighter``), each while the pack still fails the same
way: first a single element of the same rank, then zeros of the same shape, then halves of its
longest axis; the other nodes' inputs first, largest first, and the case's own last (the one-node
minimizer cannot make it smaller: alone, it answers right)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .isolation import Node, Packed

ASKS = 20  # models asked at most per failure, the first the pack it was found in
LIGHTER_ASKS = 32  # models asked at most to make the nodes' inputs small

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
    dummy = next((node.data for node in found.nodes if node.dummy), None)
    kept = list(range(len(found.nodes)))  # the nodes of ``found`` still there
    fed: set[int] = set()  # nodes of ``found`` fed a dummy instead of their case
    others = [i for i, node in enumerate(found.nodes) if i != found.position and not node.dummy]
    size = -(-len(others) // 2)
    while others and left > 0:
        dropped = False
        for part in [set(others[start:start + size]) for start in range(0, len(others), size)]:
            nodes, position = _without(found, kept, fed | part, dummy)
            if left == 0 or len(nodes) < 2:
                continue  # one node is a one-node model, which answers right
            left -= 1
            answered = ask(nodes, position)
            if answered is not None:
                shown, dropped = answered, True
                others = [i for i in others if i not in part]
                if dummy is None:
                    kept = [i for i in kept if i not in part]
                else:
                    fed |= part
        if not dropped:
            if size == 1:
                break
            size = -(-size // 2)
    return shown


def _without(found: Packed, kept: list[int], dropped: set[int], dummy: np.ndarray | None) -> tuple[list[Node], int]:
    """The nodes of ``found`` in ``kept`` but for ``dropped`` (fed ``dummy`` instead where there is
    one), and the case's node among them."""
    if dummy is not None:
        nodes = [Node(dummy, found.nodes[i].attributes, True) if i in dropped else found.nodes[i] for i in kept]
        return nodes, kept.index(found.position)
    remaining = [i for i in kept if i not in dropped]
    return [found.nodes[i] for i in remaining], remaining.index(found.position)


def lighter(shown: Packed, ask: Ask, asks: int = LIGHTER_ASKS) -> Packed:
    """``shown`` with its nodes' inputs made as small as the failure allows, the other nodes'
    largest first, then the case's, within ``asks`` models."""
    nodes = list(shown.nodes)
    others = sorted((i for i, node in enumerate(nodes) if i != shown.position and not node.dummy),
                    key=lambda i: -nodes[i].data.size)
    for index in [*others, shown.position]:
        first = True  # one element is tried once per node: a pack it did not fail in will not later
        while asks:
            candidates, first = _smaller(nodes[index].data, first), False
            for candidate in candidates:
                if asks == 0:
                    break
                asks -= 1
                trial = [*nodes[:index], Node(candidate, nodes[index].attributes), *nodes[index + 1:]]
                answered = ask(trial, shown.position)
                if answered is not None:  # smaller still fails the same way: try smaller yet
                    nodes, shown = trial, answered
                    break
            else:
                break  # nothing smaller fails the same way
    return shown


def _smaller(data: np.ndarray, single: bool) -> list[np.ndarray]:
    """Inputs of ``data``'s rank and type to try in its place, smallest first: one element (with
    ``single``), zeros of its shape, then its longest axis halved."""
    if data.size <= 1:
        return []
    tries = [np.zeros((1,) * data.ndim, data.dtype)] if single else []
    if data.any():
        tries.append(np.zeros_like(data))
    longest = int(np.argmax(data.shape))
    if data.shape[longest] > 1:
        tries.append(np.take(data, range(-(-data.shape[longest] // 2)), axis=longest))
    return tries
