"""Building one valid input from decoded choices: shape, axis, attributes, then values.

Values: a background pattern of one to eight pool values tiled over the tensor in C order (a
constant background gives all-equal slices), then up to six planted elements
at decoded positions along the reduced axis, in every slice (a strict minimum just below the
background, a copy of the background's minimum, or another pool value). Everything is
vectorised numpy; nothing is drawn element by element."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache, lru_cache

import numpy as np

from spec import TensorType, VersionSpec

from .attributes import attribute_tags, listed_attributes, reduced_axis
from .choices import Choices, weighted
from .schedule import Entry, families_for
from .shapes import ELEMENT_BUDGET, FAMILIES, FAMILY_BYTES, LENGTH_CLASSES, SHAPE_FAMILIES, shape_tags
from .values import Pools, comparable, pools, special_tags, step_down, tie_tags

# shape (shape family, rank, axis, the family's sides), attributes, values, extras of rejection
# and census cases
REGIONS = (4 + FAMILY_BYTES, 8, 32, 16)
SIZE = sum(REGIONS)

PATTERN_LENGTHS = weighted((1, 4), (2, 3), (3, 2), (5, 1), (8, 1))
PLANT_COUNTS = weighted((0, 3), (1, 5), (2, 4), (3, 2), (6, 1))
SOME_PLANTS = weighted((1, 2), (2, 2), (3, 1))
PLANT_VALUES = weighted(("below", 5), ("equal", 2), ("pool", 2))
# Families whose point is one particular planted value: always plant it (how many, which value).
PLANTING = {
    "far-apart": (weighted((2, 3), (3, 1)), PLANT_VALUES),
    "signed-zero": (SOME_PLANTS, ("flip",)),  # +0 background with -0 planted, or the reverse
    "subnormal": (SOME_PLANTS, weighted(("below", 3), ("pool", 1))),  # a subnormal just below its neighbour
    "detour": (SOME_PLANTS, weighted(("below", 3), ("pool", 1))),  # values a cast detour makes equal
    "top": (SOME_PLANTS, weighted(("below", 5), ("equal", 1))),  # the next value down: [inf, max], ...
}
# The top family's background: one or two values, mostly the very top (+inf for floats), so a
# slice of [inf, max] (invisible to a running minimum that starts at the maximum) is common.
TOP_LENGTHS = weighted((1, 4), (2, 1))
TOP_RANKS = weighted((0, 8), (1, 2), (2, 1), (3, 1), (4, 1), (5, 1))
POSITIONS = weighted(("anywhere", 4), ("start", 2), ("end", 3), ("middle", 1), ("boundary", 3))
# Where tiled and vectorised kernels cut a reduced axis: lane widths, cache lines, blocks, grid
# limits. When the first plant's mode is "boundary", every plant sits on either side of the same
# boundary B (B - 1, B, then 2B - 1, 2B, ...), so a tie, a -0/+0 pair or a near-tie straddles it.
BOUNDARIES = (8, 16, 32, 64, 128, 256, 512, 1024, 4096, 65536)
FAMILY_WEIGHTS = (("ties", 6), ("all-equal", 4), ("mixed", 5), ("extreme", 3), ("top", 6), ("signed-zero", 3),
                  ("subnormal", 3), ("detour", 4), ("far-apart", 2))
FAR_CLASSES = weighted(("long", 4), ("very-long", 1))


def regions(raw: bytes) -> tuple[Choices, ...]:
    whole = Choices(raw)
    return tuple(whole.region(size) for size in REGIONS)


def _background_pool(family: str, pool: Pools) -> np.ndarray | None:
    return {"ties": pool.ordinary, "far-apart": pool.ordinary, "all-equal": pool.constants,
            "mixed": pool.everything, "extreme": pool.extreme, "signed-zero": pool.zeros,
            "subnormal": pool.subnormal, "detour": pool.detour, "top": pool.top}[family]


@lru_cache(maxsize=128)
def _ranks(tensor_type: TensorType, family: str) -> tuple[int, ...]:
    """For each value of the family's background pool, its rank by value (equal values share one)."""
    pool = _background_pool(family, pools(tensor_type))
    return tuple(np.unique(comparable(pool, tensor_type), return_inverse=True)[1].reshape(-1).tolist())


@cache
def families(tensor_type: TensorType) -> tuple[str, ...]:
    """The value families this type has (no subnormals for integers, no detour for int8)."""
    pool = pools(tensor_type)
    return weighted(*((f, w) for f, w in FAMILY_WEIGHTS if _background_pool(f, pool) is not None))


def empty_inputs_defined(vspec: VersionSpec) -> bool:
    """False where a rejection or undefined clause covers every empty input (ArgMin-11)."""
    return not any(c.when and "size" in c.when for c in vspec.clauses if c.kind != "semantic")


@dataclass
class Draft:
    """A valid input under construction; rejection and undefined builders then spoil it."""

    data: np.ndarray
    axis: int  # the reduced dimension
    attributes: dict[str, int]
    tags: list[str] = field(default_factory=list)


def _position(mode: str, offset: int, n: int) -> int:
    if mode == "start":
        return min(offset % 4, n - 1)
    if mode == "end":
        return max(n - 1 - offset % 4, 0)
    if mode == "middle":
        return min(max(n // 2 - 1 + offset % 3, 0), n - 1)
    return offset * n >> 16  # anywhere (and boundary, on an axis too short for one)


def _boundary(mode: str, pick: int, n: int) -> int | None:
    """The boundary every plant straddles (one of BOUNDARIES inside the axis), or None."""
    inside = [b for b in BOUNDARIES if b < n]
    return inside[pick * len(inside) >> 8] if mode == "boundary" and inside else None


@lru_cache(maxsize=4096)
def _plant_value(tensor_type: TensorType, family: str, lowest_bits: bytes, mode: str, pick: int) -> np.generic:
    """The planted value, given the background's lowest value (cached: stepping to the next
    representable value costs a few numpy calls)."""
    lowest = np.frombuffer(lowest_bits, tensor_type.dtype)[0]
    if mode == "flip":  # the same value with the other sign: a -0/+0 tie where the minimum is zero
        return -lowest
    if mode == "below":
        below = step_down(lowest, tensor_type)
        return lowest if below is None else below
    pool = _background_pool(family, pools(tensor_type))
    return lowest if mode == "equal" else pool[pick * len(pool) >> 8]


def _survivors(pattern: np.ndarray, size: int, shape: tuple[int, ...], axis: int, planted: set[int]) -> np.ndarray:
    """The pattern values still present after planting, without scanning the tensor. Element f
    holds pattern value f % L and sits at position (f // stride) % n along the axis, so f is
    (o * n + k) * stride + m; its residue depends only on o, k and m modulo L. Enumerating o
    below L, unplanted k from the first 7 L positions (at most 6 are planted, so every residue
    class of k keeps a member there) and m below L reaches every residue that occurs."""
    stride, n, length = math.prod(shape[axis + 1:]), shape[axis], len(pattern)
    wanted, found = min(length, size), set()
    rows = [k for k in range(min(n, 7 * length)) if k not in planted]
    for o in range(min(size // (n * stride), length)):
        for k in rows:
            start = (o * n + k) * stride
            found.update((start + m) % length for m in range(min(stride, length)))
            if len(found) == wanted:
                return pattern[:wanted]
    return pattern[sorted(found)]


_BLOCK = 4096  # elements broadcast at once; longer tensors repeat whole blocks


def tiled(pattern: np.ndarray, size: int) -> np.ndarray:
    """``pattern`` repeated over ``size`` elements. Broadcasting a short pattern row by row is
    slow on long tensors, so a block is broadcast and the block then repeated."""
    length = len(pattern)
    if length == 1:
        return np.full(size, pattern[0])
    block = np.empty((-(-min(size, _BLOCK) // length), length), pattern.dtype)
    block[...] = pattern
    flat = block.reshape(-1)
    return flat[:size] if size <= flat.size else np.resize(flat, size)


def values(tensor_type: TensorType, shape: tuple[int, ...], axis: int, family: str,
           c: Choices) -> tuple[np.ndarray, np.ndarray]:
    """The tensor of one family, and the values it holds (for the tags: derived from how it was
    built, since scanning a tensor costs more than building it)."""
    pool = pools(tensor_type)
    background = _background_pool(family, pool)
    lengths = TOP_LENGTHS if family == "top" else PATTERN_LENGTHS
    length = 1 if family == "all-equal" else c.pick(lengths)
    picks = c.take(8)
    if family == "top":
        chosen = [min(TOP_RANKS[b * len(TOP_RANKS) >> 8], len(background) - 1) for b in picks[:length]]
    else:
        chosen = [b * len(background) >> 8 for b in picks[:length]]
    pattern = background[chosen]
    negative_zero = c.chance(25)
    if family == "signed-zero":  # zeros of one sign in the background (+0 mostly), the other sign planted
        pattern[pattern == 0] = -pattern.dtype.type(0) if negative_zero else pattern.dtype.type(0)
    size = math.prod(shape)
    data = tiled(pattern, size).reshape(shape)
    counts, modes = PLANTING.get(family, (PLANT_COUNTS, PLANT_VALUES))
    count, plant_mode, plant_pick = c.pick(counts), c.pick(modes), c.byte()
    n = shape[axis]
    if family == "all-equal" or size == 0:
        return data, pattern[:min(size, length)]
    positions = set()
    slots = c.take(18)
    boundary = _boundary(POSITIONS[slots[0] * len(POSITIONS) >> 8], slots[1], n)
    for k in range(count):  # six slots of three bytes: the mode, then the offset
        mode, offset = POSITIONS[slots[3 * k] * len(POSITIONS) >> 8], slots[3 * k + 1] << 8 | slots[3 * k + 2]
        if family == "far-apart":
            mode = "start" if k % 2 == 0 else "end"
        elif boundary:
            positions.add(min(boundary * (k // 2 + 1) - 1 + k % 2, n - 1))
            continue
        # the top family's point is a smaller value after the first element
        positions.add(max(_position(mode, offset, n), min(int(family == "top"), n - 1)))
    if not positions:
        return data, pattern[:min(size, length)]
    index = [slice(None)] * len(shape)
    index[axis] = sorted(positions)
    order = _ranks(tensor_type, family)  # the first lowest pattern value, found without numpy
    lowest = pattern[min(range(length), key=lambda i: order[chosen[i]])]
    planted = np.array([_plant_value(tensor_type, family, lowest.tobytes(), plant_mode, plant_pick)], data.dtype)
    data[tuple(index)] = planted[0]
    return data, np.concatenate([_survivors(pattern, size, shape, axis, positions), planted])


@dataclass(frozen=True)
class Layout:
    """The structural choices of a case: everything but the values."""

    rank: int
    axis: int  # the reduced dimension
    axis_attribute: int | None  # None: omitted
    axis_form: str
    family: str  # the value family
    shape_family: str
    shape: tuple[int, ...]


def layout(vspec: VersionSpec, tensor_type: TensorType, raw: bytes, *, zero_dims: bool,
           classes: tuple[str, ...] = LENGTH_CLASSES, shapes: tuple[str, ...] = SHAPE_FAMILIES,
           budget: int = ELEMENT_BUDGET) -> Layout:
    """Shape, axis and value family; ``zero_dims``: whether a non-reduced dimension may be zero
    (see ``empty_inputs_defined``); ``shapes``: the shape families to draw from (a weighted table);
    ``budget``: the most elements the shape may hold."""
    shape_c, _, value_c, _ = regions(raw)
    return _layout(vspec, tensor_type, shape_c, value_c, zero_dims, classes, shapes, budget)


def _layout(vspec: VersionSpec, tensor_type: TensorType, shape_c: Choices, value_c: Choices, zero_dims: bool,
            classes: tuple[str, ...], shapes: tuple[str, ...], budget: int, entry: Entry | None = None) -> Layout:
    # A scheduled shape: only the values are drawn. One larger than the case's budget (a census
    # case, which stays within long axes, or a batch whose earlier cases were large) is drawn within
    # the budget for the entry's signature instead, as a shape is drawn without a schedule.
    if entry is not None and entry.shape is not None and math.prod(entry.shape) <= budget:
        family = value_c.pick(families(tensor_type))
        return Layout(entry.rank, entry.axis, dict(entry.attributes).get("axis"), entry.axis_form, family,
                      entry.shape_family, entry.shape)
    if entry is not None:  # a scheduled signature: the shape family is drawn among those that fit it
        shapes = tuple(name for name in shapes if name in families_for(entry.rank, entry.axis)) or ("plain",)
    shape_family = shape_c.pick(shapes)
    family = value_c.pick(families(tensor_type))
    if family == "far-apart":  # its point is a long axis
        classes, shape_family = FAR_CLASSES, "plain"
    elif family == "top":  # a slice of one element holds nothing further on
        classes = tuple(k for k in classes if k != "1") or classes
    drawn = FAMILIES[shape_family]
    if entry is None:
        rank = shape_c.pick(drawn.ranks)
        axis, axis_attribute, axis_form = reduced_axis(vspec, rank, shape_c.region(2), drawn.reducible(rank))
    else:
        rank, axis, axis_attribute, axis_form = entry.rank, entry.axis, dict(entry.attributes).get("axis"), \
            entry.axis_form
        shape_c.region(3)  # the bytes a drawn rank and axis read: the shape reads the same ones either way
    shape = drawn.shape(shape_c.take(FAMILY_BYTES), rank, axis, classes, zero_dims, budget)
    return Layout(rank, axis, axis_attribute, axis_form, family, shape_family, tuple(shape))


def case_tags(vspec: VersionSpec, tensor_type: TensorType, data: np.ndarray, axis: int, axis_form: str,
              attributes: dict[str, int], family: str, shape_family: str, used: np.ndarray) -> list[str]:
    """Every tag of a valid input (see strategies.py for the keys); ``used``: the values it holds."""
    return [f"type:{tensor_type.name}", f"rank:{data.ndim}", f"axis:{axis_form}", *attribute_tags(vspec, attributes),
            *shape_tags(data.shape, axis), f"shape:{shape_family}", f"family:{family}",
            *tie_tags(data, axis, tensor_type), *special_tags(used, pools(tensor_type))]


def draft(vspec: VersionSpec, tensor_type: TensorType, raw: bytes, *, zero_dims: bool,
          classes: tuple[str, ...] = LENGTH_CLASSES, shapes: tuple[str, ...] = SHAPE_FAMILIES,
          budget: int = ELEMENT_BUDGET, schedule: tuple[Entry, ...] = ()) -> Draft:
    """A valid input of ``tensor_type`` and its tags, of at most ``budget`` elements (a
    scheduled shape is the shape it is). With a ``schedule`` (generators.schedule), the rank, the
    axis and the attributes are one of its entries, picked by the attribute bytes (all-zero: the
    first, the simplest), and so is the shape where the schedule fixes shapes."""
    shape_c, attr_c, value_c, _ = regions(raw)
    entry = schedule[attr_c.byte() * len(schedule) >> 8] if schedule else None
    plan = _layout(vspec, tensor_type, shape_c, value_c, zero_dims, classes, shapes, budget, entry)
    attributes = {} if plan.axis_attribute is None else {"axis": plan.axis_attribute}
    attributes.update(listed_attributes(vspec, attr_c) if entry is None else dict(entry.attributes))
    data, used = values(tensor_type, plan.shape, plan.axis, plan.family, value_c)
    tags = case_tags(vspec, tensor_type, data, plan.axis, plan.axis_form, attributes, plan.family,
                     plan.shape_family, used)
    return Draft(data, plan.axis, attributes, tags)
