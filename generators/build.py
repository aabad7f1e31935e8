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

from spec import TensorType, Version

from .attributes import attribute_tags, listed_attributes, reduced_axis
from .choices import Choices, weighted
from .shapes import LENGTH_CLASSES, RANKS, length_class, other_sides, reduced_length
from .values import Pools, comparable, distinct_values, pools, special_tags, step_down, tie_tags

REGIONS = (16, 8, 32, 8)  # shape, attributes, values, family-specific extras
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
}
POSITIONS = weighted(("anywhere", 4), ("start", 2), ("end", 3), ("middle", 1))
FAMILY_WEIGHTS = (("ties", 6), ("all-equal", 4), ("mixed", 5), ("extreme", 3), ("signed-zero", 3),
                  ("subnormal", 3), ("detour", 4), ("far-apart", 2))
FAR_CLASSES = weighted(("long", 4), ("very-long", 1))


def regions(raw: bytes) -> tuple[Choices, ...]:
    whole = Choices(raw)
    return tuple(whole.region(size) for size in REGIONS)


def _background_pool(family: str, pool: Pools) -> np.ndarray | None:
    return {"ties": pool.ordinary, "far-apart": pool.ordinary, "all-equal": pool.constants,
            "mixed": pool.everything, "extreme": pool.extreme, "signed-zero": pool.zeros,
            "subnormal": pool.subnormal, "detour": pool.detour}[family]


@cache
def families(tensor_type: TensorType) -> tuple[str, ...]:
    """The value families this type has (no subnormals for integers, no detour for int8)."""
    pool = pools(tensor_type)
    return weighted(*((f, w) for f, w in FAMILY_WEIGHTS if _background_pool(f, pool) is not None))


def empty_inputs_defined(version: Version) -> bool:
    """False where a rejection or undefined clause covers every empty input (ArgMin-11)."""
    return not any(c.when and "size" in c.when for c in version.clauses if c.kind != "semantic")


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
    return offset * n >> 16


@lru_cache(maxsize=8192)
def _plant_value(tensor_type: TensorType, family: str, pattern_bits: bytes, mode: str, pick: int) -> np.generic:
    """The planted value for a background pattern (cached: patterns recur, and stepping to the
    next representable value costs a few numpy calls)."""
    pattern = np.frombuffer(pattern_bits, tensor_type.dtype)
    lowest = pattern[int(np.argmin(comparable(pattern, tensor_type)))]
    if mode == "flip":  # the same value with the other sign: a -0/+0 tie where the minimum is zero
        return -lowest
    if mode == "below":
        below = step_down(lowest, tensor_type)
        return lowest if below is None else below
    pool = _background_pool(family, pools(tensor_type))
    return lowest if mode == "equal" else pool[pick * len(pool) >> 8]


def _survivors(pattern: np.ndarray, size: int, shape: tuple[int, ...], axis: int, planted: set[int]) -> np.ndarray:
    """The pattern values still present after planting. A value survives when one of its tiled
    positions lies outside the planted positions; a few candidates usually prove it, and the
    rare undecided value is settled by scanning (see the caller)."""
    stride, n, length = math.prod(shape[axis + 1:]), shape[axis], len(pattern)
    keep = []
    for j in range(min(length, size)):
        for f in range(j, min(size, j + 64 * length), length):
            if (f // stride) % n not in planted:
                keep.append(j)
                break
        else:
            return np.empty(0, pattern.dtype)  # undecided
    return pattern[keep]


def values(tensor_type: TensorType, shape: tuple[int, ...], axis: int, family: str,
           c: Choices) -> tuple[np.ndarray, np.ndarray]:
    """The tensor of one family, and the values it holds (for the tags: derived from how it was
    built, since scanning a tensor costs more than building it)."""
    pool = pools(tensor_type)
    background = _background_pool(family, pool)
    length = 1 if family == "all-equal" else c.pick(PATTERN_LENGTHS)
    picks = [c.byte() for _ in range(8)]
    pattern = background[[b * len(background) >> 8 for b in picks[:length]]]
    negative_zero = c.chance(25)
    if family == "signed-zero":  # zeros of one sign in the background (+0 mostly), the other sign planted
        pattern[pattern == 0] = -pattern.dtype.type(0) if negative_zero else pattern.dtype.type(0)
    size = math.prod(shape)
    data = np.empty((-(-size // length), length), pattern.dtype)
    data[...] = pattern
    data = data.reshape(-1)[:size].reshape(shape)
    counts, modes = PLANTING.get(family, (PLANT_COUNTS, PLANT_VALUES))
    count, plant_mode, plant_pick = c.pick(counts), c.pick(modes), c.byte()
    n = shape[axis]
    if family == "all-equal" or size == 0:
        return data, pattern[:min(size, length)]
    positions = set()
    for k in range(6):
        slot = c.region(3)
        mode, offset = slot.pick(POSITIONS), slot.u16()
        if family == "far-apart":
            mode = "start" if k % 2 == 0 else "end"
        if k < count:
            positions.add(_position(mode, offset, n))
    if not positions:
        return data, pattern[:min(size, length)]
    index = [slice(None)] * len(shape)
    index[axis] = sorted(positions)
    planted = np.array([_plant_value(tensor_type, family, pattern.tobytes(), plant_mode, plant_pick)], data.dtype)
    data[tuple(index)] = planted[0]
    survivors = _survivors(pattern, size, shape, axis, positions)
    if survivors.size == 0 and len(positions) < n:
        survivors = distinct_values(data)
    return data, np.concatenate([survivors, planted])


@dataclass(frozen=True)
class Layout:
    """The structural choices of a case: everything but the values."""

    rank: int
    axis: int  # the reduced dimension
    axis_attribute: int | None  # None: omitted
    axis_form: str
    family: str
    shape: tuple[int, ...]


def layout(version: Version, tensor_type: TensorType, raw: bytes, *, zero_dims: bool,
           classes: tuple[str, ...] = LENGTH_CLASSES) -> Layout:
    """Shape, axis and value family; ``zero_dims``: whether a non-reduced dimension may be zero
    (see ``empty_inputs_defined``)."""
    shape_c, _, value_c, _ = regions(raw)
    rank = shape_c.pick(RANKS)
    axis, axis_attribute, axis_form = reduced_axis(version, rank, shape_c.region(2))
    family = value_c.pick(families(tensor_type))
    n = reduced_length(shape_c.region(3), FAR_CLASSES if family == "far-apart" else classes)
    shape = other_sides(shape_c.region(10), rank, axis, n, zero_dims)
    return Layout(rank, axis, axis_attribute, axis_form, family, tuple(shape))


def draft(version: Version, tensor_type: TensorType, raw: bytes, *, zero_dims: bool,
          classes: tuple[str, ...] = LENGTH_CLASSES) -> Draft:
    """A valid input of ``tensor_type`` and its tags."""
    plan = layout(version, tensor_type, raw, zero_dims=zero_dims, classes=classes)
    _, attr_c, value_c, _ = regions(raw)
    value_c.byte()  # the family, read by layout
    attributes = {} if plan.axis_attribute is None else {"axis": plan.axis_attribute}
    attributes.update(listed_attributes(version, attr_c))
    data, used = values(tensor_type, plan.shape, plan.axis, plan.family, value_c)
    n = plan.shape[plan.axis]
    tags = [f"dtype:{tensor_type.name}", f"rank:{plan.rank}", f"axis:{plan.axis_form}",
            *attribute_tags(version, attributes), f"axis-length:{length_class(n)}",
            f"zero-size:{'yes' if data.size == 0 else 'no'}", f"family:{plan.family}",
            *tie_tags(data, plan.axis, tensor_type), *special_tags(used, pools(tensor_type))]
    return Draft(data, plan.axis, attributes, tags)
