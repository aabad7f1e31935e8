"""Results as plain data: one record per judged case and one per census observation, and the
run they belong to. The engine writes them while running; the reports read them later, from
these records alone (they round-trip through JSON).

Names: ``version`` is always the ArgMin version number (1, 11, 12, 13); ``type_name`` is always
an ONNX element type name (``float16``, ``bfloat16``); a numpy dtype is only ever called ``dtype``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Outcomes of a case on a semantic or rejection clause. Census cases are never judged: they
# get the outcome "observed".
OUTCOMES = ("pass", "fail", "unsupported", "error", "missing-rejection", "crash", "timeout")
CENSUS = "observed"


@dataclass
class Tensor:
    """An array written exactly: values as strings (repr of each element), so float16 and
    bfloat16 values, -0.0, NaN and 64-bit integers survive the trip through JSON."""

    type_name: str  # ONNX type name (float16, bfloat16, ...), or numpy's name for a dtype ONNX lacks
    shape: list[int]
    values: list[str]  # flattened, C order


@dataclass
class Counterexample:
    """Everything needed to replay a failure: the exact input and attributes (the version is
    the result's), what the spec expected, what came back and why it is wrong."""

    input: Tensor
    attributes: dict[str, int]
    expected: Tensor | str | None  # a tensor, or a description ("must raise", "first minimum")
    actual: Tensor | str | None  # a tensor, or the exception / crash / timeout description
    problem: str  # dtype, shape, index-range, not-a-minimum, wrong-tie, unsupported, error, ...
    message: str
    minimized: bool = True  # False where shrinking was cut short (crash or hang budget)


@dataclass
class CaseResult:
    """One judged case.

    ``clauses`` are every clause the case exercised; ``clause`` is the deciding one: the
    violated clause of a failure, the rejection clause of a rejection case, the undefined
    clause (census topic) of a census case, or None for a semantic pass."""

    version: int
    type_name: str
    suite: str  # fixed, property, rejection, census
    kind: str  # semantic, rejection, undefined
    outcome: str  # one of OUTCOMES, or CENSUS
    clauses: list[str]
    clause: str | None = None
    tags: list[str] = field(default_factory=list)
    test: str = ""  # the pytest node id that produced it
    duration_s: float = 0.0
    counterexample: Counterexample | None = None


@dataclass
class CensusRecord:
    """What an implementation did with an input the standard leaves undefined.

    ``fits`` lists the named policies the observation is consistent with (for NaN:
    ``nan-is-min``, ``nan-ignored``; for ties: ``first``, ``last``; for other topics the
    behaviour seen, e.g. ``raised`` or ``returned``). An empty list fits no policy."""

    version: int
    type_name: str
    topic: str  # the undefined clause id, e.g. C14
    input: Tensor | None  # None for large inputs (see engine.judge.CENSUS_EXAMPLE_LIMIT)
    attributes: dict[str, int]
    observed: Tensor | str | None  # the returned tensor (None when large), or the exception text
    fits: list[str]


@dataclass
class RunInfo:
    impl: str
    versions: list[int]
    type_names: list[str] | None  # the declared type restriction, None for all of T
    profile: str
    seed: int | None
    started: str  # ISO 8601, UTC
    duration_s: float = 0.0
    complete: bool = True
    incomplete_reason: str | None = None
    isolation: str = "process"
    timeout_s: float = 10.0
    lang: str = "en"
    memory_limit_bytes: int | None = None  # the worker's memory limit (process isolation); None: none


@dataclass
class RawRun:
    """Everything a run recorded, before aggregation."""

    info: RunInfo
    environment: dict[str, Any]
    results: list[CaseResult] = field(default_factory=list)
    census: list[CensusRecord] = field(default_factory=list)


def to_json(value: Any) -> Any:
    """Plain JSON-ready data from the dataclasses above."""
    return asdict(value) if hasattr(value, "__dataclass_fields__") else value


def _tensor(value: Any) -> Any:
    return Tensor(**value) if isinstance(value, dict) else value


def result_from_json(item: dict[str, Any]) -> CaseResult:
    item = dict(item)
    if item.get("counterexample"):
        ce = dict(item["counterexample"])
        for key in ("input", "expected", "actual"):
            ce[key] = _tensor(ce[key])
        item["counterexample"] = Counterexample(**ce)
    return CaseResult(**item)


def census_from_json(item: dict[str, Any]) -> CensusRecord:
    return CensusRecord(**{**item, "input": _tensor(item["input"]), "observed": _tensor(item["observed"])})


def from_json(document: dict[str, Any]) -> RawRun:
    """Rebuild a RawRun from ``to_json(raw_run)`` output."""
    return RawRun(RunInfo(**document["info"]), document["environment"],
                  [result_from_json(item) for item in document["results"]],
                  [census_from_json(item) for item in document["census"]])
