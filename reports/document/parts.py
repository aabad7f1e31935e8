"""The report document's shape as types: what reports.aggregate builds and the renderers, comparison,
matrix, JUnit and baseline read. report.schema.json is the contract a reader of report.json relies
on; these say the same to the code (tests/test_document.py checks that they agree, key for key).
Keys the schema does not require (fields later document versions added) are the optional ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

SCHEMA_FILE = Path(__file__).resolve().with_name("report.schema.json")

Counts = dict[str, int]  # cases per outcome, every outcome present
Statuses = dict[str, int]  # census observations per status, every status present
Statement = dict[str, str]  # a clause's statement per language
Attributes = dict[str, int]


class Tensor(TypedDict):
    type: str
    shape: list[int]
    values: list[str]  # each element exactly as recorded
    display: str


Value = Tensor | str | None  # what came back: a tensor, the text of a refusal or error, or nothing


class Schedule(TypedDict):
    compile_key: str
    size: int
    signatures: int
    shapes: int


class _ModelUsage(TypedDict):
    suite: str
    form: str
    compiles: int
    loaded: int
    calls: int
    seconds: float


class ModelUsage(_ModelUsage, total=False):
    nodes: int  # runs recorded before nodes were counted have none


class _Run(TypedDict):
    impl: str
    profile: str
    seed: int | None
    versions: list[int]
    type_restriction: list[str] | None
    started: str
    duration_s: float
    complete: bool
    incomplete_reason: str | None
    cases_run: int
    census_records: int
    isolation: str
    timeout_s: float
    forms: list[str] | None
    claim: str


class Run(_Run, total=False):
    started_in: str | None
    profile_label: dict[str, str]
    profile_description: dict[str, str]
    packing: str
    models_compiled: int | None
    calls_made: int | None
    workers: int
    models_loaded: int | None
    model_seconds: float | None
    model_usage: list[ModelUsage] | None
    schedule: Schedule | None
    compile_cache: str | None
    planned: list[str] | None
    lost: list[str]


class Bound(TypedDict):
    what: str
    limit: int | None
    by: str | None
    reason: str | None


class _Sandbox(TypedDict):
    mechanism: str | None
    denies: list[str]
    reason: str | None


class Sandbox(_Sandbox, total=False):
    seccomp: str | None
    bounds: list[Bound]
    passed_env: list[str]


class Shard(TypedDict):
    index: int
    count: int


class Merged(TypedDict):
    merged: list[int]
    missing: list[int]


class _Baseline(TypedDict):
    source: str
    failures: int
    new: list[str]
    fixed: list[str]


class BaselineCause(TypedDict):
    status: str  # new, flaky, fixed or known
    text: str
    failures: int
    anchor: str | None


class Baseline(_Baseline, total=False):
    flaky: list[str]
    causes: list[BaselineCause]


class _Certificate(TypedDict):
    status: str
    reasons: list[str]
    implementation: str
    implementation_version: str | None
    device: str | None
    forms: list[str] | None
    suite_commit: str | None
    tree_clean: bool | None
    spec_sha256: str | None
    profile: str
    seed: int | None
    versions: list[int]
    types: list[str] | None
    isolation: str
    timeout_s: float
    cases: int
    results_digest: str


class IsaCap(TypedDict):
    variable: str  # e.g. ONEDNN_MAX_CPU_ISA
    value: str  # e.g. AVX2
    by: str  # "--isa" or "environment"


class Certificate(_Certificate, total=False):
    census_inputs: int
    cpu_isa: list[str] | None  # the CPU's extensions (results.cpu); None: not recorded
    isa_cap: IsaCap | None
    packing: str
    compile_cache: str | None
    sandbox: Sandbox
    shard: Shard | None
    merged: Merged | None
    baseline: Baseline | None


class _CauseType(TypedDict):
    type: str
    anchor: str


class CauseType(_CauseType, total=False):
    packed: bool  # failed only in packed models


class Cause(TypedDict):
    clause: str | None
    title: str
    outcome: str
    types: list[CauseType]
    every_type: bool
    census: bool


class Scope(TypedDict):
    claim: str
    claimed: list[str]
    implemented: list[str]
    not_implemented: list[str]
    untested: list[str]


class StrictnessClause(TypedDict):
    clause: str
    title: str
    refused: int
    computed: int
    faults: int
    computed_types: list[str]
    every_type: bool
    anchor: str


class Strictness(TypedDict):
    level: str
    clauses: list[StrictnessClause]


class CensusWarning(TypedDict):
    topic: str
    title: str
    warnings: list[str]
    anchor: str
    same_cause: str | None


class _Version(TypedDict):
    version: int
    verdict: str
    reason: str
    type_restriction: list[str] | None
    types: list[str]
    cases: int
    judged: int
    not_passed: int
    counts: Counts
    seconds: float
    causes: list[Cause]
    failing_clauses: list[str]
    scope: Scope
    strictness: Strictness
    census_warnings: list[CensusWarning]


class Version(_Version, total=False):
    inferred_only: bool


Quote = TypedDict("Quote", {"in": str, "text": str})


class ClauseCensus(TypedDict):
    records: int
    policy: list[str]
    coherent: bool
    warnings: list[str]


class _ClauseRow(TypedDict):
    version: int
    id: str
    kind: str
    title: str
    statement: Statement
    cases: int
    counts: Counts
    outcome: str
    types: dict[str, Counts]
    not_exercised: list[str]
    census: ClauseCensus | None
    anchor: str
    seconds: float
    failure_anchor: str | None


class ClauseRow(_ClauseRow, total=False):
    basis: str
    quotes: list[Quote]
    reasoning: dict[str, str]


class MatrixCell(TypedDict):
    version: int
    type: str
    in_t: bool
    declared: bool
    cases: int
    counts: Counts
    outcome: str
    anchor: str | None


class FormRow(TypedDict):
    form: str
    version: int
    cases: int
    counts: Counts
    outcome: str
    failing_clauses: list[str]


class Also(TypedDict):
    input: Tensor
    attributes: Attributes
    actual: Value


class PackNode(TypedDict):
    input: Tensor
    attributes: Attributes


class Pack(TypedDict):
    form: str
    position: int
    reproduced: bool
    nodes: list[PackNode]


class _Counterexample(TypedDict):
    input: Tensor
    attributes: Attributes
    expected: Value
    actual: Value
    problem: str
    message: str
    minimized: bool
    detail: str | None


class HistoryModel(TypedDict):
    version: int
    form: str | None
    nodes: list[PackNode]


class Counterexample(_Counterexample, total=False):
    also: list[Also]
    pack: Pack | None
    flaky: bool
    again: Value
    reproduction: str | None
    history: list[HistoryModel] | None
    after_history: Value


class _FailureCard(TypedDict):
    version: int
    clause: str | None
    type: str
    problem: str
    outcome: str
    kind: str
    suite: str
    test: str
    occurrences: int
    clause_title: str
    statement: Statement
    counterexample: Counterexample | None
    form: str | None
    replay: str | None
    standalone: str | None
    anchor: str
    role: str
    same_cause: str | None
    every_type: bool


class FailureCard(_FailureCard, total=False):
    basis: str
    packed: int | None


class Cover(TypedDict):
    version: int
    type: str
    form: str | None
    anchors: list[str]


class _Card(TypedDict):
    anchor: str
    clause: str | None
    clause_title: str
    problem: str
    outcome: str
    kind: str
    versions: list[int]
    types: list[str]
    failures: list[int]  # indexes into the document's failures
    representative: int
    occurrences: int
    forms: list[str]
    role: str
    same_cause: str | None
    clauses: list[str]
    every_type: bool
    covers: list[Cover]


class Card(_Card, total=False):
    packed: int | None


class CensusType(TypedDict):
    type: str
    records: int
    statuses: Statuses
    nondeterministic: int
    policy: list[str]
    answers: int
    exceptions: int
    coherent: bool


class CensusExample(TypedDict):
    type: str
    input: Tensor | None
    observed: Value
    attributes: Attributes
    fits: list[str]
    status: str
    deterministic: bool | None
    again: str | None
    flags: list[str]


class CensusFault(TypedDict):
    type: str
    form: str | None
    status: str
    input: Tensor
    attributes: Attributes
    observed: Value


class _CensusEntry(TypedDict):
    version: int
    topic: str
    group: str | None
    title: str
    statement: Statement
    records: int
    statuses: Statuses
    nondeterministic: int
    refused_types: list[str]
    types: list[CensusType]
    policy: list[str]
    coherent: bool
    warnings: list[str]
    flagged: dict[str, int]
    asked_again: str | None
    fits: dict[str, int]
    fits_nothing: int
    examples: list[CensusExample]
    anchor: str


class CensusEntry(_CensusEntry, total=False):
    faults: list[CensusFault]  # absent from reports written before it


class Grid(TypedDict):
    rows: str
    columns: str
    cases: list[list[int | None]]  # None where the pair of buckets does not fit the element budget
    empty: list[list[str]]


class ShapeGrid(TypedDict):
    buckets: list[str]
    grids: list[Grid]


class CoverageCell(TypedDict):
    version: int
    type: str
    kind: str
    in_t: bool
    tags: dict[str, int]
    reached: int
    possible: int
    unreached: list[str]
    groups: dict[str, list[int]]  # [reached, possible] per partition group


class Coverage(TypedDict):
    groups: list[str]
    cells: list[CoverageCell]


class FieldChange(TypedDict):
    field: str
    before: Any
    after: Any


class ClauseChange(TypedDict):
    kind: str
    title: str
    statement: Statement
    fields: list[FieldChange]
    reworded: bool


class AttributeSide(TypedDict):
    type: str
    default: int
    values: list[int] | None
    range: list[Any] | None  # [min, max, stated]


class AttributeChange(TypedDict):
    before: AttributeSide | None
    after: AttributeSide | None


class _Change(TypedDict):
    what: str
    name: str
    how: str
    detail: str


class Change(_Change, total=False):
    clause: ClauseChange
    attribute: AttributeChange


Difference = TypedDict("Difference", {"from": int, "to": int, "changes": list[Change]})


class Document(TypedDict):
    schema: str
    generated: str
    run: Run
    certificate: Certificate
    versions: list[Version]
    types: list[str]
    clauses: list[ClauseRow]
    matrix: list[MatrixCell]
    forms: list[FormRow]
    failures: list[FailureCard]
    cards: list[Card]
    census: list[CensusEntry]
    coverage: Coverage
    shape_grid: ShapeGrid
    differences: list[Difference]
    environment: dict[str, Any]  # as the run recorded it
