"""Schedules: the few attribute signatures (and, for a runtime that compiles per input shape, the
few shapes) a test draws all its cases within.

A runtime that compiles pays per compiled node (TVM, IREE, OpenVINO) or per input shape
(tinygrad). A test that draws every case's rank, axis, keepdims and select_last_index freely
meets a signature it has not compiled at nearly every case (720 valid signatures over ranks 1 to
8 at ArgMin-13 against a couple of hundred cases), so it compiles about one node a case. A test
that first fixes a stratified covering set of signatures (``signatures``: every rank, the first,
middle and last dimension reduced, the axis omitted, positive and negative, each keepdims and
select_last_index value, every pair of those, the special-value floor's own) and then draws its
full number of cases within it compiles one node per signature, once: shapes and values still
vary freely through a symbolic node. For a runtime that compiles per shape, each signature also
gets one shape (``shapes``), the shapes chosen to cover the shape tags (every shape family,
reduced lengths of 1, short, long and very long, inner widths, slice counts), and only the
values vary.

Every (version, type) test of a run uses the same schedule (the property test and the census's
NaN inputs meet the same compiled nodes), made from the run's seed, so a nightly run with a new
seed covers other signatures: over runs, every one. Entries are ordered simplest first (rank 1,
nothing set), so a failing case shrinks toward them."""

from __future__ import annotations

import functools
import itertools
import math
import random
from collections.abc import Iterable
from dataclasses import dataclass

import spec
from spec import VersionSpec

from .shapes import ELEMENT_BUDGET, FAMILIES, FAMILY_BYTES, LENGTH_CLASSES, MAX_RANK, RANKS, SHAPE_FAMILIES, shape_tags

# Entries per test, by profile (certify draws freely over every signature unless --schedule on).
SIZES = {"quick": 12, "standard": 24, "certify": 48}
# Shapes tried per entry when shapes are scheduled; the cover picks one of them.
SHAPE_TRIES = 8
# The shape tags a shape schedule covers, and those it keeps trying for.
SHAPE_KEYS = ("axis-length:", "shape:", "inner-width:", "slices:", "zero-size:")
SHAPE_REQUIRED = ("axis-length:1", "axis-length:long", "axis-length:very-long", "shape:wide-inner", "shape:tiles",
                  "shape:many-slices")


@dataclass(frozen=True)
class Entry:
    """One scheduled signature: the input's rank, the dimension reduced and how the axis is
    spelled, the node's attributes as set (omitted ones absent), and where shapes are scheduled,
    the input's shape and its shape family."""

    rank: int
    axis: int  # the reduced dimension
    axis_form: str  # omitted | positive | negative
    attributes: tuple[tuple[str, int], ...]
    shape: tuple[int, ...] | None = None
    shape_family: str | None = None

    @property
    def signature(self) -> tuple[int, tuple[tuple[str, int], ...]]:
        """(rank, attributes): what a compiled symbolic node is keyed by."""
        return self.rank, self.attributes


def _entry(vspec: VersionSpec, rank: int, attributes: dict[str, int]) -> Entry:
    default = vspec.attributes["axis"].default
    axis = attributes.get("axis")
    form = "omitted" if axis is None else "negative" if axis < 0 else "positive"
    return Entry(rank, (default if axis is None else axis) % rank, form, tuple(sorted(attributes.items())))


def _features(vspec: VersionSpec, entry: Entry) -> tuple[tuple[str, object], ...]:
    """What the cover looks at: the dimension reduced (first, middle, last), the axis's spelling
    and each listed attribute's value (or its omission)."""
    rank, dim = entry.rank, entry.axis
    place = "only" if rank == 1 else "first" if dim == 0 else "last" if dim == rank - 1 else "middle"
    set_ = dict(entry.attributes)
    listed = [(name, set_.get(name, "omitted")) for name in sorted(vspec.attributes)
              if vspec.attributes[name].values is not None]
    return (("dim", place), ("axis", entry.axis_form), *listed)


def _strata(vspec: VersionSpec, entry: Entry) -> set:
    """Every feature value of ``entry`` and every pair of them."""
    features = _features(vspec, entry)
    return {*features, *itertools.combinations(features, 2)}


def _rank_quotas(size: int) -> dict[int, int]:
    """Entries per rank: every rank once, the rest shared as the free draw weights the ranks."""
    counts = {rank: RANKS.count(rank) for rank in range(1, MAX_RANK + 1)}
    quotas = dict.fromkeys(counts, 1)
    extra = max(0, size - MAX_RANK)
    total = sum(counts.values())
    shares = {rank: extra * count / total for rank, count in counts.items()}
    for rank, share in shares.items():
        quotas[rank] += math.floor(share)
    left = size - sum(quotas.values())
    for rank in sorted(shares, key=lambda r: -(shares[r] - math.floor(shares[r])))[:max(0, left)]:
        quotas[rank] += 1
    return quotas


def pinned(vspec: VersionSpec) -> tuple[Entry, ...]:
    """The signatures every schedule holds: the special-value floor's (rank 1, nothing set, and
    select_last_index=1 where the version declares it)."""
    found = [_entry(vspec, 1, {})]
    if "select_last_index" in vspec.attributes:
        found.append(_entry(vspec, 1, {"select_last_index": 1}))
    return tuple(found)


@functools.lru_cache(maxsize=256)
def _signature_schedule(version: int, label: str, size: int) -> tuple[Entry, ...]:
    vspec = spec.load(version)  # cached by version: spec objects are not hashable
    rng = random.Random(f"schedule:{label}")
    candidates = {rank: [_entry(vspec, rank, a) for a in vspec.signatures(rank)] for rank in range(1, MAX_RANK + 1)}
    for entries in candidates.values():
        rng.shuffle(entries)
    chosen = list(pinned(vspec))
    uncovered = set().union(*(_strata(vspec, e) for entries in candidates.values() for e in entries))
    for entry in chosen:
        uncovered -= _strata(vspec, entry)
    quotas = _rank_quotas(size)
    quotas[1] = max(0, quotas[1] - len(chosen))
    slots = [rank for rank, count in quotas.items() for _ in range(count)]
    rng.shuffle(slots)
    for rank in slots:
        left = [e for e in candidates[rank] if e not in chosen]
        if not left:  # a rank with fewer signatures than its share (rank 1 at ArgMin-1): the highest rank's
            left = [e for e in candidates[MAX_RANK] if e not in chosen]
        best = max(left, key=lambda e: len(_strata(vspec, e) & uncovered))
        chosen.append(best)
        uncovered -= _strata(vspec, best)
    return tuple(sorted(chosen, key=lambda e: (e.rank, len(e.attributes), e.attributes)))


def signatures(vspec: VersionSpec, label: str, size: int) -> tuple[Entry, ...]:
    """``size`` signatures (at least one per rank and the floor's) covering every feature value
    and every pair of them that ``size`` allows; ``label`` (the run's seed, the version and the
    type) decides among equally good ones, so each seed covers others."""
    return _signature_schedule(vspec.version, label, size)


def _compatible(rank: int, dim: int) -> tuple[str, ...]:
    """The shape families (as SHAPE_FAMILIES weights them) that can reduce ``dim`` of ``rank``."""
    return tuple(name for name in SHAPE_FAMILIES
                 if rank in FAMILIES[name].ranks and dim in FAMILIES[name].reducible(rank))


def families_for(rank: int, dim: int) -> tuple[str, ...]:
    """The weighted shape families a case of this rank and reduced dimension draws from."""
    return _COMPATIBLE[rank, dim]


_COMPATIBLE = {(rank, dim): _compatible(rank, dim) for rank in range(1, MAX_RANK + 1) for dim in range(rank)}


def _shape_options(entry: Entry, rng: random.Random, zero_dims: bool) -> list[tuple[str, tuple[int, ...]]]:
    options = []
    for _ in range(SHAPE_TRIES):
        family = rng.choice(families_for(entry.rank, entry.axis))
        shape = FAMILIES[family].shape(rng.randbytes(FAMILY_BYTES), entry.rank, entry.axis, LENGTH_CLASSES, zero_dims,
                                       ELEMENT_BUDGET)
        options.append((family, tuple(shape)))
    return options


def _shape_strata(entry: Entry, option: tuple[str, tuple[int, ...]]) -> set[str]:
    family, shape = option
    return {tag for tag in (*shape_tags(shape, entry.axis), f"shape:{family}") if tag.startswith(SHAPE_KEYS)}


@functools.lru_cache(maxsize=256)
def _shape_schedule(version: int, label: str, size: int, zero_dims: bool) -> tuple[Entry, ...]:
    rng = random.Random(f"shapes:{label}")
    entries = _signature_schedule(version, label, size)
    options = [_shape_options(entry, rng, zero_dims) for entry in entries]
    uncovered = set().union(*(_shape_strata(e, o) for e, opts in zip(entries, options, strict=True) for o in opts))
    wanted = set(SHAPE_REQUIRED)
    order = sorted(range(len(entries)), key=lambda i: rng.random())
    picked: dict[int, tuple[str, tuple[int, ...]]] = {}
    for index in order:
        entry = entries[index]
        best = max(options[index], key=lambda o: (len(_shape_strata(entry, o) & wanted),
                                                 len(_shape_strata(entry, o) & uncovered), -math.prod(o[1])))
        picked[index] = best
        uncovered -= _shape_strata(entry, best)
        wanted -= _shape_strata(entry, best)
    chosen = [Entry(e.rank, e.axis, e.axis_form, e.attributes, picked[i][1], picked[i][0])
              for i, e in enumerate(entries)]
    return tuple(sorted(chosen, key=lambda e: (e.rank, math.prod(e.shape), len(e.attributes), e.attributes)))


def shapes(vspec: VersionSpec, label: str, size: int, zero_dims: bool) -> tuple[Entry, ...]:
    """``signatures`` each with one shape, chosen among a few drawn for it to cover the shape
    tags (every shape family, reduced lengths of 1, long and very long, inner widths, slice
    counts); ``zero_dims``: whether a non-reduced dimension may be zero (valid at this version)."""
    return _shape_schedule(vspec.version, label, size, zero_dims)


def covered(entries: Iterable[Entry]) -> dict[str, int]:
    """How many signatures and shapes a set of schedules holds (the report's run block)."""
    entries = list(entries)
    return {"signatures": len({e.signature for e in entries}),
            "shapes": len({(e.signature, e.shape) for e in entries if e.shape is not None})}
