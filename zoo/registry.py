"""The zoo's catalogue: every implementation, whether it is correct, and for broken ones the
clause expected to catch it per version, with hand-written witness inputs that prove it.

``violates`` maps a version to the clause id the suite should attribute the deviation to; a version
absent from it is one where the entry's behaviour is exactly as the spec asks. ``role`` says what
the deviation means under the verdict rule (results.verdict): ``headline`` (NON-CONFORMANT at those
versions), ``strictness`` (CONFORMANT, lenient: it computes invalid models) or ``scope`` (CONFORMANT,
with the types it refuses outright named as not implemented). ``correct`` means no deviation at
all; entries whose oddities lie only in undefined behaviour are correct with bug_class
"census-only"."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

from . import broken_rejects as rejects
from . import broken_shapes as shapes
from . import broken_values as values
from . import correct, faulty
from ._rules import VERSIONS


@dataclass(frozen=True)
class Witness:
    """One input that shows an entry's bug: ``data`` and the attributes set on the node, after
    ``prelude`` calls (for entries with state) whose answers are discarded."""

    data: np.ndarray
    attributes: Mapping[str, int] = field(default_factory=dict)
    prelude: tuple[tuple[np.ndarray, Mapping[str, int]], ...] = ()


@dataclass(frozen=True)
class Entry:
    name: str  # e.g. "ties-last-always"
    impl: str  # the --impl value, e.g. "zoo.broken_values:ties_last_always"
    correct: bool
    violates: Mapping[int, str]  # version -> clause id expected to catch it; absent versions conform
    bug_class: str  # short label, e.g. "tie-breaking"
    summary: str  # the function's docstring, first line
    witnesses: tuple[Witness, ...] = field(default=(), compare=False, repr=False)
    role: str = "headline"  # headline, strictness or scope: what the deviation means for the verdict
    not_implemented: tuple[str, ...] = ()  # scope entries: the types refused outright

    @property
    def non_conformant(self) -> dict[int, str]:
        """The versions whose headline it must make NON-CONFORMANT, with the clause."""
        return dict(self.violates) if self.role == "headline" else {}


def _everywhere(clause: str) -> dict[int, str]:
    return dict.fromkeys(VERSIONS, clause)


def _at(clause: str, *versions: int) -> dict[int, str]:
    return dict.fromkeys(versions, clause)


def _a(values: list, dtype: object = np.float32) -> np.ndarray:
    return np.array(values, dtype=dtype)


def _entry(fn: Callable, bug_class: str, violates: Mapping[int, str], *witnesses: Witness, role: str = "headline",
           not_implemented: tuple[str, ...] = ()) -> Entry:
    return Entry(
        name=fn.__name__.replace("_", "-"), impl=f"{fn.__module__}:{fn.__name__}", correct=not violates,
        violates=dict(violates), bug_class=bug_class, summary=(fn.__doc__ or "").strip().splitlines()[0],
        witnesses=witnesses, role=role, not_implemented=not_implemented,
    )


def _lenient(fn: Callable, bug_class: str, violates: Mapping[int, str], *witnesses: Witness) -> Entry:
    return _entry(fn, bug_class, violates, *witnesses, role="strictness")


def _scope(fn: Callable, violates: Mapping[int, str], types: tuple[str, ...], *witnesses: Witness) -> Entry:
    return _entry(fn, "dtype-kernel-missing", violates, *witnesses, role="scope", not_implemented=types)


_TIES = Witness(_a([3, 1, 2, 1, 1]))
_TIES_LAST = Witness(_a([3, 1, 2, 1, 4]), {"select_last_index": 1})
_MATRIX = _a([[4, 1, 5], [2, 6, 0]])
_NO_ROWS = Witness(np.zeros((0, 3), np.float32), {"axis": 1})  # zero-size, but the reduced axis is not
_LONG_TIE = np.zeros(5000, np.float32)
_LONG_MIN = np.ones(40000, np.float32)
_LONG_MIN[39999] = 0
_TILE = np.ones((17, 1025), np.float32)  # the minimum of the last column in the 17th row
_TILE[16, 1024] = 0

_CORRECT = tuple(
    _entry(fn, "none", {})
    for fn in (correct.numpy_argmin, correct.python_loop, correct.stable_sort, correct.blocked_two_level,
               correct.integer_keys, correct.python_lists, correct.big_endian_indices)
) + tuple(_entry(fn, "census-only", {}) for fn in (correct.sticky_first_nan, correct.min_then_match,
                                                   correct.random_on_empty_axis))

_BROKEN = (
    # ties
    _entry(values.ties_last_always, "tie-breaking", _at("C6", 12, 13), _TIES),
    _entry(values.ties_first_always, "tie-breaking", _at("C6", 12, 13), _TIES_LAST),
    _entry(values.tiled_ties, "tie-breaking-tiled", _at("C6", 12, 13),
           Witness(_LONG_TIE), Witness(_LONG_TIE, {"select_last_index": 1})),
    _entry(values.last_index_off_by_one, "index-range", _at("C4", 12, 13),
           Witness(_a([1, 0]), {"select_last_index": 1})),
    _entry(values.select_last_floats_only, "tie-breaking", _at("C6", 12, 13),
           Witness(_a([0, 0], np.int32), {"select_last_index": 1})),
    _entry(values.signed_zero_below_positive, "signed-zero", _at("C6", 12, 13), Witness(_a([1.0, 0.0, -0.0]))),
    _entry(values.float16_negative_zero_below, "signed-zero", _at("C6", 12, 13),
           Witness(_a([1.0, 0.0, -0.0], np.float16))),
    # sentinels and comparisons
    _entry(values.float32_max_sentinel, "sentinel", _everywhere("C5"),
           Witness(_a([np.inf, np.finfo(np.float32).max])), Witness(_a([1e300, 1e39], np.float64))),
    _entry(values.minus_one_sentinel, "sentinel", _everywhere("C4"),
           Witness(_a([255, 255], np.uint8)), Witness(_a([np.inf, np.inf]))),
    _entry(values.int8_as_uint8, "signedness", _everywhere("C5"), Witness(_a([-1, 1], np.int8))),
    _entry(values.unsigned_as_signed, "signedness", _everywhere("C5"), Witness(_a([2**31, 1], np.uint32))),
    _entry(values.argmax_of_negation, "overflow", _everywhere("C5"),
           Witness(_a([-(2**31), 0], np.int32)), Witness(_a([0, 1], np.uint8))),
    _entry(values.nan_to_num_sanitizer, "infinity", _everywhere("C5"),
           Witness(_a([-np.finfo(np.float32).max, -np.inf]))),
    # detours through another type
    _entry(values.int64_via_float64, "detour-float64", _everywhere("C5"),
           Witness(_a([2**62 + 1, 2**62], np.int64)), Witness(_a([2**64 - 1, 2**64 - 2], np.uint64))),
    _entry(values.int32_via_float32, "detour-float32", _everywhere("C5"), Witness(_a([2**24 + 1, 2**24], np.int32))),
    _entry(values.double_via_float32, "detour-float32", _everywhere("C5"), Witness(_a([1 + 2**-40, 1.0], np.float64))),
    _entry(values.wide_ints_narrowed_to_int32, "narrowing-int32", _everywhere("C5"),
           Witness(_a([2**32, 1], np.int64)), Witness(_a([2**31, 1], np.uint32)), Witness(_a([2**63, 1], np.uint64))),
    _entry(values.bfloat16_via_float16, "detour-float16", _at("C5", 13), Witness(_a([1e10, 1e5], ml_dtypes.bfloat16))),
    _entry(values.flush_subnormals, "flush-to-zero", _everywhere("C5"),
           Witness(_a([1e-40, 5e-41])), Witness(_a([0.0, -1e-45]))),
    _entry(values.bfloat16_flushes_subnormals, "flush-to-zero", _at("C5", 13),
           Witness(_a([2e-40, 1e-40], ml_dtypes.bfloat16))),
    _entry(values.index_int16, "index-range", _everywhere("C4"), Witness(_LONG_MIN)),
    # axes, keepdims, defaults
    _entry(shapes.negative_axis_as_zero, "negative-axis", _at("C8", 11, 12, 13), Witness(_MATRIX, {"axis": -1})),
    _entry(shapes.keepdims_at_end, "keepdims", _everywhere("C3"), Witness(_MATRIX, {"axis": 0, "keepdims": 1})),
    _entry(shapes.keepdims_ignored, "keepdims", _everywhere("C3"), Witness(_MATRIX, {"axis": 1, "keepdims": 0})),
    _entry(shapes.squeeze_all, "keepdims", _everywhere("C3"), Witness(_a([[3, 1, 2]]), {"axis": 1, "keepdims": 0})),
    _entry(shapes.default_keepdims_zero, "defaults", _everywhere("C7"), Witness(_MATRIX)),
    _entry(shapes.default_axis_last, "defaults", _everywhere("C7"), Witness(_MATRIX)),
    _entry(shapes.default_select_last_one, "defaults", _at("C7", 12, 13), _TIES),
    _entry(shapes.length_one_identity, "axis-length-1", _everywhere("C4"),
           Witness(_a([[5], [7]], np.int64), {"axis": 1})),
    _entry(shapes.rank5_unsupported, "high-rank", _everywhere("C1"), Witness(np.zeros((2, 1, 1, 1, 2), np.float32))),
    _entry(shapes.rank5_bad_transpose, "high-rank", _everywhere("C3"),
           Witness(np.arange(24, dtype=np.float32).reshape(2, 3, 1, 1, 4))),
    _entry(shapes.empty_short_circuit, "zero-size", _at("C9", 1, 12, 13), _NO_ROWS),
    _entry(shapes.zero_size_raises, "zero-size", _at("C9", 1, 12, 13), _NO_ROWS),
    _entry(shapes.slices_beyond_512_zero, "many-slices", _everywhere("C5"),
           Witness(np.tile(_a([1, 0]), (shapes.CHUNK + 88, 1)), {"axis": 1})),
    _entry(shapes.vector_tail_zero, "vector-tail", _everywhere("C5"),
           Witness(np.repeat(_a([[1], [0]]), shapes.LANES + 1, axis=1))),
    _entry(shapes.grid_limit_65535, "grid-limit", _everywhere("C5"),
           Witness(np.tile(_a([1, 0]), (shapes.GRID_LIMIT + 1, 1)), {"axis": 1})),
    _entry(shapes.tile_rows_lost_past_first_column_block, "cache-tiling", _everywhere("C5"), Witness(_TILE)),
    _entry(shapes.stale_cache, "state", _everywhere("C5"),
           Witness(_a([1, 1, 1, 1, 9, 0], np.int32), prelude=((_a([1, 1, 1, 1, 0, 9], np.int32), {}),))),
    # invalid models computed: lenient, never NON-CONFORMANT
    _lenient(rejects.axis_wraps_modulo, "reject-axis", _everywhere("C10"), Witness(_MATRIX, {"axis": 2})),
    _lenient(rejects.scalar_as_vector, "rank-0", _at("C11", 11, 12, 13), Witness(_a(3.0))),
    _lenient(rejects.no_type_check, "reject-type", _everywhere("C12"), Witness(_a([1 + 1j, 0], np.complex64))),
    _lenient(rejects.bool_as_uint8, "reject-type", _everywhere("C12"), Witness(_a([True, False], np.bool_))),
    _lenient(rejects.bfloat16_registered_early, "reject-type", _at("C12", 1, 11, 12),
             Witness(_a([2, 1], ml_dtypes.bfloat16))),
    _lenient(rejects.select_last_index_everywhere, "reject-attribute", _at("C13", 1, 11), _TIES_LAST),
    _lenient(rejects.computes_invalid_models, "lenient", _everywhere("C12"), Witness(_a([True, False], np.bool_))),
    # types not implemented (scope), and types refused only sometimes (a failure)
    _scope(rejects.missing_unsigned_kernels, _everywhere("C1"), ("uint16", "uint32", "uint64"),
           Witness(_a([2, 1], np.uint16))),
    _scope(rejects.float16_dropped_after_11, _at("C1", 12, 13), ("float16",), Witness(_a([2, 1], np.float16))),
    _scope(rejects.two_kernels_missing_zeros_on_empty, _everywhere("C1"), ("uint16", "int16"),
           Witness(_a([2, 1], np.int16))),
    _entry(rejects.float16_refused_from_rank_3, "dtype-kernel-partial", _everywhere("C1"),
           Witness(np.zeros((1, 2, 2), np.float16))),
    _entry(rejects.int32_indices, "index-dtype", _everywhere("C2"), Witness(_MATRIX)),
    # two bugs in one: the report must show both (C5 is checked by its own test)
    _entry(values.int32_answers_and_doubles_as_float, "two-bugs", _everywhere("C2"), Witness(_MATRIX)),
    # faults of the program itself
    _entry(faulty.exit_on_long_axis, "crash", _everywhere("C1"), Witness(np.zeros(faulty.LONG_AXIS + 1, np.float32))),
    _entry(faulty.hang_on_rank4, "hang", _everywhere("C1"), Witness(np.zeros((1,) * faulty.HANG_RANK, np.float32))),
    _entry(faulty.list_of_floats, "wrong-type", _everywhere("C2"), Witness(_MATRIX)),
    _entry(faulty.string_answer, "wrong-type", _everywhere("C2"), Witness(_MATRIX)),
    _scope(faulty.no_float16_kernel, _everywhere("C1"), ("float16",), Witness(_a([2, 1], np.float16))),
    # a crash on any input, valid, invalid or undefined, fails the headline (the suite's position)
    _entry(faulty.abort_on_v1_negative_axis, "census-crash", {1: "C19"},
           Witness(_a([3, 1]), {"axis": -1})),
    _entry(faulty.abort_on_axis_out_of_range, "reject-crash", _everywhere("C10"), Witness(_MATRIX, {"axis": 5})),
)

ENTRIES: tuple[Entry, ...] = _CORRECT + _BROKEN
# Never call these in-process on their triggers ("census-crash" and "reject-crash" abort on input the
# standard leaves undefined or calls invalid).
FAULT_CLASSES = frozenset({"crash", "hang", "census-crash", "reject-crash"})


def entry(name: str) -> Entry:
    """The zoo entry called ``name``; a one-line KeyError naming the known ones otherwise."""
    for candidate in ENTRIES:
        if candidate.name == name:
            return candidate
    raise KeyError(f"no zoo entry {name!r}; known: {', '.join(e.name for e in ENTRIES)}")
