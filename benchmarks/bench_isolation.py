"""What process isolation costs per call: the median seconds per call of a trivial numpy
implementation in each isolation mode, and how long a worker takes to start and load it (what a
crash costs before the next call). ``bench_all`` prints these figures beside the others.

Run from the checkout: ``python benchmarks/bench_isolation.py``."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.asking.isolation import ISOLATION_MODES, Runner  # noqa: E402

# The implementation measured, named by this file's path: the worker loads it as a plug-in file.
IMPL = f"{Path(__file__).resolve()}:trivial_argmin"


def trivial_argmin(data: np.ndarray, *, opset: int, axis: int = 0, keepdims: int = 1, **_: Any) -> np.ndarray:
    """The benchmark's implementation: as cheap as a correct-looking answer gets."""
    return np.argmin(data, axis=axis, keepdims=bool(keepdims))


def benchmark(calls: int = 2000, shape: tuple[int, ...] = (4, 8), starts: int = 7) -> dict[str, float]:
    """Median seconds per call of a trivial numpy implementation in each isolation mode, the
    per-call overhead of process isolation, and the median time a worker takes to start and
    load it (``start_s``: what a crash costs before the next call). Prints nothing: callers
    format the figures."""
    data = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    medians = {}
    for mode in ISOLATION_MODES:
        with Runner(IMPL, isolation=mode) as runner:
            runner.call(data, 13, {})  # warm-up: worker start and first imports
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                runner.call(data, 13, {"axis": 1})
                times.append(time.perf_counter() - start)
        medians[mode] = statistics.median(times)
    return {"process_s": medians["process"], "none_s": medians["none"],
            "overhead_s": medians["process"] - medians["none"], "ratio": medians["process"] / medians["none"],
            "start_s": statistics.median(_start_up(IMPL) for _ in range(starts))}


def _start_up(impl: str) -> float:
    """Seconds from a Runner's creation until its worker has loaded ``impl``."""
    start = time.perf_counter()
    with Runner(impl) as runner:
        runner.load()
        return time.perf_counter() - start


if __name__ == "__main__":
    figures = benchmark()
    print(f"median per call: process {figures['process_s'] * 1e6:.1f} us, in-process {figures['none_s'] * 1e6:.1f} us; "
          f"overhead {figures['overhead_s'] * 1e6:.1f} us ({figures['ratio']:.1f}x); worker start-up "
          f"{figures['start_s'] * 1e3:.0f} ms")
