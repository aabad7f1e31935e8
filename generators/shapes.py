"""Shapes: rank, the reduced axis's length class, the other sides, zero-size dimensions.

Element counts stay bounded (MAX_ELEMENTS, MAX_SLICES) so that a long reduced axis comes with
small other dimensions: the point of a long axis is the reduction, not the memory traffic."""

from __future__ import annotations

import math

from .choices import Choices, weighted

MAX_RANK = 8
MAX_ELEMENTS = 1 << 17
MAX_SLICES = 512  # other dimensions multiply to at most this: high ranks test indexing, not volume
SHORT = (2, 256)
LONG = (257, 65536)
VERY_LONG = (65537, 140000)  # beyond 65,536: the grid or index width limit of some kernels
RANKS = weighted((1, 6), (2, 6), (3, 5), (4, 4), (5, 2), (6, 2), (7, 1), (8, 2))
SIDES = weighted((1, 5), (2, 4), (3, 3), (4, 2), (5, 1), (7, 1))
LENGTH_CLASSES = weighted(("1", 4), ("short", 20), ("long", 5), ("very-long", 2))


def length_class(n: int) -> str:
    """The ``axis-length`` tag value of a reduced axis of length ``n``."""
    if n <= 1:
        return str(n)
    return "short" if n <= SHORT[1] else "long" if n <= LONG[1] else "very-long"


def length_in(bounds: tuple[int, int], choices: Choices) -> int:
    """A length in ``bounds``, spread log-uniformly and monotone in its two bytes, so that
    shrinking finds the shortest length that still fails."""
    low, high = bounds
    return min(high, int(low * math.exp(math.log(high / low) * choices.u16() / 65536)))


def reduced_length(choices: Choices, classes: tuple[str, ...] = LENGTH_CLASSES) -> int:
    """Three bytes: the length class, then the length inside it."""
    kind = choices.pick(classes)
    bounds = {"short": SHORT, "long": LONG, "very-long": VERY_LONG}.get(kind)
    value = choices.region(2)
    return 1 if bounds is None else length_in(bounds, value)


def other_sides(choices: Choices, rank: int, axis: int, n: int, zero_dims: bool) -> list[int]:
    """The full shape with ``n`` at ``axis``: eight bytes for the sides (fixed, whatever the
    rank), then two for an optional zero-size dimension on a non-reduced axis."""
    sides = [SIDES[b * len(SIDES) >> 8] for b in choices.take(MAX_RANK)]
    zero = choices.chance(8)
    zero_at = choices.byte()
    shape, budget = [], max(1, min(MAX_SLICES, MAX_ELEMENTS // max(n, 1)))
    for dim in range(rank):
        if dim == axis:
            shape.append(n)
            continue
        side = min(sides[dim], budget)
        budget = max(1, budget // side)
        shape.append(side)
    others = [d for d in range(rank) if d != axis]
    if zero_dims and zero and others:
        shape[others[zero_at * len(others) >> 8]] = 0
    return shape
