"""End-to-end checked cases per second: the spec-driven strategies against element-by-element
``hypothesis.extra.numpy.arrays`` property tests, over the same dtypes, in one run.

Run from the checkout: ``python benchmarks/bench_generation.py`` (``--help`` for options).
Each checked case = Hypothesis generation + a call of an in-process numpy ArgMin +
``spec.oracle.expect`` + ``spec.oracle.verify``. Every test draws the same number of cases, and
on every side only the distinct ones count (an input met again in the same test is skipped, as
the suites skip it; the digest that finds repeats is part of the cost).

- ours: what the suites run, ``semantic_cases(..., batch=BATCH)``: ``BATCH`` independent cases per
  Hypothesis example. It is also measured with one case per example, to show what batching adds.
- Two baselines draw one array per example with ``arrays(dtype, shape)`` from ``from_dtype``
  elements, and axis and attributes with ``st.integers``. same-shapes: the shape comes from the
  generators' own shape choices (same ranks, long axes, zero-size dimensions), so both sides
  build tensors of the same sizes. small-shapes: the conventional
  ``array_shapes(min_dims=1, max_dims=8, max_side=4)``, which favours the baseline (its tensors
  are far smaller than ours).

Prints the median cases/s (of this process's CPU time, so other load on the machine does not
skew the figures) of each over the repetitions, and the ratios. It also measures the
Hypothesis floor (a test drawing one byte string and doing nothing): that per-example engine
cost bounds every one-case-per-example rate, and is what batching spreads."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import spec  # the checkout is not installed: see README
from generators import BATCH, Case, semantic_cases
from generators.build import SIZE, empty_inputs_defined, layout
from spec.oracle import expect, verify


def numpy_argmin(data: np.ndarray, *, opset: int, axis: int = 0, keepdims: int = 1,
                 select_last_index: int = 0) -> np.ndarray:
    """A correct in-process implementation (16-bit floats compared in float32, which is exact)."""
    if data.dtype.itemsize == 2 and data.dtype.kind not in "iu":
        data = data.astype(np.float32)
    if select_last_index:
        flipped = np.flip(data, axis)
        result = data.shape[axis] - 1 - np.argmin(flipped, axis=axis)
    else:
        result = np.argmin(data, axis=axis)
    result = np.asarray(result, dtype=np.int64)
    return np.expand_dims(result, axis % data.ndim) if keepdims else result


def check(vspec: spec.VersionSpec, data: np.ndarray, attributes: dict[str, int]) -> None:
    expectation = expect(vspec, data, attributes)
    if expectation.kind == "semantic":
        verify(vspec, expectation, data, numpy_argmin(data, opset=vspec.version, **attributes))


def _elements(tensor_type: spec.TensorType) -> tuple[np.dtype, Callable[[np.ndarray], np.ndarray]]:
    """hypothesis' from_dtype knows no ml_dtypes: bfloat16 is drawn as float32 and cast."""
    if tensor_type.dtype.kind == "V":
        return np.dtype(np.float32), lambda a: a.astype(tensor_type.dtype)
    return tensor_type.dtype, lambda a: a


def baseline(vspec: spec.VersionSpec, tensor_type: spec.TensorType, shapes: str) -> st.SearchStrategy:
    dtype, cast = _elements(tensor_type)
    elements = hnp.from_dtype(dtype, allow_nan=False) if dtype.kind == "f" else hnp.from_dtype(dtype)
    if shapes == "same":
        zero_dims = empty_inputs_defined(vspec)
        shape = st.binary(min_size=SIZE, max_size=SIZE).map(
            lambda raw: layout(vspec, tensor_type, raw, zero_dims=zero_dims).shape)
    else:
        shape = hnp.array_shapes(min_dims=1, max_dims=8, min_side=1, max_side=4)

    @st.composite
    def case(draw: st.DrawFn) -> tuple[Case]:
        data = cast(draw(shape.flatmap(lambda s: hnp.arrays(dtype, s, elements=elements)), label="data"))
        attributes = {"axis": draw(st.integers(0, data.ndim - 1), label="axis"),
                      "keepdims": draw(st.integers(0, 1), label="keepdims")}
        if "select_last_index" in vspec.attributes:
            attributes["select_last_index"] = draw(st.integers(0, 1), label="select_last_index")
        return (Case(vspec.version, data, attributes),)  # checked as ours are

    return case()


def run(strategy: st.SearchStrategy, body: Callable[[object], int], examples: int, rep: int) -> float:
    """Checked cases per second of one Hypothesis test; ``body`` checks a drawn example and
    returns how many cases it checked."""
    count = 0

    @seed(rep)
    @settings(max_examples=examples, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def test(drawn: object) -> None:
        nonlocal count
        count += body(drawn)

    start = time.process_time()  # CPU time: other load on a shared machine does not skew it
    test()
    return count / (time.process_time() - start)


def checker(vspec: spec.VersionSpec) -> Callable[[tuple[Case, ...]], int]:
    """Checks the cases of a batch that this test has not met before, as the suites do (the
    simplest input fills the first batch); returns how many it checked."""
    seen: set[str] = set()

    def check_batch(cases: tuple[Case, ...]) -> int:
        checked = 0
        for case in cases:
            key = case.key()
            if key not in seen:
                seen.add(key)
                check(vspec, case.data, case.attributes)
                checked += 1
        return checked

    return check_batch


def measure(versions: list[spec.VersionSpec], kind: str, cases: int, rep: int) -> float:
    """Cases per second over every (version, type) pair, one Hypothesis test per pair."""
    rates = []
    for vspec in versions:
        for tensor_type in vspec.types:
            if kind == "floor":
                rates.append(run(st.binary(min_size=SIZE, max_size=SIZE), lambda raw: 1, cases, rep))
            elif kind in ("ours", "single"):
                batch = BATCH if kind == "ours" else 1
                rates.append(run(semantic_cases(vspec, tensor_type.name, batch=batch), checker(vspec),
                                 cases // batch, rep))
            else:
                rates.append(run(baseline(vspec, tensor_type, kind), checker(vspec), cases, rep))
    return len(rates) / sum(1 / r for r in rates)  # cases/s over the whole sweep


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", default="13", help="comma-separated ArgMin versions (default 13)")
    parser.add_argument("--cases", type=int, default=100, help="cases per (version, type) test")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions; medians are printed")
    args = parser.parse_args()
    try:
        versions = [spec.load(int(v)) for v in args.versions.split(",")]
    except (ValueError, spec.SpecError) as exc:
        parser.error(f"--versions {args.versions!r}: {exc}")
    if args.cases < BATCH:
        parser.error(f"--cases {args.cases}: at least {BATCH}, one batch")
    results: dict[str, list[float]] = {"floor": [], "ours": [], "single": [], "same": [], "small": []}
    for rep in range(args.repeat):
        for kind, rates in results.items():
            rates.append(measure(versions, kind, args.cases, rep))
    medians = {kind: statistics.median(rates) for kind, rates in results.items()}
    types = sorted({t.name for v in versions for t in v.types})
    print(f"versions {args.versions}; {len(types)} dtypes; {args.cases} cases per test; "
          f"medians of {args.repeat} repetitions (checked cases per second)")
    ms = {kind: 1e3 / rate for kind, rate in medians.items()}
    rows = ((f"ours, {BATCH} cases per example (suites)", "ours"), ("ours, 1 case per example", "single"),
            ("arrays() baseline, same shapes", "same"), ("arrays() baseline, small shapes", "small"))
    for label, kind in rows:
        ratio = "" if kind == "ours" else f"   ours / this = {medians['ours'] / medians[kind]:.1f}x"
        print(f"  {label:36s}{medians[kind]:9.0f}/s  {ms[kind]:6.3f} ms/case{ratio}")
    print(f"  Hypothesis floor (one draw, empty test body): {ms['floor']:.3f} ms/example. Above it, a case "
          f"costs {ms['single'] - ms['floor']:.3f} ms with one case per example and {ms['same'] - ms['floor']:.3f} ms "
          f"in the same-shapes baseline ({(ms['same'] - ms['floor']) / (ms['single'] - ms['floor']):.1f}x)")


if __name__ == "__main__":
    main()
