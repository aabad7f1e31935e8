"""Shapes: the shape family, the rank, the reduced axis's length and the other sides.

Kernels split their work by slices (one thread or block per group of slices), by the inner
width (vector lanes of 8, 16 or 32 elements, then a tail) and by blocks along long axes; bugs
hide at those boundaries. So a case's shape comes from one of six families:

- ``plain``: ranks 1-8, reduced axes from length 1 to beyond 65,536, other sides of 1 to 7
  multiplying to at most MAX_SLICES (high ranks test indexing, long axes the reduction);
- ``many-slices``: 10^3 to 10^5 slices over a short reduced axis;
- ``wide-inner``: a non-reduced last dimension of 8 to 4096, on and off multiples of 8, 16, 32;
- ``batch-classes``: an (N, C) batch of scores reduced over either axis, e.g. (1000, 10);
- ``middle-axis``: the reduced axis between large outer and inner extents;
- ``tiles``: the reduced length L drawn together with the inner extent I (the product of the
  dimensions after the axis, the stride a tiled kernel cuts against) or with the slice count S
  (the output's size): a pair of log-scale buckets first, uniformly over the pairs that fit the
  budget, then the extents inside them, spread over ranks 2 to 8 with the axis anywhere. The other
  families vary one extent at a time; this one reaches a long axis over a wide inner extent.

Every family stays within the element budget it is given (ELEMENT_BUDGET at most), so one case
costs a bounded time whatever its shape; the cases of a batch share one budget (``batch_budget``),
so a test's total is bounded too. Each family reads its own fixed bytes, and all-zero bytes give
its smallest shape, so a failing case still shrinks to the fewest slices or the narrowest width
that fails."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from .choices import Choices, weighted

T = TypeVar("T")

MAX_RANK = 8
# The plain family: a long reduced axis comes with small other sides (2^17 before: about 11 % of a
# standard run's elements, for no bug that a long axis alone or another family misses).
MAX_ELEMENTS = 1 << 15
MAX_SLICES = 512  # the plain family: high ranks test indexing, not volume
ELEMENT_BUDGET = 1 << 18  # no case of any family holds more elements
# Elements kept for each later case of a batch (at least every family's fixed extents, a
# wide-inner width of 4096 over two rows). Measured: at 2^13 to 2^15 the budget redrew enough of
# the largest shapes in later cases that a seed lost a grid-limit detection; at 2^16 it redraws
# only in batches of several big cases, and the size bugs of zoo/ are caught as without it.
RESERVE = 1 << 16
SHORT = (2, 256)
LONG = (257, 65536)
VERY_LONG = (65537, 140000)  # beyond 65,536: the grid or index width limit of some kernels
RANKS = weighted((1, 6), (2, 6), (3, 5), (4, 4), (5, 2), (6, 2), (7, 1), (8, 2))
SIDES = weighted((1, 5), (2, 4), (3, 3), (4, 2), (5, 1), (7, 1))
LENGTH_CLASSES = weighted(("1", 4), ("short", 22), ("long", 4), ("very-long", 1))
# Ordered by the size of each family's smallest shape: the shrinker, lowering the family's byte,
# moves a counterexample toward the families with smaller shapes.
SHAPE_FAMILIES = weighted(("plain", 34), ("batch-classes", 2), ("wide-inner", 3), ("middle-axis", 1),
                          ("many-slices", 2), ("tiles", 7))
PLAIN_ONLY = ("plain",)

MANY_SLICES = (1000, 100000)
SHORT_AXIS = (2, 8)  # the reduced axis of many-slices and wide-inner cases
LANES = (8, 16, 32)
WIDTH = (8, 4096)
# How far a width sits from a multiple of its lane count: on it, one past it, one short of it
# (over the next multiple down), half a lane past, a full lane less one past.
LANE_OFFSETS = weighted((0, 3), (1, 2), (-1, 2), ("half", 1), ("last", 1))
BATCH = (1, 4096)
CLASSES = (2, 1000)
OUTER = (2, 512)
MIDDLE_AXIS = (2, 64)
INNER = (8, 512)
SMALL_SIDES = weighted((1, 4), (2, 2), (3, 1))
SLICE_CLASSES = ((0, "0"), (1, "1"), (512, "2-512"), (8192, "513-8192"))


# --- tiles: the reduced length drawn together with the inner extent or the slice count -----------

# Log-scale buckets of an extent (L: the reduced length; I: the inner extent, the product of the
# dimensions after the axis; S: the slice count, the product of all the others): the top one is
# bounded by the budget alone.
BUCKETS = ((1, 1), (2, 7), (8, 63), (64, 511), (512, 4095), (4096, ELEMENT_BUDGET))
BUCKET_NAMES = ("1", "2-7", "8-63", "64-511", "512-4095", "4096+")
# Every pair of buckets (L's, then I's or S's; indices into BUCKETS) whose smallest extents fit the budget.
REACHABLE = tuple((a, b) for a in range(len(BUCKETS)) for b in range(len(BUCKETS))
                  if BUCKETS[a][0] * BUCKETS[b][0] <= ELEMENT_BUDGET)
TILE_TARGETS = tuple(  # (pair kind, L bucket, I or S bucket)
    (kind, a, b) for kind in ("inner", "slices") for a, b in REACHABLE)
TILE_RANKS = weighted((2, 3), (3, 3), (4, 2), (5, 1), (6, 1), (7, 1), (8, 1))
TILE_SIDES = (1, 1, 2, 3)  # the other dimensions of a side, two bits each
OUTER_MAX = 4  # the free outer extent of an (L, I) tile: a few outer slices, so S differs from I


def fitting(target: tuple[str, int, int], budget: int) -> tuple[str, int, int]:
    """A tile target whose smallest extents fit ``budget``: the target itself, else with its
    larger bucket lowered until it fits. Picking from the full table and lowering only what does
    not fit leaves every other case of a batch as it would be without a budget."""
    kind, reduced, other = target
    while BUCKETS[reduced][0] * BUCKETS[other][0] > budget:
        reduced, other = (reduced - 1, other) if reduced >= other else (reduced, other - 1)
    return kind, reduced, other


def batch_budget(batch: int, largest: int = ELEMENT_BUDGET) -> int:
    """The elements the cases of one batch hold together: one case of the ``largest`` size and the
    reserve of each other case. A test's total is then bounded by its batches, and a batch still
    reaches every shape a lone case reaches, in its first case at least."""
    return largest + (batch - 1) * RESERVE


def case_budget(left: int, later: int, largest: int = ELEMENT_BUDGET) -> int:
    """The elements a case of a batch may hold: what the batch has ``left``, less the reserve of
    the ``later`` cases still to draw, never more than ``largest``."""
    return min(largest, left - later * RESERVE)


def in_budget(pieces: Sequence[bytes], make: Callable[[bytes, int], T], elements: Callable[[T], int],
              largest: int = ELEMENT_BUDGET) -> list[T]:
    """One batch: ``make`` (piece, element budget) each piece in order, with what the batch's
    budget has left for it; ``elements`` counts what a made one holds."""
    made, left = [], batch_budget(len(pieces), largest)
    for k, piece in enumerate(pieces):
        one = make(piece, case_budget(left, len(pieces) - 1 - k, largest))
        left -= elements(one)
        made.append(one)
    return made


def bucket(extent: int) -> str:
    """The bucket name of an extent: ``0`` for an empty one, then ``1`` ... ``4096+``."""
    if extent < 1:
        return "0"
    return next((name for (_, high), name in zip(BUCKETS, BUCKET_NAMES, strict=True) if extent <= high),
                BUCKET_NAMES[-1])


def extents(shape: tuple[int, ...], axis: int) -> tuple[int, int, int]:
    """(L, I, S) of a shape reduced over ``axis``."""
    inner = math.prod(shape[axis + 1:])
    return shape[axis], inner, math.prod(shape[:axis]) * inner


def length_class(n: int) -> str:
    """The ``axis-length`` tag value of a reduced axis of length ``n``."""
    if n <= 1:
        return str(n)
    return "short" if n <= SHORT[1] else "long" if n <= LONG[1] else "very-long"


def slices_class(slices: int) -> str:
    """The ``slices`` tag value: how many slices (outputs) a case reduces."""
    return next((name for bound, name in SLICE_CLASSES if slices <= bound), "8193+")


def inner_width_class(inner: int) -> str:
    """The ``inner-width`` tag value of the contiguous run of elements after the reduced axis
    (1 when the last axis is reduced): where a vectorised kernel's lanes and tail fall."""
    if inner < 8:
        return str(inner) if inner <= 1 else "2-7"
    lane = next((lane for lane in reversed(LANES) if inner % lane == 0), None)
    return f"multiple-of-{lane}" if lane else "not-multiple-of-8"


SHAPE_TAG_KEYS = ("axis-length:", "zero-size:", "slices:", "inner-width:", "L:", "I:", "S:")


def shape_tags(shape: tuple[int, ...], axis: int) -> list[str]:
    """The ``axis-length``, ``zero-size``, ``slices`` and ``inner-width`` tags of a shape reduced
    over ``axis``, and the buckets of its extents (``L:``, ``I:``, ``S:``)."""
    n, inner, slices = extents(shape, axis)
    return [f"axis-length:{length_class(n)}", f"zero-size:{'yes' if slices == 0 else 'no'}",
            f"slices:{slices_class(slices)}", f"inner-width:{inner_width_class(inner)}",
            f"L:{bucket(n)}", f"I:{bucket(inner)}", f"S:{bucket(slices)}"]


def length_in(bounds: tuple[int, int], choices: Choices) -> int:
    """A length in ``bounds``, spread log-uniformly and monotone in its two bytes, so that
    shrinking finds the shortest length that still fails."""
    low, high = bounds
    if high <= low:
        return low
    return min(high, int(low * math.exp(math.log(high / low) * choices.u16() / 65536)))


def reduced_length(choices: Choices, classes: tuple[str, ...] = LENGTH_CLASSES) -> int:
    """Three bytes: the length class, then the length inside it."""
    kind = choices.pick(classes)
    bounds = {"short": SHORT, "long": LONG, "very-long": VERY_LONG}.get(kind)
    value = choices.region(2)
    return 1 if bounds is None else length_in(bounds, value)


def lane_width(choices: Choices, bounds: tuple[int, int] = WIDTH) -> int:
    """Four bytes: a lane count (8, 16, 32), a multiple of it (log-spread, two bytes) and an
    offset from that multiple; all-zero bytes give 8."""
    lane = choices.pick(LANES)
    low, high = bounds
    multiple = length_in((max(1, low // lane), max(1, high // lane)), choices.region(2))
    offset = choices.pick(LANE_OFFSETS)
    offset = {"half": lane // 2, "last": lane - 1}.get(offset, offset)
    return max(low, min(high, lane * multiple + offset))


def _small(choices: Choices, count: int) -> list[int]:
    return [SMALL_SIDES[b * len(SMALL_SIDES) >> 8] for b in choices.take(count)]


def _plain(c: Choices, rank: int, axis: int, classes: tuple[str, ...], zero_dims: bool, budget: int) -> list[int]:
    """Three bytes for the reduced length, eight for the sides (fixed, whatever the rank), then
    two for an optional zero-size dimension on a non-reduced axis."""
    n = min(reduced_length(c.region(3), classes), budget)
    sides = [SIDES[b * len(SIDES) >> 8] for b in c.take(MAX_RANK)]
    zero = c.chance(8)
    zero_at = c.byte()
    shape, room = [], max(1, min(MAX_SLICES, min(MAX_ELEMENTS, budget) // max(n, 1)))
    for dim in range(rank):
        if dim == axis:
            shape.append(n)
            continue
        side = min(sides[dim], room)
        room = max(1, room // side)
        shape.append(side)
    others = [d for d in range(rank) if d != axis]
    if zero_dims and zero and others:
        shape[others[zero_at * len(others) >> 8]] = 0
    return shape


def _spread(total: int, dims: list[int], shape: list[int], c: Choices) -> None:
    """Sides for ``dims`` multiplying to at most ``total`` (>= 1): small ones first, the rest on the last."""
    for dim, side in zip(dims[:-1], _small(c, len(dims) - 1), strict=True):
        shape[dim] = min(side, total)
        total = max(1, total // shape[dim])
    shape[dims[-1]] = total


def _many_slices(c: Choices, rank: int, axis: int, classes: tuple[str, ...], zero_dims: bool,
                 budget: int) -> list[int]:
    n = length_in(SHORT_AXIS, c.region(2))
    slices = min(length_in(MANY_SLICES, c.region(2)), budget // n)
    shape = [n] * rank
    _spread(slices, [d for d in range(rank) if d != axis], shape, c.region(3))
    return shape


def _wide_inner(c: Choices, rank: int, axis: int, classes: tuple[str, ...], zero_dims: bool,
                budget: int) -> list[int]:
    width = lane_width(c.region(4))
    n = min(length_in(SHORT_AXIS, c.region(2)), budget // width)
    shape = [1] * rank
    shape[axis], shape[-1] = n, width
    budget //= n * width
    # three side bytes whatever the rank (fixed offsets): only the first rank - 2 are used
    for dim, side in zip([d for d in range(rank - 1) if d != axis], _small(c, 3), strict=False):
        shape[dim] = min(side, budget)
        budget = max(1, budget // shape[dim])
    return shape


def _batch_classes(c: Choices, rank: int, axis: int, classes: tuple[str, ...], zero_dims: bool,
                   budget: int) -> list[int]:
    count = length_in(CLASSES, c.region(2))
    return [min(length_in(BATCH, c.region(2)), budget // count), count]


def _middle_axis(c: Choices, rank: int, axis: int, classes: tuple[str, ...], zero_dims: bool,
                 budget: int) -> list[int]:
    inner = lane_width(c.region(4), INNER)
    n, outer, before = length_in(MIDDLE_AXIS, c.region(2)), length_in(OUTER, c.region(2)), c.region(2)
    shape = [1] * rank
    shape[-1] = inner
    for dim, side in zip(range(axis + 1, rank - 1), _small(c, 2), strict=False):  # two bytes, rank aside
        shape[dim] = side
    after = math.prod(shape[axis + 1:])
    shape[axis] = n = max(1, min(n, budget // after))
    _spread(min(outer, max(1, budget // (n * after))), list(range(axis)), shape, before)
    return shape


def extent_in(choices: Choices, low: int, high: int) -> int:
    """Four bytes: an extent in [low, high], log-spread; from 8 on, on a lane boundary or just off it."""
    if high < 8:
        return length_in((low, max(low, high)), choices.region(2))
    return max(low, min(high, lane_width(choices, (low, high))))


def _fill(dims: list[int], bounds: tuple[int, int], sides: list[int], c: Choices, shape: list[int]) -> int:
    """Sides for ``dims`` multiplying to an extent within ``bounds``: small ``sides`` on all but the
    last while they leave room for it, the last drawn from what remains (lane-aligned: it is the
    innermost). Returns the product."""
    low, high = bounds
    product = 1
    for dim, side in zip(dims[:-1], sides, strict=False):
        fits = -(-low // (product * side)) * product * side <= high
        shape[dim] = side if fits else 1
        product *= shape[dim]
    if dims:
        shape[dims[-1]] = extent_in(c, -(-low // product), high // product)
        product *= shape[dims[-1]]
    return product


def _drawn(index: int) -> tuple[int, int]:
    """The range a bucket's extents are drawn from: a factor of 8, like every bucket but the top
    one, which is drawn over its first factor of 8 only (longer reduced axes come from the plain
    family, more slices from many-slices): the tile pairs then cost no more than they need."""
    low, high = BUCKETS[index]
    return low, min(high, 8 * low - 1)


def _tiles(c: Choices, rank: int, axis: int, classes: tuple[str, ...], zero_dims: bool, budget: int) -> list[int]:
    """A bucket pair first, (L, I) or (L, S), uniformly over the pairs that fit ELEMENT_BUDGET
    (lowered where the case's budget is smaller: ``fitting``); then L (four bytes), the other
    extent spread over its side of the axis (four bytes, and two for the small sides), and for an
    (L, I) pair a free outer extent (two bytes). Reducing the first axis makes S = I, reducing the
    last makes I = 1: the pair is then read on the side there is."""
    kind, reduced, other = fitting(c.pick(TILE_TARGETS), budget)
    length_c, other_c, outer_c, side_bits = c.region(4), c.region(4), c.region(2), c.u16()
    sides = [TILE_SIDES[side_bits >> 2 * k & 3] for k in range(MAX_RANK)]
    before, after = list(range(axis)), list(range(axis + 1, rank))
    primary = after if (kind == "inner" and after) or not before else before
    (low, high), (n_low, n_high) = _drawn(other), _drawn(reduced)
    shape = [1] * rank
    shape[axis] = n = extent_in(length_c, n_low, min(n_high, budget // low))
    drawn = _fill(primary, (low, min(high, budget // n)), sides, other_c, shape)
    if primary is after:  # the outer extent is free; an (L, S) pair keeps S in its bucket (I = 1)
        _fill(before, (1, min(OUTER_MAX, budget // (n * drawn))), sides[4:], outer_c, shape)
    return shape


Build = Callable[[Choices, int, int, tuple[str, ...], bool, int], list[int]]


@dataclass(frozen=True)
class ShapeFamily:
    """How a family draws its rank, which dimensions it may reduce, and its sides."""

    ranks: tuple[int, ...]
    reducible: Callable[[int], range]  # rank -> the dimensions the reduced axis may be
    build: Build  # (choices, rank, reduced dimension, length classes, zero dims allowed, element budget) -> shape

    def shape(self, raw: bytes, rank: int, axis: int, classes: tuple[str, ...], zero_dims: bool,
              budget: int) -> list[int]:
        """The shape ``raw`` gives without a budget where it fits ``budget``, else the one drawn
        within it: a budget changes only the cases too big for it."""
        shape = self.build(Choices(raw), rank, axis, classes, zero_dims, ELEMENT_BUDGET)
        if math.prod(shape) <= budget:
            return shape
        return self.build(Choices(raw), rank, axis, classes, zero_dims, budget)


FAMILIES: dict[str, ShapeFamily] = {
    "plain": ShapeFamily(RANKS, range, _plain),
    "many-slices": ShapeFamily(weighted((2, 3), (3, 2), (4, 1)), range, _many_slices),
    "wide-inner": ShapeFamily(weighted((2, 3), (3, 2), (4, 1)), lambda rank: range(rank - 1), _wide_inner),
    "batch-classes": ShapeFamily((2,), range, _batch_classes),
    "middle-axis": ShapeFamily(weighted((3, 3), (4, 1), (5, 1)), lambda rank: range(1, rank - 1), _middle_axis),
    "tiles": ShapeFamily(TILE_RANKS, range, _tiles),
}
FAMILY_BYTES = 13  # the most any family's build reads (plain: 3 + 8 + 2; tiles: 1 + 4 + 4 + 2 + 2)
