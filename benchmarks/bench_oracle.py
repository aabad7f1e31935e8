"""What the oracle's exactness costs: spec.oracle.argmin against np.argmin on the same large input.

Run from the checkout: ``python benchmarks/bench_oracle.py`` (``--help`` for options). Prints the
median time of each over several repetitions and their ratio, per dtype, reduced axis and tie
rule. np.argmin (first minimum) is the baseline for both tie rules: it is what the oracle would
cost if it trusted numpy without any exactness work."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import spec  # the checkout is not installed: see README
from spec.oracle import argmin

DEFAULT_DTYPES = "float,float16,bfloat16,int64,uint64"


def _median_ms(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _data(tensor_type: spec.TensorType, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """Values from a small range so that most rows hold repeated minima: both tie rules matter."""
    values = rng.integers(-50 if tensor_type.family != "unsigned" else 0, 50, size=shape)
    return values.astype(tensor_type.dtype)


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10**7, help="elements per input (default 10**7)")
    parser.add_argument("--rows", type=int, default=1000, help="length of the axis that is not reduced")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions per measurement (median)")
    parser.add_argument("--dtypes", default=DEFAULT_DTYPES, help=f"ONNX type names (default {DEFAULT_DTYPES})")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    known = spec.catalogue()
    unknown = [name for name in args.dtypes.split(",") if name not in known]
    if unknown:
        parser.error(f"unknown type {', '.join(unknown)}; known: {', '.join(known)}")
    if args.size % args.rows or args.repeat < 1:
        parser.error("--size must be a multiple of --rows, and --repeat at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    rng = np.random.default_rng(args.seed)
    shape = (args.rows, args.size // args.rows)
    print(f"{args.size:,} elements, shape {shape}, median of {args.repeat}, numpy {np.__version__}")
    print(f"{'dtype':<9} {'axis':<6} {'ties':<6} {'np.argmin ms':>13} {'oracle ms':>10} {'ratio':>6}")
    for name in args.dtypes.split(","):
        data = _data(spec.catalogue()[name], shape, rng)
        for label, axis in (("last", 1), ("first", 0)):
            baseline = _median_ms(lambda: np.argmin(data, axis=axis), args.repeat)  # noqa: B023
            for rule in ("first", "last"):
                oracle = _median_ms(lambda: argmin(data, axis, keepdims=False, last=rule == "last"),  # noqa: B023
                                    args.repeat)
                print(f"{name:<9} {label:<6} {rule:<6} {baseline:>13.1f} {oracle:>10.1f} {oracle / baseline:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
