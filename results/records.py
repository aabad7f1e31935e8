"""Results as plain data: one record per judged case and one per census observation, and the
run they belong to. The engine writes them while running; the reports read them later, from
these records alone (they round-trip through JSON).

Names: ``version`` is always the ArgMin version number (1, 11, 12, 13); ``type_name`` is always
an ONNX element type name (``float16``, ``bfloat16``); a numpy dtype is only ever called ``dtype``."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict, dataclass, field, fields
from functools import cache
from typing import Any

from .outcomes import RETURNED

# The first [...] of a pytest node id: the task's id (engine.config.plan.Task.id).
_TASK_ID = re.compile(r"\[([^\]]*)\]")


@dataclass
class Tensor:
    """An array written exactly: values as strings (repr of each element), so float16 and
    bfloat16 values, -0.0, NaN and 64-bit integers survive the trip through JSON."""

    type_name: str  # ONNX type name (float16, bfloat16, ...), or numpy's name for a dtype ONNX lacks
    shape: list[int]
    values: list[str]  # flattened, C order


@dataclass
class Example:
    """Another input that fails the same way as a counterexample, and what came back."""

    input: Tensor
    attributes: dict[str, int]
    actual: Tensor | str | None


@dataclass
class PackNode:
    """One node of a packed model: its exact input and attributes."""

    input: Tensor
    attributes: dict[str, int]


@dataclass
class Pack:
    """The packed model a failure showed in, where its one-node model answers right: every node
    in order (the failing case's at ``position``), in the model ``form``, so that the replays
    rebuild it (models.packed_model). The smallest pack found that still fails the same way, or
    the pack it was found in; ``reproduced`` is False where that one, asked again, answered right
    (the failure stands as observed)."""

    form: str
    position: int
    nodes: list[PackNode]
    reproduced: bool = True


# Where a failure reproduces, asked again in a fresh worker process (one that ran nothing of the
# test that found it: engine.judging.reproduce): it fails there too (its replays fail as files);
# it fails there only after some of the models the worker that found it ran before it (the
# shortest such history, which its replays run first); or it does not fail again either way.
REPRODUCES_ALONE, NEEDS_HISTORY, FLAKY = "reproduces-alone", "needs-history", "flaky"
REPRODUCTIONS = (REPRODUCES_ALONE, NEEDS_HISTORY, FLAKY)


@dataclass
class HistoryModel:
    """One model a worker ran before a failure, as the replays run it again: at ``version``, in
    model ``form`` (None: a plain function's call), one node (a one-node model, or the call) or
    more (exactly that packed model, its nodes in order)."""

    version: int
    form: str | None
    nodes: list[PackNode]


@dataclass
class Counterexample:
    """Everything needed to replay a failure: the exact input and attributes (the version is
    the result's), what the spec expected, what came back and why it is wrong; up to three
    varied inputs that fail the same way (``also``), to show the extent of the bug; and for a
    failure only packed models show, the packed model (``pack``)."""

    input: Tensor
    attributes: dict[str, int]
    expected: Tensor | str | None  # a tensor, or a description ("must raise", "first minimum")
    actual: Tensor | str | None  # a tensor, or the exception / crash / timeout description
    problem: str  # dtype, shape, index-range, not-a-minimum, wrong-tie, unsupported, error, ...
    message: str
    minimized: bool = True  # False where minimizing was cut short (crash or hang budget)
    also: list[Example] = field(default_factory=list)
    pack: Pack | None = None
    # Asked once more after it was found, the same way (one-node, or exactly its recorded pack):
    # in a fresh worker process (``reproduction``), or, with --isolation none, in the same process.
    # ``again`` is that answer (None where it was not asked again), ``flaky`` that neither it nor
    # the answer after the worker's history was wrong: a flake, still a failure.
    flaky: bool = False
    again: Tensor | str | None = None
    reproduction: str | None = None  # one of REPRODUCTIONS; None: not asked in a fresh worker
    # For a failure that needs history: the shortest sequence of the models the worker that found it
    # ran before it after which a fresh worker fails it again, and that answer; for a flake, the
    # answer after every model held of that history (None where none was held).
    history: list[HistoryModel] | None = None
    after_history: Tensor | str | None = None


@dataclass
class CaseResult:
    """One judged case.

    ``clauses`` are the clauses the case actually put to the test (a valid input the
    implementation refused tested only C1, not the output clauses); ``clause`` is the deciding
    one: the violated clause of a failure, the rejection clause of a rejection case, the
    undefined clause (census topic) of a census case, or None for a semantic pass; ``violated``
    lists every clause the case violated (an int32 answer may also point at the wrong index)."""

    version: int
    type_name: str
    suite: str  # fixed, property, rejection, census
    kind: str  # semantic, rejection, undefined
    outcome: str  # one of OUTCOMES, or OBSERVED (results.outcomes)
    clauses: list[str]
    clause: str | None = None
    tags: list[str] = field(default_factory=list)
    test: str = ""  # the pytest node id that produced it
    duration_s: float = 0.0
    counterexample: Counterexample | None = None
    violated: list[str] = field(default_factory=list)
    problem: str | None = None  # the deciding failure's problem (dtype, not-a-minimum, crash, ...)
    # Short digests of the input and of the implementation's answer (results.digest), recorded
    # for every case so the run's results can be checked and compared without the tensors.
    input_digest: str = ""
    answer_digest: str = ""
    form: str | None = None  # the model form (symbolic, static, initializer); None for a function plug-in
    # A failure that shows only in a packed model: its node count (the one-node model of the same
    # case answers right); None for everything else (engine.judging.session.Session._judged_alone).
    packed: int | None = None

    @property
    def test_key(self) -> str:
        """The name of the test that recorded it across shards and runs, as a shard's run lists
        its tests (engine.config.shards.test_key): its suite and the task id in its pytest node id."""
        return test_key(self.suite, self.test)


def test_key(suite: str, node_id: str) -> str:
    """A test's name across shards and runs from its suite and pytest node id: the suite and the
    task id in the node id (engine.config.shards.test_key names a task the same way)."""
    found = _TASK_ID.search(node_id)
    return f"{suite}:{found[1] if found else node_id}"


@dataclass
class TestEnd:
    """The mark a test leaves once it has delivered every record it made: how many case and
    census records they were. A planned test without one, or whose records the run does not hold
    in full, was lost (its process died, say), and the run is incomplete."""

    test: str  # its test key (``test_key``)
    results: int
    census: int


# Where a census input was asked the second time: in a second worker process (an answer read
# from uninitialised memory differs there), or in the same process (--isolation none).
ANOTHER_PROCESS, SAME_PROCESS = "another-process", "same-process"


@dataclass
class CensusRecord:
    """What an implementation did with an input the standard leaves undefined.

    ``fits`` lists the named policies the observation is consistent with (for NaN:
    ``nan-is-min``, ``nan-ignored``; for ties: ``first``, ``last``; for other topics the
    behaviour seen, ``raised`` or ``returned``, and readings such as ``as-keepdims-1``). An
    empty list fits no policy. ``group`` splits a topic where inputs differ in kind (ArgMin-1
    negative axes: within [-r, -1] or below -r). ``deterministic`` says whether the same input,
    asked again, got the same answer (None where it was not asked again: crash, timeout);
    ``again`` where it was asked again (ANOTHER_PROCESS or SAME_PROCESS; None: not asked again).
    ``flags`` are census warnings about the answer itself (engine.judging.census.flags: ``wrong-shape``,
    ``not-an-index``). ``form`` is the model form it was asked in, as a case result's (None for a
    function plug-in, and in runs recorded before census records named it)."""

    version: int
    type_name: str
    topic: str  # the undefined clause id, e.g. C14
    input: Tensor | None  # None for large inputs (see engine.judging.judge.CENSUS_EXAMPLE_LIMIT)
    attributes: dict[str, int]
    observed: Tensor | str | None  # the returned tensor (None when large), or the exception text
    fits: list[str]
    status: str = RETURNED  # one of CENSUS_STATUSES (results.outcomes)
    group: str | None = None
    deterministic: bool | None = True
    again: str | None = None
    flags: list[str] = field(default_factory=list)
    form: str | None = None


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
    profile_label: dict[str, str] = field(default_factory=dict)  # by language, e.g. {"en": "smoke test"}
    profile_description: dict[str, str] = field(default_factory=dict)  # what the profile checks and proves
    forms: list[str] | None = None  # model forms run (model-based implementations only)
    impl_portable: str | None = None  # impl with any file path made absolute: what replay snippets load
    started_in: str | None = None  # the folder the run was started in, from which a relative impl path is read
    claim: str = "implemented"  # --claim: the types the headline covers (results.verdict.CLAIMS)
    packing: str = "off"  # --packing: whether valid and census cases were asked through packed models (runs
    # recorded before the option existed had none)
    # Models the implementation compiled and calls made in the whole run (model-based
    # implementations; None for a plain function or a run that recorded none): see Usage.
    models_compiled: int | None = None
    calls_made: int | None = None
    workers: int = 1  # processes that ran the tests (pytest-xdist workers), each with its implementation
    models_loaded: int | None = None  # models loaded from the compile cache instead of compiled (see Usage)
    model_seconds: float | None = None  # the time compiling and loading them took
    # The same counts by suite and model form: [{"suite", "form", "compiles", "loaded", "calls", "seconds",
    # "nodes"}].
    model_usage: list[dict[str, Any]] | None = None
    # Where tests drew their cases within schedules (engine.config.schedules.record): {"compile_key",
    # "size", "signatures", "shapes"}; None where every case drew freely.
    schedule: dict[str, Any] | None = None
    compile_cache: str | None = None  # --compile-cache: "on" or "off"; None where the implementation has none
    # --shard: {"index", "count", "plan_sha256", "plan_tests", "tests"} (engine.config.shards.record);
    # None for a whole run
    shard: dict[str, Any] | None = None
    # A report merged from shards: {"count", "merged": [indices], "missing": [indices]} (reports.merge)
    merged: dict[str, Any] | None = None
    # --baseline: {"source", "failures", "new", "fixed"} (reports.baseline.compare); None without one
    baseline: dict[str, Any] | None = None
    # The tests the run collected (test keys, sorted), each of which must leave a TestEnd; None where
    # the run recorded no plan (runs made before it did). ``lost``: those that left none, or whose
    # records the run does not hold in full.
    planned: list[str] | None = None
    lost: list[str] | None = None


def lost_tests(run: RawRun) -> list[str]:
    """The planned tests of ``run`` that left no end mark, or whose case records it does not hold
    as their end mark counts them (sorted); [] where it recorded no plan."""
    if run.info.planned is None:
        return []
    held = Counter(result.test_key for result in run.results)
    ended = {end.test: end for end in run.ends}
    return sorted(key for key in run.info.planned if key not in ended or held[key] != ended[key].results)


def missing_census(run: RawRun) -> int:
    """Census records the tests' end marks count that ``run`` does not hold (0 where it recorded no plan)."""
    return 0 if run.info.planned is None else max(0, sum(end.census for end in run.ends) - len(run.census))


REPRODUCE = "reproduce"  # the Usage.suite of failures asked again in fresh workers (engine.judging.reproduce)


@dataclass
class Usage:
    """Models compiled and calls made by one process of a run in one test (its suite and model
    form); the run's totals (RunInfo.models_compiled, calls_made, ...) are their sums."""

    compiles: int
    calls: int
    loaded: int = 0  # models loaded from the compile cache instead of compiled
    seconds: float = 0.0  # the time compiling and loading models took
    suite: str | None = None
    form: str | None = None
    nodes: int = 0  # the nodes the compiled models held


@dataclass
class RawRun:
    """Everything a run recorded, before aggregation."""

    info: RunInfo
    environment: dict[str, Any]
    results: list[CaseResult] = field(default_factory=list)
    census: list[CensusRecord] = field(default_factory=list)
    ends: list[TestEnd] = field(default_factory=list)


def to_json(value: Any) -> Any:
    """Plain JSON-ready data from the dataclasses above."""
    return asdict(value) if hasattr(value, "__dataclass_fields__") else value


def dumps(value: Any) -> str:
    """``json.dumps(to_json(value), ensure_ascii=False)``, the same text, without the deep copy
    that ``asdict`` makes of every field first: the encoder asks for a record's fields when it
    meets the record (a certify run writes some 300,000 of them)."""
    return json.dumps(value, default=_fields, ensure_ascii=False)


@cache
def _names(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(kind))


def _fields(value: Any) -> dict[str, Any]:
    if not hasattr(type(value), "__dataclass_fields__"):
        raise TypeError(f"{type(value).__name__} is not a record")
    return {name: getattr(value, name) for name in _names(type(value))}


def _tensor(value: Any) -> Any:
    return Tensor(**value) if isinstance(value, dict) else value


def result_from_json(item: dict[str, Any]) -> CaseResult:
    item = dict(item)
    if item.get("counterexample"):
        ce = dict(item["counterexample"])
        for key in ("input", "expected", "actual", "again"):
            if key in ce:
                ce[key] = _tensor(ce[key])
        ce["also"] = [Example(_tensor(e["input"]), e["attributes"], _tensor(e["actual"])) for e in ce.get("also", [])]
        if ce.get("pack"):
            ce["pack"] = Pack(**{**ce["pack"], "nodes": _nodes(ce["pack"]["nodes"])})
        if ce.get("history") is not None:
            ce["history"] = [HistoryModel(m["version"], m["form"], _nodes(m["nodes"])) for m in ce["history"]]
        if "after_history" in ce:
            ce["after_history"] = _tensor(ce["after_history"])
        item["counterexample"] = Counterexample(**ce)
    return CaseResult(**item)


def _nodes(items: list[dict[str, Any]]) -> list[PackNode]:
    return [PackNode(_tensor(n["input"]), n["attributes"]) for n in items]


def census_from_json(item: dict[str, Any]) -> CensusRecord:
    return CensusRecord(**{**item, "input": _tensor(item["input"]), "observed": _tensor(item["observed"])})


def from_json(document: dict[str, Any]) -> RawRun:
    """Rebuild a RawRun from ``to_json(raw_run)`` output."""
    return RawRun(RunInfo(**document["info"]), document["environment"],
                  [result_from_json(item) for item in document["results"]],
                  [census_from_json(item) for item in document["census"]],
                  [TestEnd(**item) for item in document.get("ends", ())])
