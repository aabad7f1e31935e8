"""The minimizer, without an implementation: its cost of a case's values (computed with numpy for
whole arrays, it must order elements exactly as value_cost, the per-element definition, does),
what it shrinks failures to, and its candidates, proposed one at a time."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from engine.judging.minimize import _value_costs, minimize, proposals, simpler, value_cost
from generators import Case

FLOATS = np.array([np.nan, -np.nan, -0.0, 0.0, 1.0, -1.0, np.inf, -np.inf, 2.5, 1e-40, -1e-40, 5e-324, 1e300, -3.0])


def _values(dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        pool = [info.min, info.max, 0, 1, 5] + ([-1, -7] if dtype.kind == "i" else [])
        return rng.choice(np.array(pool, dtype), size=int(rng.integers(1, 30)))
    with np.errstate(all="ignore"):
        return rng.choice(FLOATS, size=int(rng.integers(1, 30))).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.float64, ml_dtypes.float8_e4m3fn,
                                   np.int8, np.int64, np.uint64, np.uint8], ids=lambda d: np.dtype(d).name)
def test_array_costs_agree_with_value_cost(dtype) -> None:
    dtype, rng = np.dtype(dtype), np.random.default_rng(0)
    for _ in range(200):
        data = _values(dtype, rng)
        costs = sorted((value_cost(v, dtype) for v in data.tolist()), reverse=True)
        expected = ([c[0] for c in costs], [c[1] for c in costs], [c[2] for c in costs])
        assert _value_costs(Case(13, data, {})) == expected, data


def test_a_tie_bug_shrinks_to_one_repeated_value_in_rank_1() -> None:
    """A tie bug at a tile boundary (the first minimum lost where a tie spans index 1024), found on
    [1025, 1] of -inf and the float maximum in turn, fails in rank 1 only once its values are all
    equal: the minimizer makes the values one repeated value before it lowers the rank, and lowers
    the rank before the length."""
    boundary = 1024

    def fails(case: Case) -> bool:
        column = case.data.reshape(case.data.shape[0], -1)[:, 0]
        at = np.flatnonzero(column == column.min())
        return bool(at[0] < boundary <= at[-1]) and (case.data.ndim >= 2 or bool((column == column[0]).all()))

    found = np.tile(np.array([-np.inf, np.finfo(np.float32).max], np.float32), 513)[:1025].reshape(1025, 1)
    simplest = minimize(Case(13, found, {}), fails)
    assert simplest.data.shape == (1025,) and not simplest.data.any(), simplest.data


def test_an_empty_input_shrinks_its_axes_too() -> None:
    """An empty input holds no elements whatever its other axes: they are cut all the same, so a
    card shows [1, 0], not the [3, 66460, 0] it was found on."""
    found = np.zeros((3, 66460, 0), np.float32)
    simplest = minimize(Case(13, found, {"axis": 2}), lambda case: case.data.size == 0 and case.data.ndim >= 2)
    assert simplest.data.shape in {(1, 0), (0, 1)}, simplest.data.shape


def test_rank_0_inputs_of_one_type_compare() -> None:
    """Two rank-0 inputs of a type wider than a byte: the same bytes are as simple as each other
    (the comparison viewed them as bytes, which numpy refuses for rank 0), other values by cost."""
    assert not simpler(Case(11, np.array(1.0, np.float32), {}), Case(11, np.array(1.0, np.float32), {}))
    assert simpler(Case(11, np.array(1.0, np.float32), {}), Case(11, np.array(np.inf, np.float32), {}))


def test_the_minimizer_only_proposes_and_adopts_what_it_is_told_fails() -> None:
    """``proposals`` asks nothing: it yields candidates, each simpler than the best so far, and
    goes on from the ones it is told still fail; told none fails, it keeps the case it began with."""
    found = Case(13, np.array([[5, 3, 9], [7, 3, 8]], np.int8), {"axis": 1})
    search = proposals(found, budget=50)
    proposed = [next(search)]
    with pytest.raises(StopIteration) as done:
        while True:
            assert simpler(proposed[-1], found), proposed[-1].data
            proposed.append(search.send(False))
    assert done.value.value is found and 1 < len(proposed) <= 50
    search = proposals(found, budget=50)
    first = next(search)
    assert simpler(search.send(True), first), "told the first candidate fails, it goes on from there"


def test_proposals_tried_through_a_predicate_are_what_minimize_gives() -> None:
    found = Case(13, np.arange(40, dtype=np.float32).reshape(5, 8)[::-1].copy(), {})

    def fails(case: Case) -> bool:  # a bug on any input with 3 or more rows
        return case.data.ndim == 2 and case.data.shape[0] >= 3

    search, tried = proposals(found), []
    with pytest.raises(StopIteration) as done:
        candidate = next(search)
        while True:
            tried.append(candidate)
            candidate = search.send(fails(candidate))
    simplest = done.value.value
    assert simplest.data.shape == (3, 1) and simplest.key() == minimize(found, fails).key()
    assert all(simpler(case, found) for case in tried)
