"""Taking a failing case to its simplest form, past what Hypothesis' shrinker reaches.

Hypothesis shrinks the bytes a case is decoded from; the simplest bytes are not always the
simplest input (a shrunk int64 counterexample can still be 86 elements long, a double bug can
still be shown through subnormals). Here the input itself is simplified, keeping a candidate
only while the same clause still fails with the same problem:

1. fewer distinct values: every element one value (the simplest first), else two (the minima
   one, every other element another): a tie bug that needs only equal values shows so, and the
   shape steps then work on values that no longer tie them to one layout;
2. fewer elements on the other axes (one slice of each), then lower rank (drop them, or merge
   the axes before the reduced one and those after it): rank before length;
3. a shorter reduced axis, then fewer slices on each other axis (the shortest leading or trailing
   part that fails, by bisection; then chunks removed, halves first);
4. a simpler set of values: the distinct values mapped, in order, onto simple ladders
   (0, 1, 2, ...; or 1 and its neighbours, where precision is the point);
5. simpler values one element at a time: smaller magnitudes, normal numbers before
   subnormals, finite before infinite;
6. fewer attributes set.

The minimizer only proposes: ``proposals`` yields each candidate, simpler than the best so far,
and is sent back whether it still fails the same way (whoever asks, the session or a test, and
remembers what it has asked); the number of candidates is bounded by ``budget``. ``minimize``
tries them to the end through a ``fails`` callback."""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from functools import cache

import ml_dtypes
import numpy as np

import spec
from generators import Case
from spec.oracle import classify, order_keys

BUDGET = 300  # asks of the implementation per minimized failure
# A step of the search: it yields its candidates, each sent back whether it still fails the same way.
Steps = Generator[Case, bool, None]
Proposing = Generator[Case, bool, bool]  # one candidate's step, which returns whether it was adopted
_SMALL = (0, 1, -1, 2, -2, 3, -3, 4, -4, 5, 10, -10, 100, -100)


@cache
def _finfo(dtype: np.dtype):
    return ml_dtypes.finfo(dtype)


def value_cost(value: float | int, dtype: np.dtype) -> tuple:
    """How complicated one value is: (class, magnitude, negative), class 0 for zero and normal
    numbers, 1 for subnormals, 2 for infinities, 3 for NaN."""
    if dtype.kind in "iu":
        return 0, abs(int(value)), int(value) < 0
    wide = float(value)
    if math.isnan(wide):
        return 3, 0.0, False
    if math.isinf(wide):
        return 2, 0.0, wide < 0
    subnormal = wide != 0 and abs(wide) < float(_finfo(dtype).tiny)
    return int(subnormal), abs(wide), math.copysign(1.0, wide) < 0


def simpler(a: Case, b: Case) -> bool:
    """Whether ``a`` is simpler than ``b``: fewer elements, then lower rank, then shorter axes
    (an empty input of shape [1, 66460, 0] holds no more elements than one of [1, 1, 0]), then
    simpler values (compared from the most complicated value down), then fewer attributes set."""
    extents = [(case.data.size, case.data.ndim, sum(case.data.shape)) for case in (a, b)]
    if extents[0] != extents[1]:
        return extents[0] < extents[1]
    if a.data.dtype != b.data.dtype or a.data.tobytes() != b.data.tobytes():
        return _value_costs(a) < _value_costs(b)
    return len(a.attributes) < len(b.attributes)


def _value_costs(case: Case) -> tuple:
    """Every element's value_cost, most complicated first, as (classes, magnitudes, signs):
    computed with numpy, since a candidate can hold tens of thousands of elements."""
    data = case.data.reshape(-1)
    if data.dtype.kind in "iu":
        classes = np.zeros(data.size, np.int8)
        if data.dtype.kind == "u":
            magnitudes, negative = data.astype(np.uint64), np.zeros(data.size, bool)
        else:  # |v| as uint64, exact down to the int64 minimum
            wide, negative = data.astype(np.int64), data < 0
            magnitudes = np.where(negative, (-(wide + 1)).astype(np.uint64) + np.uint64(1), wide.astype(np.uint64))
    else:
        wide = data.astype(np.float64)
        nan, inf = np.isnan(wide), np.isinf(wide)
        subnormal = (wide != 0) & (np.abs(wide) < float(_finfo(data.dtype).tiny))
        classes = np.select([nan, inf, subnormal], [3, 2, 1], 0).astype(np.int8)
        magnitudes = np.where(nan | inf, 0.0, np.abs(wide))
        negative = np.signbit(wide) & ~nan
    order = np.lexsort((negative, magnitudes, classes))[::-1]
    return classes[order].tolist(), magnitudes[order].tolist(), negative[order].tolist()


@cache
def candidates(dtype: np.dtype) -> tuple:
    """Simple values of a type, simplest first (only values the type holds exactly)."""
    values: list = list(_SMALL)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        for bits in (7, 8, 15, 16, 31, 32, 53, 63):
            values += [sign * ((1 << bits) + step) for step in (-1, 0, 1) for sign in (1, -1)]
        values += [int(info.max), int(info.min), int(info.max) - 1, int(info.min) + 1]
        values = [v for v in values if info.min <= v <= info.max]
    else:
        info = _finfo(dtype)
        eps, tiny, sub, big = (float(info.eps), float(info.tiny), float(info.smallest_subnormal), float(info.max))
        values += [0.5, -0.5, 1 + eps, 1 - eps / 2, -(1 + eps), big, -big, tiny, -tiny, sub, -sub, math.inf, -math.inf]
        with np.errstate(over="ignore"):
            values = [v for v in values if float(np.array(v, np.float64).astype(dtype)) == v]
    return tuple(sorted(set(values), key=lambda v: value_cost(v, dtype)))


def _ladders(count: int, dtype: np.dtype) -> list[np.ndarray]:
    """Increasing sequences of ``count`` simple values: 0, 1, 2, ...; ..., -1, 0; for integers,
    runs starting at 2^31, 2^32 and 2^53 + 1; for floats, 1 and the values just below it (bugs
    that need values a narrower type cannot tell apart)."""
    ladders = [list(range(count)), list(range(1 - count, 1))]
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        ladders += [list(range(start, start + count)) for start in (1 << 31, 1 << 32, (1 << 53) + 1)]
        return [np.array(ladder, dtype) for ladder in ladders if info.min <= ladder[0] and ladder[-1] <= info.max]
    bits = np.dtype(f"u{dtype.itemsize}")
    one = np.array(1.0).astype(dtype).view(bits)
    below_one = (one - np.arange(count - 1, -1, -1).astype(bits)).view(dtype)
    return [*(np.array(ladder, np.float64).astype(dtype) for ladder in ladders), below_one]


class _Search:
    """The search's state, and its steps: each yields its candidates (``attempt``) and adopts those
    it is told still fail."""

    def __init__(self, case: Case, budget: int) -> None:
        self.best, self.left = case, budget
        self.vspec = spec.load(case.version)

    def attempt(self, data: np.ndarray, attributes: dict[str, int] | None = None) -> Proposing:
        """Propose the candidate if it is simpler, and adopt it where it still fails the same way."""
        if self.left <= 0:
            return False
        candidate = Case(self.best.version, np.ascontiguousarray(data),
                         self.best.attributes if attributes is None else attributes, self.best.tags,
                         self.best.intent)
        if not simpler(candidate, self.best):
            return False
        self.left -= 1
        if (yield candidate):
            self.best = candidate
            return True
        return False

    @property
    def shapeable(self) -> bool:
        """Whether the shape steps apply: a tensor with a reduced axis inside it (a valid case, or
        one rejected for its type or an attribute; not one rejected for its rank or axis)."""
        ndim = self.best.data.ndim
        if ndim == 0:
            return False
        kind, _ = classify(self.vspec, self.best.data, self.best.attributes)
        return kind == "semantic" or -ndim <= self.vspec.effective(self.best.attributes)["axis"] < ndim

    def reduced_axis(self) -> int:
        return self.vspec.effective(self.best.attributes)["axis"] % self.best.data.ndim

    # 1. other axes ---------------------------------------------------------------------
    def slice_other_axes(self) -> Steps:
        for dim in range(self.best.data.ndim):
            size = self.best.data.shape[dim]
            if dim == self.reduced_axis() or size <= 1:
                continue
            picks = sorted({0, size - 1, *range(0, size, max(1, size // 8))})
            for index in picks:
                if (yield from self.attempt(np.take(self.best.data, [index], axis=dim))):
                    break

    def renamed_axis(self, axis: int, ndim: int) -> dict[str, int]:
        """The attributes with the reduced axis at ``axis`` of ``ndim`` dimensions, in the form it
        had (negative stays negative); an omitted axis is named once the default points elsewhere."""
        attributes = dict(self.best.attributes)
        if "axis" in attributes:
            attributes["axis"] = axis - ndim if attributes["axis"] < 0 else axis
        elif axis != self.vspec.attributes["axis"].default:
            attributes["axis"] = axis
        return attributes

    def drop_axes(self) -> Steps:
        dim = 0
        while dim < self.best.data.ndim and self.best.data.ndim > 1:
            reduced = self.reduced_axis()
            if dim == reduced or self.best.data.shape[dim] != 1:
                dim += 1
                continue
            attributes = self.renamed_axis(reduced - (dim < reduced), self.best.data.ndim - 1)
            if not (yield from self.attempt(np.squeeze(self.best.data, axis=dim), attributes)):
                dim += 1

    def merge_axes(self) -> Steps:
        """Fewer dimensions over the same extents: those before the reduced axis as one and those
        after it as one (L, I and S kept: a tiling bug survives it), else every slice as a row of
        a matrix reduced over its last axis (L and S kept)."""
        data, axis = self.best.data, self.reduced_axis()
        n, shape = data.shape[axis], data.shape
        merged = [*([math.prod(shape[:axis])] if axis else []), n,
                  *([math.prod(shape[axis + 1:])] if axis < data.ndim - 1 else [])]
        renamed = self.renamed_axis(int(axis > 0), len(merged))
        if len(merged) < data.ndim and (yield from self.attempt(data.reshape(merged), renamed)):
            return
        if data.ndim > 2:
            rows = np.moveaxis(data, axis, -1).reshape(-1, n)
            yield from self.attempt(rows, self.renamed_axis(1, 2))

    # 2. the reduced axis -------------------------------------------------------------------
    def cut(self, dim: int) -> Steps:
        """The shortest leading, then trailing, part of ``dim`` that still fails, by bisection: a bug
        past a size threshold (more than 1024 columns, 65,535 slices) ends just past it in a few
        asks, where removing chunks would spend one ask per chunk."""
        for keep in (lambda k: np.s_[:k], lambda k: np.s_[-k:]):
            low, high = 1, self.best.data.shape[dim]
            while low < high and self.left > 0:
                middle = (low + high) // 2
                index = [slice(None)] * self.best.data.ndim
                index[dim] = keep(middle)
                if (yield from self.attempt(self.best.data[tuple(index)])):
                    high = middle  # the data is now that part: search within it
                else:
                    low = middle + 1
                high = min(high, self.best.data.shape[dim])

    def shorten(self, dim: int) -> Steps:
        """Fewer elements along ``dim`` (the reduced axis, or another one when a bug needs many
        slices): chunks removed, halves first."""
        chunk = self.best.data.shape[dim] // 2
        while chunk >= 1 and self.left > 0:
            start = 0
            while start < self.best.data.shape[dim] and self.left > 0:
                n = self.best.data.shape[dim]
                if n - chunk < 1:
                    break
                if not (yield from self.attempt(np.delete(self.best.data, np.s_[start:start + chunk], axis=dim))):
                    start += chunk
            chunk //= 2

    def drop_attributes(self) -> Steps:
        for name in list(self.best.attributes):
            yield from self.attempt(self.best.data, {k: v for k, v in self.best.attributes.items() if k != name})

    # 1., 4. and 5. values ---------------------------------------------------------------------
    def fewer_values(self) -> Steps:
        """Every element one value: the type's simplest (0), the most frequent, the smallest and
        the largest value it holds, simplest first; else two, the minima kept apart from the rest
        (which ``revalue`` then makes 0 and 1)."""
        data = self.best.data
        flat = data.reshape(-1)
        keys = order_keys(flat)
        distinct, first, counts = np.unique(keys, return_index=True, return_counts=True)
        if len(distinct) < 2:
            return
        held = [flat[first[i]] for i in (int(np.argmax(counts)), 0, len(distinct) - 1)]
        zero = np.zeros(1, data.dtype)[0]
        for value in sorted(dict.fromkeys([zero, *held], None), key=lambda v: value_cost(v.item(), data.dtype)):
            if (yield from self.attempt(np.full(data.shape, value, data.dtype))):
                return
        if len(distinct) > 2:
            yield from self.attempt(np.where(keys == distinct[0], flat[first[0]], flat[first[-1]]).reshape(data.shape))

    def revalue(self) -> Steps:
        data = self.best.data
        if data.size == 0:
            return
        flat = data.reshape(-1)
        keys = order_keys(flat)
        distinct, rank = np.unique(keys, return_inverse=True)
        for ladder in _ladders(len(distinct), data.dtype):
            if len(ladder) == len(distinct) and (yield from self.attempt(ladder[rank.reshape(-1)].reshape(data.shape))):
                return

    def simplify_elements(self) -> Steps:
        dtype = self.best.data.dtype
        for position in range(self.best.data.size):
            if self.left <= 0:
                return
            current = value_cost(self.best.data.reshape(-1)[position].item(), dtype)
            for value in candidates(dtype):
                if value_cost(value, dtype) >= current or self.left <= 0:
                    break
                data = self.best.data.copy()
                data.reshape(-1)[position] = np.array(value, object if dtype.kind in "iu" else np.float64).astype(dtype)
                if (yield from self.attempt(data)):
                    break


def proposals(case: Case, budget: int = BUDGET) -> Generator[Case, bool, Case]:
    """The candidates simpler than ``case`` worth trying, one at a time (each is sent back whether
    it still fails the same way: the next is simpler than the simplest that did), at most
    ``budget`` of them; returns the simplest case that failed."""
    search = _Search(case, budget)
    tensor_type = spec.type_of(case.data.dtype)
    numeric = tensor_type is not None and tensor_type.family in ("float", "float8", "signed", "unsigned")
    while search.left > 0:
        before = search.best
        if numeric:
            yield from search.fewer_values()
        if search.shapeable:
            yield from search.slice_other_axes()
            yield from search.drop_axes()
            yield from search.merge_axes()
            reduced = search.reduced_axis()
            for dim in [reduced, *(d for d in range(search.best.data.ndim) if d != reduced)]:
                yield from search.cut(dim)
                yield from search.shorten(dim)
        if numeric:  # bool, complex and unknown types keep their values
            yield from search.revalue()
            yield from search.simplify_elements()
        yield from search.drop_attributes()
        if search.best is before:
            break
    return search.best


def minimize(case: Case, fails: Callable[[Case], bool], budget: int = BUDGET) -> Case:
    """The simplest case reachable from ``case`` for which ``fails`` still holds: ``proposals``
    tried to the end through ``fails``."""
    search = proposals(case, budget)
    try:
        candidate = next(search)
        while True:
            candidate = search.send(fails(candidate))
    except StopIteration as done:
        return done.value
