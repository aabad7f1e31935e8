"""The public strategies: valid inputs, inputs a version must reject, and census inputs.

Each strategy draws one fixed-size byte string (see choices.py for why and how it shrinks) and
decodes it into a Case. Which invalid and undefined families exist, and their exact bounds,
come from the clauses' ``when`` conditions in the spec files, so a new clause of a known
condition needs no change here.

Tags (``key:value``; a key may carry several values on one case). Reports draw their coverage
heatmap from these keys, so they are stable:

- ``type:<ONNX type name>``; ``rank:<0..8>``
- ``axis:omitted|positive|negative`` (valid axes); ``axis:above-range|below-range`` (rejection,
  and below-range for ArgMin-1's undefined negative axis, with ``axis:from-end`` where it is in
  [-r, -1], which has a reading counted from the end)
- ``keepdims:omitted|<value>`` and ``select_last_index:omitted|<value>`` where the version
  declares the attribute (values outside {0, 1} occur in the census only)
- ``axis-length:0|1|short|long|very-long`` (short <= 256 < long <= 65,536 < very-long)
- ``zero-size:yes|no`` (a zero-size dimension other than the reduced axis)
- ``shape:plain|many-slices|wide-inner|batch-classes|middle-axis|tiles`` (the shape family, see shapes.py)
- ``slices:0|1|2-512|513-8192|8193+`` (how many slices are reduced: the output's size)
- ``inner-width:1|2-7|multiple-of-32|multiple-of-16|multiple-of-8|not-multiple-of-8`` (the
  elements after the reduced axis, which a vectorised kernel walks in lanes: 1 when the last
  axis is reduced)
- ``L:``, ``I:``, ``S:`` with ``0|1|2-7|8-63|64-511|512-4095|4096+``: the log-scale buckets of the
  reduced length, the inner extent (the product of the dimensions after the axis) and the slice
  count (of all the other dimensions: the output's size), which the report's tile grid counts
- ``family:ties|all-equal|mixed|extreme|top|signed-zero|subnormal|detour|far-apart`` (how the values
  were built)
- ``ties:none|two|several|all-equal`` (how many minima the first slice holds, or all of it
  equal), plus ``ties:far-apart`` when two of them are >= 256 positions apart and ``ties:straddle``
  when two neighbours sit on either side of a multiple of 8 (see build.BOUNDARIES); the planted
  values sit at the same positions in every slice, so the first slice stands for all
- ``special:inf|neg-zero|subnormal|extreme`` (the values held); ``special:beyond-<type>`` (values
  the same-width float type <type> cannot hold, e.g. bfloat16 beyond float16's range);
  ``special:precision-<bits>`` (integers that differ only below the precision of a same-width
  float, e.g. precision-64 for int64/uint64 next to float64)
- rejection cases: ``reject:axis|rank-0|type|attribute`` and ``clause:<id>``; ``type:`` names
  the type outside T, ``rank:0`` the rank-0 input, ``undeclared:elsewhere|near-miss|random`` where
  the undeclared attribute's name came from (another version's, a misspelt one, any identifier)
- undefined cases: ``topic:<clause id>``; NaN cases add ``nan-position:first|middle|last|all``
  (and drop ``ties:``); empty ones carry ``axis-length:0`` or ``zero-size:yes``"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from spec import Clause, SpecError, TensorType, VersionSpec, outside_types

from .attributes import undeclared_attribute
from .build import REGIONS, SIZE, Draft, draft, empty_inputs_defined, regions, tiled
from .case import Batch, Case
from .choices import Choices, weighted
from .schedule import Entry
from .shapes import ELEMENT_BUDGET, LONG, PLAIN_ONLY, SHAPE_TAG_KEYS, in_budget, shape_tags

SMALL_CLASSES = weighted(("1", 1), ("short", 3))  # bases of rejection cases stay small
# Rejection and census cases are about an invalid or undefined feature, not volume (and the
# census asks each twice): they stay within long axes, 65,536 elements.
LARGEST_INVALID = LONG[1]
OFFSETS = weighted((0, 5), (1, 2), (2, 1), (5, 1), (1000, 1))  # how far outside a range
NAN_PLACES = weighted(("first", 2), ("middle", 2), ("last", 2), ("all", 1), ("several", 2))


def _type(vspec: VersionSpec, type_name: str) -> TensorType:
    try:
        return vspec.type(type_name)
    except KeyError:
        raise SpecError(f"{type_name!r} is not in ArgMin-{vspec.version}'s T; "
                        f"choose one of {', '.join(vspec.type_names)}") from None


def _condition(clause: Clause) -> str:
    (condition, _), = clause.when.items()
    return condition


def _case(vspec: VersionSpec, d: Draft, intent: str, extra: list[str]) -> Case:
    return Case(vspec.version, d.data, d.attributes, tuple(d.tags + extra), intent)


BATCH = 8  # cases per Hypothesis example in the suites (see _decoded)
Build = Callable[[bytes, int], Case]  # (the case's bytes, its element budget) -> the case


@functools.cache
def _mask(index: int, size: int) -> np.ndarray:
    return np.frombuffer(hashlib.shake_256(f"batch piece {index}".encode()).digest(size), dtype=np.uint8)


def _masked(piece: bytes, index: int) -> bytes:
    """Piece ``index`` of a batch draw as its case reads it: the first as drawn (the all-zero
    draw still gives the simplest input once), the others XORed with a mask of their own."""
    return piece if index == 0 else (np.frombuffer(piece, dtype=np.uint8) ^ _mask(index, len(piece))).tobytes()


@dataclass(frozen=True)
class Decoder:
    """How a strategy makes its batches: ``size`` bytes, decoded into a Batch by ``decode``.
    Hypothesis draws the bytes (``strategy``); a stratified quota (generators.quotas) draws
    them from a seeded generator of its own and keeps the cases that cover its strata."""

    size: int
    decode: Callable[[bytes], Batch]

    @property
    def strategy(self) -> st.SearchStrategy:
        return st.binary(min_size=self.size, max_size=self.size).map(self.decode)


def _one(build: Build, largest: int) -> Build:
    """``build`` keyed by its bytes (and, below the largest, its budget: part of its origin)."""
    def decode(raw: bytes, budget: int) -> Case:
        origin = raw if budget == largest else raw + budget.to_bytes(4, "big")
        return build(raw, budget).decoded_from(origin)
    return decode


def _decoded(size: int, build: Build, batch: int | None, largest: int = ELEMENT_BUDGET) -> st.SearchStrategy:
    """Cases built from fixed-size byte draws: one Case per example, or with ``batch`` a Batch
    (a tuple) of that many independent cases per example (see ``_decoder``)."""
    if batch is None:
        decode = _one(build, largest)
        return st.binary(min_size=size, max_size=size).map(lambda raw: decode(raw, largest))
    return _decoder(size, build, batch, largest).strategy


def _decoder(size: int, build: Build, batch: int, largest: int = ELEMENT_BUDGET) -> Decoder:
    """Batches of ``batch`` cases, each built from its piece of one fixed-size byte draw.
    Hypothesis charges about 0.35 ms per example whatever it draws, more than building and
    judging one of our cases, so a batch pays it once for all. The batch is one draw cut into
    pieces, not one draw per case: Hypothesis copies draws of the same strategy onto each other
    to make duplicates, which would leave most cases of a batch equal. Every piece after the
    first is read through a fixed mask of its own (``_masked``): Hypothesis tries the all-zero
    draw first, which would otherwise make a whole batch of the simplest input, and a test of
    few large batches would lose one of them to it.

    The cases of a batch share one element budget (shapes.batch_budget) per BATCH cases, spent
    in order: a case drawn after big ones is drawn smaller, so a test's total is bounded by its
    examples. No case holds more than ``largest`` elements."""
    if batch < 1:
        raise ValueError(f"batch={batch}: a batch holds at least one case")
    decode = _one(build, largest)

    def decode_batch(raw: bytes) -> Batch:
        pieces = [_masked(raw[start:start + size], index) for index, start in enumerate(range(0, size * batch, size))]
        # A larger batch (packed forms draw 32) shares budgets as so many batches of BATCH: its
        # cases are as large as theirs would be.
        return Batch(case for start in range(0, batch, BATCH)
                     for case in in_budget(pieces[start:start + BATCH], decode, lambda case: case.data.size, largest))

    return Decoder(size * batch, decode_batch)


def semantic_cases(vspec: VersionSpec, type_name: str, *, batch: int | None = None,
                   schedule: tuple[Entry, ...] = ()) -> st.SearchStrategy:
    """Valid inputs of one type: the oracle classifies every one as semantic. They never read
    the family-specific extras (the last region), so they do not draw it: Hypothesis charges
    per drawn byte. ``batch``: see ``_decoded``; ``schedule``: the signatures (and shapes) every
    case is drawn within (generators.schedule)."""
    return _decoded(SIZE - REGIONS[-1], _semantic_build(vspec, type_name, schedule), batch)


def semantic_decoder(vspec: VersionSpec, type_name: str, batch: int) -> Decoder:
    """``semantic_cases``' batches, for a stratified quota."""
    return _decoder(SIZE - REGIONS[-1], _semantic_build(vspec, type_name), batch)


def _semantic_build(vspec: VersionSpec, type_name: str, schedule: tuple[Entry, ...] = ()) -> Build:
    tensor_type, zero_dims = _type(vspec, type_name), empty_inputs_defined(vspec)
    return lambda raw, budget: _case(vspec, draft(vspec, tensor_type, raw, zero_dims=zero_dims, budget=budget,
                                                  schedule=schedule), "semantic", [])


# --- rejection --------------------------------------------------------------------------------

def _axis_outside(vspec: VersionSpec, clause: Clause, d: Draft, c: Choices) -> list[str]:
    condition = _condition(clause)
    side = {"axis_above_range": "above", "axis_below_range": "below"}.get(condition) or c.pick(("above", "below"))
    low, high = vspec.attributes["axis"].range.bounds(d.data.ndim)
    offset = c.pick(OFFSETS)
    d.attributes["axis"] = high + 1 + offset if side == "above" else low - 1 - offset
    return ["reject:axis", f"axis:{side}-range"]


def _rank_zero(vspec: VersionSpec, d: Draft, c: Choices) -> list[str]:
    d.data = d.data.reshape(-1)[:1].reshape(())
    d.attributes.pop("axis", None)
    if c.chance(50):
        d.attributes["axis"] = vspec.attributes["axis"].default
    d.tags = [t for t in d.tags
              if not t.startswith(("rank:", "axis:", "ties:", *SHAPE_TAG_KEYS))]
    return ["rank:0", f"axis:{'positive' if 'axis' in d.attributes else 'omitted'}"]


def _outside_type(vspec: VersionSpec, d: Draft, c: Choices) -> list[str]:
    outside = c.pick(outside_types(vspec))
    small = tiled(np.array([0, 1, 2, 1], dtype=np.int8), d.data.size).reshape(d.data.shape)  # np.resize, faster
    d.data = small.astype(outside.dtype)
    d.tags = [t for t in d.tags if not t.startswith(("type:", "special:", "ties:", "family:"))]
    return ["reject:type", f"type:{outside.name}"]


def _undeclared(vspec: VersionSpec, d: Draft, c: Choices) -> list[str]:
    name, value, source = undeclared_attribute(vspec, c)
    d.attributes[name] = value
    return ["reject:attribute", f"undeclared:{source}"]


def _reject(vspec: VersionSpec, clause: Clause, d: Draft, c: Choices) -> list[str]:
    condition = _condition(clause)
    if condition.startswith("axis_"):
        return _axis_outside(vspec, clause, d, c)
    if condition == "rank":
        return ["reject:rank-0", *_rank_zero(vspec, d, c)]
    if condition == "dtype_outside":
        return _outside_type(vspec, d, c)
    return _undeclared(vspec, d, c)


REJECTION_CONDITIONS = ("axis_outside_range", "axis_above_range", "axis_below_range", "rank", "dtype_outside",
                        "undeclared_attribute")


def _known(vspec: VersionSpec, kind: str, known: tuple[str, ...]) -> tuple[Clause, ...]:
    clauses = tuple(c for c in vspec.of_kind(kind) if c.when)
    for clause in clauses:
        if _condition(clause) not in known:
            raise SpecError(f"ArgMin-{vspec.version} {clause.id}: the generators cannot build inputs for the "
                            f"condition {_condition(clause)!r}; add a builder in generators/strategies.py")
    return clauses


def rejection_cases(vspec: VersionSpec, clause_id: str | None = None, *,
                    batch: int | None = None) -> st.SearchStrategy:
    """Inputs the version must reject, each tagged with the clause it targets (only
    ``clause_id``'s inputs when given). ``batch``: see ``_decoded``."""
    return _decoded(SIZE, _rejection_build(vspec, clause_id), batch, LARGEST_INVALID)


def rejection_decoder(vspec: VersionSpec, clause_id: str | None, batch: int,
                      type_names: Sequence[str] | None = None) -> Decoder:
    """``rejection_cases``' batches, for a stratified quota; ``type_names`` (--dtypes): the claimed
    types an invalid model is drawn in (a type outside T is the clause's own, whatever they are)."""
    return _decoder(SIZE, _rejection_build(vspec, clause_id, type_names), batch, LARGEST_INVALID)


def _rejection_build(vspec: VersionSpec, clause_id: str | None, type_names: Sequence[str] | None = None) -> Build:
    clauses = _known(vspec, "rejection", REJECTION_CONDITIONS)
    if clause_id is not None:
        clauses = tuple(c for c in clauses if c.id == clause_id)
    types = tuple(t for t in vspec.types if type_names is None or t.name in type_names) or vspec.types

    def build(raw: bytes, budget: int) -> Case:
        extra = regions(raw)[3]
        clause = extra.pick(clauses)
        tensor_type = extra.pick(types)
        d = draft(vspec, tensor_type, raw, classes=SMALL_CLASSES, zero_dims=False, shapes=PLAIN_ONLY, budget=budget)
        tags = _reject(vspec, clause, d, extra)
        return _case(vspec, d, "rejection", [*tags, f"clause:{clause.id}"])

    return build


# --- undefined (census) -----------------------------------------------------------------------

def _nan(d: Draft, c: Choices) -> list[str]:
    n, place = d.data.shape[d.axis], c.pick(NAN_PLACES)
    nan = np.array(np.nan if not c.chance(25) else -np.nan).astype(d.data.dtype)
    d.data = d.data.copy()
    d.tags = [t for t in d.tags if not t.startswith("ties:") and (place != "all" or not t.startswith("special:"))]
    if place == "all":
        d.data[...] = nan
        return ["nan-position:all"]
    spots = {"first": [0], "middle": [n // 2], "last": [n - 1]}.get(place) or sorted({0, n // 2, n - 1})
    index = [slice(None)] * d.data.ndim
    index[d.axis] = spots
    d.data[tuple(index)] = nan
    return sorted({f"nan-position:{'first' if p == 0 else 'last' if p == n - 1 else 'middle'}" for p in spots})


def _empty(d: Draft, c: Choices, reduced: bool) -> list[str]:
    shape = list(d.data.shape)
    others = [k for k in range(len(shape)) if k != d.axis]
    if reduced or not others:
        shape[d.axis] = 0
    else:
        shape[others[c.byte() * len(others) >> 8]] = 0
    d.data = np.resize(d.data, shape)
    d.tags = [t for t in d.tags if not t.startswith(("ties:", "special:", *SHAPE_TAG_KEYS))]
    return shape_tags(tuple(shape), d.axis)


# Values outside an attribute's listed ones, for the census: a small fixed set (just outside the
# list on either side, a farther one, the int32 and int64 extremes, which an attribute read
# through a narrower integer would wrap). A runtime that compiles a model per attribute value
# compiles a handful per attribute, not hundreds.
OUTSIDE_VALUES = (2, -1, 7, -(2 ** 31), 2 ** 63 - 1, -(2 ** 63))


def _outside_values(vspec: VersionSpec, clause: Clause, d: Draft, c: Choices) -> list[str]:
    name = clause.when["attribute_outside_values"]
    accepted = vspec.attributes[name].values
    value = c.pick(tuple(v for v in OUTSIDE_VALUES if v not in accepted))
    d.attributes[name] = value
    d.tags = [t for t in d.tags if not t.startswith(f"{name}:")]
    return [f"{name}:{value}"]


def _below_range(vspec: VersionSpec, d: Draft, c: Choices) -> list[str]:
    low, _ = vspec.attributes["axis"].range.bounds(d.data.ndim)
    # At ArgMin-1 (range [0, r-1]) an axis in [-r, -1] has a reading (counted from the end) and
    # one below -r has none: both kinds occur often.
    d.attributes["axis"] = low - 1 - (c.byte() * d.data.ndim >> 8 if c.chance(60) else d.data.ndim + c.pick(OFFSETS))
    d.tags = [t for t in d.tags if not t.startswith("axis:")]
    return ["axis:below-range"] + (["axis:from-end"] if d.attributes["axis"] >= -d.data.ndim else [])


def _census(vspec: VersionSpec, clause: Clause, d: Draft, c: Choices) -> list[str]:
    condition = _condition(clause)
    if condition == "contains_nan":
        return _nan(d, c)
    if condition in ("reduced_axis_length", "size"):
        return _empty(d, c, reduced=condition == "reduced_axis_length")
    if condition == "attribute_outside_values":
        return _outside_values(vspec, clause, d, c)
    if condition == "axis_below_range":
        return _below_range(vspec, d, c)
    return _rank_zero(vspec, d, c)


UNDEFINED_CONDITIONS = ("contains_nan", "reduced_axis_length", "size", "attribute_outside_values",
                        "axis_below_range", "rank")


def _applies(clause: Clause, tensor_type: TensorType) -> bool:
    return _condition(clause) != "contains_nan" or tensor_type.is_float


def undefined_cases(vspec: VersionSpec, type_name: str | None = None, *, batch: int | None = None,
                    topics: tuple[str, ...] | None = None, schedule: tuple[Entry, ...] = ()) -> st.SearchStrategy:
    """Census inputs: every undefined clause with a condition, for one type or all of them.
    With a type that has no NaN the NaN family is simply absent. ``batch``: see ``_decoded``;
    ``topics``: only these clauses' inputs; ``schedule``: the signatures (and shapes) the inputs
    start from (the topic then spoils them: an empty axis, a value outside a list)."""
    return _decoded(SIZE, _undefined_build(vspec, type_name, topics, schedule), batch, LARGEST_INVALID)


def undefined_decoder(vspec: VersionSpec, type_name: str | None, batch: int, topics: tuple[str, ...] | None = None,
                      schedule: tuple[Entry, ...] = ()) -> Decoder:
    """``undefined_cases``' batches, for a stratified quota."""
    return _decoder(SIZE, _undefined_build(vspec, type_name, topics, schedule), batch, LARGEST_INVALID)


def census_topics(vspec: VersionSpec, type_name: str | None = None) -> tuple[Clause, ...]:
    """The undefined clauses a census of ``type_name`` (or of every type) draws inputs for."""
    clauses = _known(vspec, "undefined", UNDEFINED_CONDITIONS)
    fixed = None if type_name is None else _type(vspec, type_name)
    return tuple(c for c in clauses if fixed is None or _applies(c, fixed))


def census_split(vspec: VersionSpec, type_name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The census topics of one type in two: those drawn at the profile's volume (NaN, whose
    answer may depend on where in a slice it sits and what surrounds it: a kernel's lanes and
    tiles), and those a stratified quota covers (empty inputs, attribute values outside their
    lists, ArgMin-1's negative axes and rank 0: what a runtime does with them depends on the
    rank, the axis and the value, which generators.quotas covers)."""
    topics = census_topics(vspec, type_name)
    drawn = tuple(c.id for c in topics if _condition(c) == "contains_nan")
    return drawn, tuple(c.id for c in topics if c.id not in drawn)


def _undefined_build(vspec: VersionSpec, type_name: str | None, topics: tuple[str, ...] | None,
                     schedule: tuple[Entry, ...] = ()) -> Build:
    menu = tuple(c for c in census_topics(vspec, type_name) if topics is None or c.id in topics)
    if not menu:
        raise SpecError(f"ArgMin-{vspec.version} has no census topic among {topics} for {type_name}")
    fixed = None if type_name is None else _type(vspec, type_name)

    def build(raw: bytes, budget: int) -> Case:
        extra = regions(raw)[3]
        clause = extra.pick(menu)
        tensor_type = fixed or extra.pick(tuple(t for t in vspec.types if _applies(clause, t)))
        d = draft(vspec, tensor_type, raw, zero_dims=False, shapes=PLAIN_ONLY, budget=budget, schedule=schedule)
        tags = _census(vspec, clause, d, extra)
        return _case(vspec, d, "undefined", [*tags, f"topic:{clause.id}"])

    return build
