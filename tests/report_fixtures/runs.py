"""Synthetic but realistic RawRun objects for the report tests: several versions and types,
passes, failures with exact float16/bfloat16/uint64 counterexamples, census records with coherent
and incoherent policies, and an interrupted run."""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np

import spec
from results import CaseResult, CensusRecord, Counterexample, RawRun, RunInfo, Tensor
from results.records import ANOTHER_PROCESS, SAME_PROCESS

STUB = "tests/report_fixtures/stub_impl.py:fn"
SCRIPT = "<script>alert(1)</script>"
MARKUP = '<img src=x onerror="alert(2)"><b>bold</b>'
UNBROKEN = "x" * 300  # a word no line can hold
ENVIRONMENT = {
    "impl": STUB, "module": "stub_impl", "package_version": None,
    "packages": {"onnx": "1.17.0", "onnxruntime": "1.20.1", "numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__,
                 "hypothesis": "6.122.0"},
    "python": "CPython 3.11.2", "platform": "Linux-6.1.0-x86_64-with-glibc2.36", "cpu": "Synthetic CPU @ 2.0GHz",
    "cpu_isa": ["sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl"], "isa_cap": None,
    "git_commit": "95eb14c12235a6d4eb8b5963a91124c7cb566680", "git_dirty": True, "spec_sha256": "0" * 64,
}
SEMANTIC = ("C1", "C2", "C3", "C4", "C5", "C7", "C8")
TAGS = ("rank:1", "rank:2", "rank:5", "axis:negative", "axis:last", "keepdims:omitted", "keepdims:0",
        "ties:none", "ties:adjacent")
FLOAT_TAGS = ("special:-0", "special:subnormal", "special:inf")


def tensor(values: list, dtype: str, shape: list[int] | None = None) -> Tensor:
    """Exact strings of the values as stored in ``dtype`` (repr of each element, as the suites record)."""
    array = np.array(values, dtype=np.float64 if spec.catalogue()[dtype].is_float else object)
    array = array.astype(spec.catalogue()[dtype].dtype)
    return Tensor(dtype, shape or [len(values)], [repr(v) for v in array.tolist()])


def _passes(version: int, dtype: str, n: int) -> list[CaseResult]:
    family = spec.catalogue()[dtype].family
    tags = TAGS + (FLOAT_TAGS if family == "float" and not (version == 1 and dtype == "float16") else ())
    return [CaseResult(version, dtype, "property", "semantic", "pass", list(SEMANTIC), None,
                       [f"type:{dtype}", tags[i % len(tags)], tags[(i * 3 + 1) % len(tags)]],
                       f"suites/test_semantic.py::test_minimum[{version}-{dtype}]", 0.001) for i in range(n)]


def _rejections(version: int) -> list[CaseResult]:
    return [CaseResult(version, "int32", "rejection", "rejection", "pass", ["C10"], "C10", ["axis:too-big"]),
            CaseResult(version, "bool", "rejection", "rejection", "pass", ["C12"], "C12", ["type:bool"])]


def _failure(version: int, dtype: str, clause: str, problem: str, data: Tensor, attributes: dict,
             expected: Tensor | str, actual: Tensor | str, message: str, outcome: str = "fail",
             kind: str = "semantic") -> CaseResult:
    ce = Counterexample(data, attributes, expected, actual, problem, message)
    return CaseResult(version, dtype, "property", kind, outcome, list(SEMANTIC) if kind == "semantic" else [clause],
                      clause, [f"type:{dtype}", "rank:1"], f"suites/test_semantic.py::test_{problem}", 0.002, ce)


def _census(version: int, topic: str, dtype: str, values: list, observed: list, fits: list[str],
            attributes: dict | None = None) -> CensusRecord:
    return CensusRecord(version, dtype, topic, tensor(values, dtype), attributes or {"axis": 0},
                        tensor(observed, "int64", [1]), fits)


def _observed(census: list[CensusRecord]) -> list[CaseResult]:
    """The census cases that produced the records (never judged)."""
    return [CaseResult(r.version, r.type_name, "census", "undefined", "observed", [r.topic], r.topic,
                       [f"type:{r.type_name}"]) for r in census]


def failing_run() -> RawRun:
    """ArgMin-1..13 on an implementation with several classic bugs."""
    results: list[CaseResult] = []
    for version in (1, 11, 12, 13):
        for dtype in spec.load(version).type_names:
            results += _passes(version, dtype, 6)
        results += _rejections(version)
    results += [
        _failure(13, "bfloat16", "C5", "not-a-minimum", tensor([1.0, -3.3895313892515355e38, 0.0078125], "bfloat16"),
                 {"axis": 0}, tensor([1], "int64", [1]), tensor([2], "int64", [1]),
                 "index 2 holds 0.0078125 but index 1 holds -3.39e+38 (bfloat16 computed through float16?)"),
        _failure(13, "bfloat16", "C5", "not-a-minimum", tensor([2.0, 1.0, 0.5, -1.0e30], "bfloat16"),
                 {"axis": 0}, tensor([3], "int64", [1]), tensor([2], "int64", [1]), "larger counterexample"),
        _failure(12, "float16", "C6", "wrong-tie",
                 tensor([5.960464477539063e-08, -0.0, 0.0, 5.960464477539063e-08], "float16", [2, 2]),
                 {"axis": 1, "select_last_index": 1}, tensor([1, 1], "int64", [2, 1]), tensor([0, 1], "int64", [2, 1]),
                 "-0.0 and 0.0 tie: select_last_index=1 requires the last of them"),
        _failure(11, "uint64", "C5", "not-a-minimum", tensor([18446744073709551615, 18446744073709551614], "uint64"),
                 {}, tensor([1], "int64", [1]), tensor([0], "int64", [1]),
                 "the values differ by 1 but compare equal through float64"),
        _failure(11, "int64", "C5", "not-a-minimum", tensor([-9223372036854775807, -9223372036854775808], "int64"),
                 {"keepdims": 0}, tensor([1], "int64", []), tensor([0], "int64", []), "int64 extremes"),
        _failure(13, "float8e4m3fn", "C12", "missing-rejection", tensor([1.0, 0.5], "float8e4m3fn"), {},
                 "must raise: float8e4m3fn is not in T", tensor([1], "int64", [1]),
                 "returned a result for a type outside T", outcome="missing-rejection", kind="rejection"),
        _failure(12, "double", "C1", "crash", tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "double", [1, 1, 1, 1, 1, 6]),
                 {"axis": -1}, tensor([0], "int64", [1, 1, 1, 1, 1, 1]), "worker died: signal 11 (SIGSEGV)",
                 "the implementation crashed on a rank-6 input", outcome="crash"),
    ]
    census = [
        # NaN at v13: coherent (NaN is the minimum everywhere).
        _census(13, "C14", "float", [1.0, float("nan"), 0.0], [1], ["nan-is-min"]),
        _census(13, "C14", "bfloat16", [float("nan"), -1.0], [0], ["nan-is-min"]),
        # NaN at v12: depends on position -> no coherent policy.
        _census(12, "C14", "float16", [1.0, float("nan"), 0.0], [1], ["nan-is-min"]),
        _census(12, "C14", "float16", [float("nan"), 1.0, 0.0], [2], ["nan-ignored"]),
        _census(12, "C14", "float", [float("nan"), float("nan"), 3.0], [1], []),
        # Ties at v1 (always the first) and v11 (first or last, by length).
        _census(1, "C6", "int32", [2, 1, 1], [1], ["first"]),
        _census(1, "C6", "float", [0.0, -0.0], [0], ["first"]),
        _census(11, "C6", "int8", [3, 3], [0], ["first"]),
        _census(11, "C6", "uint8", [7, 7, 7, 7, 7, 7, 7, 7, 7], [8], ["last"]),
        # Empty reduced axis at v13: always raises.
        CensusRecord(13, "float", "C15", Tensor("float", [0, 2], []), {"axis": 0}, "RuntimeError: empty axis",
                     ["raised"]),
    ]
    results += _observed(census)
    info = RunInfo(impl=STUB, versions=[1, 11, 12, 13], type_names=None, profile="quick", seed=12345,
                   started="2026-11-29T17:00:00+00:00", duration_s=42.5)
    return RawRun(info, dict(ENVIRONMENT), results, census)


def passing_run() -> RawRun:
    """ArgMin-12 and -13 all passing, restricted to float and double."""
    results = []
    for version in (12, 13):
        for dtype in ("float", "double"):
            results += _passes(version, dtype, 5)
        results += _rejections(version)
    census = [_census(13, "C14", "float", [1.0, float("nan")], [1], ["nan-is-min"])]
    results += _observed(census)
    info = RunInfo(impl=STUB, versions=[12, 13], type_names=["float", "double"], profile="quick", seed=7,
                   started="2026-11-29T16:00:00+00:00", duration_s=3.0)
    return RawRun(info, dict(ENVIRONMENT), results, census)


def incomplete_run() -> RawRun:
    """The failing run cut short by an interruption."""
    raw = failing_run()
    reason = "interrupted (KeyboardInterrupt) after 150 cases"
    info = dataclasses.replace(raw.info, complete=False, incomplete_reason=reason)
    return RawRun(info, raw.environment, raw.results[:150], raw.census[:2])


def refusing_run() -> RawRun:
    """onnxruntime's shape of failure: no kernel for some types (the refusal names the version),
    plus one different error; everything it computes is right."""
    results: list[CaseResult] = []
    for version in (1, 13):
        for dtype in spec.load(version).type_names:
            refused = dtype in ("int16", "uint16") or (version == 13 and dtype == "bfloat16")
            if refused:
                text = (f"unsupported: NotImplementedError: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find "
                        f"an implementation for ArgMin({version}) node with name ''")
                results.append(_failure(version, dtype, "C1", "unsupported", tensor([0], dtype), {},
                                        tensor([0], "int64", [1]), text, f"valid input answered with {text}",
                                        outcome="unsupported"))
            else:
                results += _passes(version, dtype, 3)
        results += _rejections(version)
    results.append(_failure(1, "float16", "C1", "error", tensor([0.0], "float16"), {}, tensor([0], "int64", [1]),
                            "raised: OnnxRuntimeError: INVALID_GRAPH", "valid input answered with raised: "
                            "OnnxRuntimeError: INVALID_GRAPH", outcome="error"))
    census = [  # onnxruntime's NaN rule: NaN wins only at index 0 of its slice
        _census(1, "C14", "float", [float("nan"), 1.0], [0], ["nan-first-only", "nan-is-min"]),
        _census(1, "C14", "float", [2.0, float("nan"), 1.0], [2], ["nan-first-only", "nan-ignored"]),
    ]
    results += _observed(census)
    info = RunInfo(impl="onnxruntime", versions=[1, 13], type_names=None, profile="standard", seed=7,
                   started="2026-11-29T18:00:00+00:00", duration_s=60.0)
    environment = {**ENVIRONMENT, "impl": "onnxruntime", "module": "onnxruntime", "version": "1.32.0"}
    return RawRun(info, environment, results, census)


def hostile_run() -> RawRun:
    """A failing run whose implementation returns and raises markup everywhere it can, and words
    too long for any line."""
    raw = failing_run()
    ce = Counterexample(tensor([1.0, 0.0], "float"), {"axis": 0}, tensor([1], "int64", [1]), f"{SCRIPT} {UNBROKEN}",
                        "error", f"the implementation raised: {MARKUP}\x00\x1b[31m {UNBROKEN}")
    raw.results.append(CaseResult(13, "float", "property", "semantic", "error", ["C1"], "C1", ["rank:1"],
                                  f"suites/test_semantic.py::test_{UNBROKEN}", 0.0, ce))
    raw.census.append(CensusRecord(13, "float", "C14", tensor([float("nan")], "float"), {},
                                   f"ValueError: {SCRIPT}", []))
    raw.census += garbage_census()
    raw.environment["module"] = MARKUP
    raw.environment["version"] = UNBROKEN
    return raw


def garbage_census() -> list[CensusRecord]:
    """Census records of every warning and reading the census has beyond policies: uninitialised
    memory that differs between processes (OpenVINO's), a shape no reading gives (asked twice in
    one process only), a NaN rule of its own, and raising exactly on an empty reduced axis."""
    nan = float("nan")
    empty = Tensor("uint8", [0, 3], [])
    return [
        CensusRecord(12, "uint8", "C15", empty, {"axis": 0}, tensor([-1966026992, 21905, 1], "int64", [1, 3]),
                     ["returned"], deterministic=False, again=ANOTHER_PROCESS, flags=["not-an-index"]),
        CensusRecord(12, "float", "C17", tensor([1.0, 0.0], "float"), {"keepdims": 2},
                     tensor([0, 0], "int64", [2, 1]), ["returned"], again=SAME_PROCESS, flags=["wrong-shape"]),
        CensusRecord(1, "float", "C14", tensor([nan, 1.0, 0.0], "float"), {}, tensor([0], "int64", [1]),
                     ["nan-first-only", "nan-is-min"], again=ANOTHER_PROCESS),
        CensusRecord(1, "float", "C14", tensor([1.0, nan, 0.0], "float"), {}, tensor([0], "int64", [1]), [],
                     again=ANOTHER_PROCESS),
        CensusRecord(11, "float", "C16", Tensor("float", [0, 2], []), {"axis": 0}, "raised: ValueError: empty axis",
                     ["raised", "raises-on-empty-axis"], "raised", again=ANOTHER_PROCESS),
        CensusRecord(11, "float", "C16", Tensor("float", [0, 2], []), {"axis": 1}, tensor([], "int64", [0, 1]),
                     ["returned", "raises-on-empty-axis"], again=ANOTHER_PROCESS),
    ]
