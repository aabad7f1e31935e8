"""The executable form of the spec: which clauses an input falls under, the exact answer for
valid inputs, and the check of an implementation's answer against it.

Exactness: integers are compared in their own dtype by numpy. 16-bit floats (float16, bfloat16)
are compared through an order-preserving integer key built from their bits, so no value is ever
converted to another floating type. float32 and float64 are compared natively (IEEE 754
comparisons, which already treat -0 and +0 as equal and keep subnormals distinct)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .load import type_of
from .model import Clause, Range, VersionSpec


@dataclass(frozen=True)
class Expectation:
    """What the spec says about one input: its kind, the deciding clauses and, for valid
    inputs, the exact answer (first and last minimum; ``tie_rule`` says which is required)."""

    kind: str  # semantic, rejection, undefined
    clauses: tuple[Clause, ...]  # for rejection and undefined: the clauses that decided
    axis: int | None = None  # normalised to [0, r-1]
    keepdims: bool = True
    tie_rule: str = "any"  # first, last, or any (ties undefined: every minimal index conforms)
    first: np.ndarray | None = None
    last: np.ndarray | None = None

    @property
    def clause_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.clauses)

    @property
    def required(self) -> np.ndarray | None:
        """The one answer the spec requires, or None where any minimal index conforms."""
        return {"first": self.first, "last": self.last}.get(self.tie_rule)


@dataclass(frozen=True)
class Violation:
    clause: Clause
    problem: str  # dtype, shape, index-range, not-a-minimum, wrong-tie
    message: str


def order_keys(data: np.ndarray) -> np.ndarray:
    """An array whose plain comparisons order exactly like the data's values.

    For 16-bit floats the sign-magnitude bits become signed integer keys (+m for positive
    values, -m for negative ones, m the magnitude bits), so -0 and +0 share the key 0; NaNs land
    above +inf or below -inf by their sign bit, which callers never rely on. Other dtypes are
    returned as they are."""
    tensor_type = type_of(data.dtype)
    if tensor_type is None or not tensor_type.is_float or data.dtype.itemsize != 2:
        return data
    bits = data.view(np.int16)
    sign = bits >> 15  # 0 for positive values, -1 (all ones) for negative ones
    keys = bits & np.int16(0x7FFF)
    keys ^= sign  # two's-complement negation where the sign is set: (m ^ -1) + 1 == -m
    keys -= sign
    return keys


_BLOCK = 1 << 18  # elements reversed at a time: small enough to stay in cache


def _last_minimum(keys: np.ndarray, axis: int) -> np.ndarray:
    """Index of the last minimum: numpy's first minimum on the reversed axis. A reversed view of
    the innermost axis pushes numpy off its vectorised loop, so there the rows are reversed into
    small contiguous blocks first."""
    n = keys.shape[axis]
    if axis != keys.ndim - 1 or not keys.flags.c_contiguous or n == 0:
        return n - 1 - np.argmin(np.flip(keys, axis), axis=axis)
    rows = keys.reshape(-1, n)
    result = np.empty(rows.shape[0], dtype=np.int64)
    step = max(1, _BLOCK // n)
    for start in range(0, rows.shape[0], step):
        result[start:start + step] = np.argmin(np.ascontiguousarray(rows[start:start + step, ::-1]), axis=1)
    return (n - 1 - result).reshape(keys.shape[:-1])


def argmin(data: np.ndarray, axis: int, *, keepdims: bool = True, last: bool = False) -> np.ndarray:
    """Exact ArgMin of valid, NaN-free data: the first (or last) index of the minimum."""
    keys = order_keys(data)
    result = _last_minimum(keys, axis) if last else np.argmin(keys, axis=axis)
    result = np.asarray(result, dtype=np.int64)
    # reshape, not np.expand_dims: the same array for a fraction of the cost (asked for every case)
    return result.reshape((*result.shape[:axis], 1, *result.shape[axis:])) if keepdims else result


@lru_cache(maxsize=256)
def _bounds(accepted: Range, rank: int) -> tuple[int, int]:
    return accepted.bounds(rank)  # cached: the bound expressions are parsed on every call


@dataclass(frozen=True)
class _Plan:
    """Per-version facts every judgement asks for, computed once (the spec objects are immutable)."""

    vspec: VersionSpec  # held so the id-keyed cache entry cannot outlive its version
    conditional: dict[str, tuple[Clause, ...]]  # undefined and rejection clauses with a condition
    ties: dict[int, str]  # select_last_index value -> tie rule


_PLANS: dict[int, _Plan] = {}


def _plan(vspec: VersionSpec) -> _Plan:
    plan = _PLANS.get(id(vspec))
    if plan is None or plan.vspec is not vspec:
        values = vspec.attributes["select_last_index"].values if "select_last_index" in vspec.attributes else ()
        plan = _Plan(vspec, {kind: tuple(c for c in vspec.of_kind(kind) if c.when)
                               for kind in ("undefined", "rejection")},
                     {v: vspec.ties_choice(v) or "any" for v in (0, *(values or ()))})
        _PLANS[id(vspec)] = plan
    return plan


def _matches(vspec: VersionSpec, clause: Clause, data: np.ndarray, attrs: Mapping[str, int]) -> bool:
    (condition, value), = clause.when.items()
    rank = data.ndim
    axis = attrs.get("axis")
    axis_attribute = vspec.attributes.get("axis")
    if condition.startswith("axis_"):
        low, high = _bounds(axis_attribute.range, rank)
        below, above = axis < low, axis > high
        return {"axis_above_range": above, "axis_below_range": below, "axis_outside_range": below or above}[condition]
    if condition == "dtype_outside":
        tensor_type = type_of(data.dtype)
        return tensor_type is None or tensor_type.name not in vspec.type_constraints[value]
    if condition == "undeclared_attribute":
        return any(name not in vspec.attributes for name in attrs)
    if condition == "rank":
        return rank == value
    if condition == "contains_nan":
        tensor_type = type_of(data.dtype)
        return bool(tensor_type is not None and tensor_type.is_float and np.isnan(data).any())
    if condition == "reduced_axis_length":
        return -rank <= axis < rank and data.shape[axis] == value
    if condition == "size":
        return data.size == value
    if condition == "attribute_outside_values":
        return attrs.get(value, vspec.attributes[value].default) not in vspec.attributes[value].values
    raise AssertionError(f"unknown condition {condition}")  # the schema admits no other


# Conditions on the node itself (its element type, its attribute names): such a node is invalid
# whatever its data, so no undefined clause about the data can excuse it.
_NODE_CONDITIONS = frozenset({"dtype_outside", "undeclared_attribute"})


def classify(vspec: VersionSpec, data: np.ndarray, attributes: Mapping[str, int]) -> tuple[str, tuple[Clause, ...]]:
    """The kind of an input and the clauses that make it so. A node the version does not admit
    (type outside T, undeclared attribute) is rejected first; otherwise undefined wins over
    rejection: where the standard is silent, no behaviour (not even acceptance) is held against anyone."""
    attrs = {**vspec.effective(attributes), **attributes}
    hits = {kind: tuple(c for c in clauses if _matches(vspec, c, data, attrs))
            for kind, clauses in _plan(vspec).conditional.items()}
    if any(_NODE_CONDITIONS.intersection(c.when) for c in hits["rejection"]):
        return "rejection", hits["rejection"]
    for kind in ("undefined", "rejection"):
        if hits[kind]:
            return kind, hits[kind]
    return "semantic", ()


def expect(vspec: VersionSpec, data: np.ndarray, attributes: Mapping[str, int]) -> Expectation:
    """What the version ``vspec`` requires with ``data`` and the attributes set on the node."""
    kind, clauses = classify(vspec, data, attributes)
    if kind != "semantic":
        return Expectation(kind, clauses)
    attrs = vspec.effective(attributes)
    axis = attrs["axis"] % data.ndim
    keepdims = bool(attrs["keepdims"])
    select_last_index = attrs.get("select_last_index", 0)
    tie_rule = _plan(vspec).ties.get(select_last_index) or vspec.ties_choice(select_last_index) or "any"
    first = argmin(data, axis, keepdims=keepdims) if tie_rule != "last" else None
    last = argmin(data, axis, keepdims=keepdims, last=True) if tie_rule != "first" else None
    return Expectation("semantic", (), axis, keepdims, tie_rule, first, last)


def _first(mask: np.ndarray) -> tuple[int, ...]:
    """The position of the first True in ``mask`` (``()`` for a 0-d mask)."""
    if mask.ndim == 0:
        return ()
    return tuple(int(i) for i in np.unravel_index(int(np.flatnonzero(mask)[0]), mask.shape))


def read(actual: object, by_value: bool = False) -> tuple[np.ndarray, str | None]:
    """An answer as numpy sees it, and why it does not hold int64 indices (None when it does).

    An answer that carries an element type (an array, a numpy scalar, the buffer protocol,
    ``__array__``, a list of numpy scalars) is judged on the type the implementation chose: int64
    in either byte order passes, any other type (int32 included) does not. An answer of plain
    Python ints (``by_value``: an int, lists and tuples of them) has no type of its own, so it is
    judged by its values: numpy's reading of it must hold integers, and an empty one holds none
    and passes (read as int64)."""
    array = np.asarray(actual)
    if by_value:
        if array.size == 0:
            return array.astype(np.int64), None
        if array.dtype.kind in "iu":
            return array, None
        return array, f"the answer holds {array.dtype} values, not integer indices"
    if array.dtype.kind == "i" and array.dtype.itemsize == 8:
        return array, None
    return array, f"output dtype is {array.dtype}, expected int64"


def _spelled(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape a nested list of an empty result has: it ends at the first zero-length dimension
    (``[]`` is numpy's reading of an empty (0, 1) answer)."""
    return shape[:shape.index(0) + 1] if 0 in shape else shape


def _exact(actual: np.ndarray, expectation: Expectation) -> bool:
    """Whether the indices are exactly the answer the spec requires (either minimum where it
    requires none): in range, minimal and the right tie, so no index check can fail (the common
    case, settled in one comparison)."""
    answers = (expectation.first, expectation.last) if expectation.required is None else (expectation.required,)
    return any(answer is not None and actual.shape == answer.shape and bool((actual == answer).all())
               for answer in answers)


def violations(vspec: VersionSpec, expectation: Expectation, data: np.ndarray, actual: object, *,
               by_value: bool = False) -> list[Violation]:
    """Every clause an answer to a valid input violates, in check order (empty: it conforms).
    ``by_value``: the answer had no element type of its own, so its values are what counts (see ``read``).

    The index values are judged whatever integer type holds them, so a wrong output type (C2)
    never hides a wrong index (C4, C5, C6); indices out of range are left out of the minimum and
    tie checks. A wrong shape, or an answer that holds no integers, leaves nothing to compare."""
    def violation(check: str, problem: str, message: str) -> Violation:
        return Violation(vspec.clause_for_check(check), problem, message)

    actual, problem = read(actual, by_value)
    reference = expectation.first if expectation.first is not None else expectation.last
    found = []
    if problem is not None:
        found.append(violation("output-dtype", "dtype", problem))
    if actual.dtype.kind not in "iu":
        return found
    if actual.shape != reference.shape and not (by_value and reference.size == 0
                                                and actual.shape == _spelled(reference.shape)):
        shape = violation("output-shape", "shape", f"output shape is {actual.shape}, expected {reference.shape}")
        return [*found, shape]
    if _exact(actual, expectation):
        return found
    n = data.shape[expectation.axis]
    out_of_range = (actual < 0) | (actual >= n)
    if out_of_range.any():
        bad = actual[out_of_range].flat[0]
        found.append(violation("index-range", "index-range", f"index {bad} is outside [0, {n - 1}]"))
    if actual.size == 0:
        return found
    index = np.where(out_of_range, reference, actual).astype(np.int64)
    required = expectation.required
    if required is not None and np.array_equal(index, required):
        return found

    def pick(positions: np.ndarray) -> np.ndarray:
        """The elements the indices point at, in the output's shape."""
        if expectation.keepdims:
            return np.take_along_axis(data, positions, expectation.axis)
        chosen = np.take_along_axis(data, np.expand_dims(positions, expectation.axis), expectation.axis)
        return np.squeeze(chosen, expectation.axis)

    picked, best = pick(index), pick(reference)
    not_minimal = order_keys(picked) != order_keys(best)
    if not_minimal.any():
        where = _first(not_minimal)
        found.append(violation("minimum", "not-a-minimum",
                               f"at output position {where} the index points at {picked[where]!r}, "
                               f"but the slice minimum is {best[where]!r}"))
    if required is None:
        return found
    wrong = (index != required) & ~not_minimal & ~out_of_range
    if wrong.any():
        where = _first(wrong)
        found.append(violation("ties", "wrong-tie",
                               f"at output position {where} the index is {index[where]}, but the "
                               f"{expectation.tie_rule} minimum is at {required[where]}"))
    return found


def verify(vspec: VersionSpec, expectation: Expectation, data: np.ndarray, actual: object, *,
           by_value: bool = False) -> Violation | None:
    """The first clause an answer to a valid input violates, or None when it conforms."""
    found = violations(vspec, expectation, data, actual, by_value=by_value)
    return found[0] if found else None
