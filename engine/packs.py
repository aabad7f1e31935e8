"""The smallest packed model that still shows a failure only packed models show.

A case that fails in a pack and passes alone is a bug of the pack, not of the case: a vendor needs
the model itself (its other nodes, their inputs and attributes, and the case's node) to see it.
The pack the case was found in may hold 64 nodes (a signature model up to 153): this asks smaller
ones, within a few asks, and keeps the smallest that fails the same way. Other cases' nodes go,
half of them at a time, then one by one; in a signature model (one with dummy inputs) a case's
node is fed a dummy instead, so the model stays the one that failed. Dummies stay: they cost
nothing to show, and a signature model feeds them whatever is asked."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .isolation import Node, Packed

ASKS = 20  # models asked at most per failure, the first the pack it was found in

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
