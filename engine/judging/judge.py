"""Judging one reply of the implementation against the spec: the outcome, every clause it
violates and, for failures, the evidence; for undefined inputs, census records instead.

The judge asks nothing itself. Sharpening a failure's blame takes answers to the same input asked
again (the same call, then variants of its attributes), and a census record takes the input's
second answer: ``verdict`` is a function of the case, its reply and the answers asked so far,
which returns the judgement, or the next ``Ask`` where it needs one more (whoever asks it, the
session or a test, then calls it again with that answer too). ``judge`` drives it to the end
through callbacks that ask."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from engine.asking.calls import Reply
from engine.judging import census
from generators import Case
from results import CaseResult, CensusRecord, Counterexample, Example, Tensor
from results.digest import answer_digest, input_digest
from results.outcomes import (
    CRASH,
    ERROR,
    FAIL,
    FAULTS,
    MISSING_REJECTION,
    OBSERVED,
    OK,
    OVERSIZE,
    PASS,
    RAISED,
    RETURNED,
    TIMEOUT,
    UNSUPPORTED,
)
from results.records import SAME_PROCESS
from results.tensors import to_tensor
from spec import VersionSpec, load
from spec.oracle import Expectation, Violation, expect, read, verify, violations

# The failure a reply status stands for on a valid input, and on one that must be rejected.
_ON_VALID = {UNSUPPORTED: UNSUPPORTED, RAISED: ERROR, CRASH: CRASH, TIMEOUT: TIMEOUT}
_ON_INVALID = {OK: MISSING_REJECTION, OVERSIZE: MISSING_REJECTION, RAISED: PASS, UNSUPPORTED: PASS,
               CRASH: CRASH, TIMEOUT: TIMEOUT}
# A census observation's status, from the reply's (an oversize answer was returned, just not kept).
_CENSUS_STATUS = {OK: RETURNED, OVERSIZE: RETURNED, RAISED: RAISED, UNSUPPORTED: UNSUPPORTED,
                  CRASH: CRASH, TIMEOUT: TIMEOUT}

# The problem of a failure whose worker answered the same call two ways (``_reattribute``).
NONDETERMINISTIC = "nondeterministic"

Call = Callable[[np.ndarray, Mapping[str, int]], Reply]
# The census's second ask of a case: the reply, and where it was asked (results.records
# ANOTHER_PROCESS or SAME_PROCESS).
Second = tuple[Reply, str]
Again = Callable[[], Second]


@dataclass(frozen=True)
class Ask:
    """What judging a case needs asked next: the case's input with ``attributes`` (its own: the
    same call again; others: a variant), or (``second``) the census's second ask of the case."""

    attributes: Mapping[str, int]
    second: bool = False


class _Needed(Exception):
    """Judging reached an answer it was not given: ``ask`` it."""

    def __init__(self, ask: Ask) -> None:
        super().__init__(ask)
        self.ask = ask


class _Answers:
    """The answers given to ``verdict``, read in the order judging needs them; the first missing
    one stops judging with its Ask."""

    def __init__(self, case: Case, asked: Sequence[Reply], second: Second | None) -> None:
        self._case, self._asked, self._second, self._read = case, asked, second, 0

    def again(self, attributes: Mapping[str, int]) -> Reply:
        """The case's input asked once more with ``attributes``."""
        if self._read == len(self._asked):
            raise _Needed(Ask(dict(attributes)))
        self._read += 1
        return self._asked[self._read - 1]

    def second(self) -> Second:
        """The census's second answer to the case, and where it was asked."""
        if self._second is None:
            raise _Needed(Ask(dict(self._case.attributes), second=True))
        return self._second


@dataclass(frozen=True)
class Failure:
    """One way a case fails: the clause it violates, the kind of problem, and why."""

    clause: str
    problem: str  # dtype, shape, index-range, not-a-minimum, wrong-tie, nondeterministic, or the outcome (crash, ...)
    message: str


@dataclass
class Judgement:
    """A judged case: its result, census records, and every way it failed (deciding first)."""

    case: Case
    reply: Reply
    result: CaseResult
    census: list[CensusRecord]
    failures: list[Failure]
    expected: object = None  # what the spec required: an array or a description

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    def recorded_as(self, failure: Failure) -> CaseResult:
        """The result recorded for this case as an instance of ``failure``."""
        return replace(self.result, clause=failure.clause, problem=failure.problem)

    def evidence(self, failure: Failure) -> Counterexample:
        """The exact counterexample for one of its failures (built only for the one reported:
        while Hypothesis shrinks, many failures are judged and few are written out)."""
        shown = to_tensor(self.expected) if isinstance(self.expected, np.ndarray) else self.expected
        return Counterexample(input=to_tensor(self.case.data), attributes=dict(self.case.attributes),
                              expected=shown, actual=answer(self.reply), problem=failure.problem,
                              message=failure.message)

    def example(self) -> Example:
        return Example(to_tensor(self.case.data), dict(self.case.attributes), answer(self.reply))


def answer(reply: Reply) -> object:
    """What came back, as recorded: the returned tensor, or the status and error."""
    if reply.status == OK and reply.value is not None:
        return to_tensor(reply.value)
    return f"{reply.status}: {reply.error}"


def _exercised(vspec: VersionSpec, case: Case, expectation: Expectation, reply: Reply) -> list[str]:
    """The semantic clauses a valid case actually put to the test. A refused input tests only
    acceptance; an answer without integers tests only the output type; a wrong shape leaves
    the index clauses untested."""
    checks = ["accepts"]
    if case.data.size == 0 and vspec.has_check("zero-size"):
        checks.append("zero-size")
    if reply.status == OVERSIZE:
        checks.append("output-shape")
    if reply.status == OK:
        checks.append("output-dtype")
        value, _ = read(reply.value, reply.by_value)
        if value.dtype.kind in "iu":
            checks.append("output-shape")
            reference = expectation.first if expectation.first is not None else expectation.last
            if value.shape == reference.shape:
                checks += ["index-range", "minimum", "axis"]
                if expectation.tie_rule != "any":  # where the version decides ties
                    checks.append("ties")
        if any(name not in case.attributes for name in vspec.attributes):
            checks.append("defaults")
    return [vspec.clause_for_check(c).id for c in checks if vspec.has_check(c)]


def _result(case: Case, suite: str, kind: str, outcome: str, clauses: list[str], failures: list[Failure],
            reply: Reply, clause: str | None = None) -> CaseResult:
    violated = list(dict.fromkeys(f.clause for f in failures))
    return CaseResult(version=case.version, type_name=case.type_name, suite=suite, kind=kind, outcome=outcome,
                      clauses=clauses, clause=clause or (violated[0] if violated else None), tags=list(case.tags),
                      duration_s=reply.seconds, violated=violated, problem=failures[0].problem if failures else None,
                      input_digest=_input_digest(case),
                      answer_digest=answer_digest(reply.status, reply.value, reply.error))


def _deciding(expectation: Expectation) -> str:
    """The clause to blame for a missing rejection: an axis out of range is often only a
    consequence (of rank 0, say), so the other clauses come first."""
    ordered = sorted(expectation.clauses, key=lambda c: any(key.startswith("axis_") for key in c.when))
    return ordered[0].id


def _reattribute(vspec: VersionSpec, case: Case, reply: Reply, first: Violation, answers: _Answers) -> Failure:
    """Sharpen the blame for a failed valid case by asking the implementation again. First the
    same call: an implementation that answers it differently is nondeterministic on this input
    (the failure stays on the clause the wrong answer violates), and no variant may move the
    blame. Only then the variants: if the input passes with every default written out, the
    defaults clause is violated; if with the equivalent non-negative axis, the axis clause. A
    passing variant is asked twice, so that a flaky answer cannot pass for it. Zero-size inputs
    point at the zero-size clause."""
    again = answers.again(case.attributes)
    if not same_answer(reply, again):
        return _nondeterministic(first, "this call", reply, again)
    explicit = {**vspec.effective(case.attributes), **case.attributes}
    axis = explicit.get("axis", 0)
    variants = [("defaults", explicit, "the same input passes with the defaults written out")] \
        if explicit != dict(case.attributes) else []
    if axis < 0:
        fixed = axis % case.data.ndim
        variants.append(("axis", {**case.attributes, "axis": fixed}, f"the same input passes with axis={fixed}"))
    for check, attributes, why in variants:
        answer = answers.again(attributes)
        if answer.status != OK or verify(vspec, expect(vspec, case.data, attributes), case.data, answer.value,
                                           by_value=answer.by_value) is not None:
            continue
        repeated = answers.again(attributes)
        if not same_answer(answer, repeated):
            return _nondeterministic(first, f"the same input with {attributes}", answer, repeated)
        return Failure(vspec.clause_for_check(check).id, first.problem, f"{first.message} ({why})")
    if case.data.size == 0 and vspec.has_check("zero-size"):
        return Failure(vspec.clause_for_check("zero-size").id, first.problem,
                       f"{first.message} (the input has a zero-size dimension)")
    return Failure(first.clause.id, first.problem, first.message)


def _nondeterministic(first: Violation, asked: str, answer: Reply, again: Reply) -> Failure:
    return Failure(first.clause.id, NONDETERMINISTIC,
                   f"{first.message}; {asked} was answered {_shown(answer)}, then {_shown(again)} when asked "
                   f"again: the implementation answers the same call differently from one call to the next")


def _shown(reply: Reply, limit: int = 12) -> str:
    """An answer in a few words: dtype, shape and the first values, or the status and error."""
    if reply.status != OK:
        return f"{reply.status}: {reply.error}"
    value = np.asarray(reply.value)
    flat = value.reshape(-1)
    values = ", ".join(str(v) for v in flat[:limit].tolist()) + (", ..." if flat.size > limit else "")
    return f"{value.dtype} {list(value.shape)} [{values}]"


def _semantic_failures(vspec: VersionSpec, case: Case, expectation: Expectation, reply: Reply,
                       answers: _Answers) -> list[Failure]:
    if reply.status == OVERSIZE:  # far larger than the output (engine.asking.worker): wrong in shape, not kept
        return [Failure(vspec.clause_for_check("output-shape").id, "shape", reply.error)]
    if reply.status != OK:
        clause = vspec.clause_for_check("accepts").id
        if case.data.size == 0 and vspec.has_check("zero-size") and reply.status != UNSUPPORTED:
            # Failing only because it is empty; "unsupported" is about the type, whatever the shape.
            clause = vspec.clause_for_check("zero-size").id
        outcome = _ON_VALID[reply.status]
        return [Failure(clause, outcome, f"valid input answered with {reply.status}: {reply.error}")]
    found = violations(vspec, expectation, case.data, reply.value, by_value=reply.by_value)
    declared = declared_shape(vspec, expectation, reply.declared)  # the answer aside: nothing to re-ask about it
    also = [] if declared is None else [Failure(declared.clause.id, declared.problem, declared.message)]
    if not found:
        return also
    first, *rest = found
    # A wrong output type is C2 whatever the input; other first violations may have a sharper cause.
    deciding = Failure(first.clause.id, first.problem, first.message) if first.problem == "dtype" else \
        _reattribute(vspec, case, reply, first, answers)
    return [deciding] + [Failure(v.clause.id, v.problem, v.message) for v in rest] + also


def declared_shape(vspec: VersionSpec, expectation: Expectation, declared: tuple | None) -> Violation | None:
    """The output-shape clause for the shape a model-based runtime declared for its compiled model
    (where it declares one): the rank, and every length it claims to know."""
    if declared is None:
        return None
    expected = (expectation.first if expectation.first is not None else expectation.last).shape
    if len(declared) == len(expected) and all(d is None or d == e for d, e in zip(declared, expected, strict=False)):
        return None
    shown = "[" + ", ".join("?" if d is None else str(d) for d in declared) + "]"
    return Violation(vspec.clause_for_check("output-shape"), "declared-shape",
                     f"the compiled model declares the output shape {shown}, expected {list(expected)}")


def expected(vspec: VersionSpec, case: Case) -> Expectation:
    """What ``vspec`` requires of ``case``, worked out once per case (see ``prepare``)."""
    held, expectation = case.memo("_expectation", lambda: (vspec, expect(vspec, case.data, case.attributes)))
    return expectation if held is vspec else expect(vspec, case.data, case.attributes)


def _input_digest(case: Case) -> str:
    return case.memo("_input_digest", lambda: input_digest(case.data, case.attributes))


def _input_tensor(case: Case) -> Tensor:
    """A census input written out exactly (each element's text: 120 us for 256 floats), kept
    with the case: small, and asked for in every census record of it."""
    return case.memo("_input_tensor", lambda: to_tensor(case.data))


def prepare(cases: Sequence[Case]) -> None:
    """Work out what judging ``cases`` takes whatever the implementation answers: the oracle's
    expectation, the input's digest and, for a census input small enough to be shown, its
    tensor. The session does it in a thread while the worker process answers (numpy and hashlib
    let go of the interpreter for large arrays). A case this fails on is left to ``judge``, which
    fails the same way where it always did."""
    for case in cases:
        with contextlib.suppress(Exception):
            expected(load(case.version), case)
            _input_digest(case)
            if case.intent == "undefined" and case.data.size <= CENSUS_EXAMPLE_LIMIT:
                _input_tensor(case)


def verdict(vspec: VersionSpec, case: Case, reply: Reply, suite: str, asked: Sequence[Reply] = (),
            second: Second | None = None) -> Judgement | Ask:
    """The judgement of ``reply`` (the implementation's answer to ``case``), given the answers
    asked so far at judging's request: ``asked``, to the Asks for the case's input, in order;
    ``second``, the census's second ask. Where judging needs one more, that Ask instead."""
    try:
        return _judged(vspec, case, reply, suite, _Answers(case, asked, second))
    except _Needed as needed:
        return needed.ask


def judge(vspec: VersionSpec, case: Case, reply: Reply, suite: str, call: Call,
          again: Again | None = None) -> Judgement:
    """``verdict`` asked to the end: ``call`` re-asks the implementation, to sharpen the blame for
    a failure; ``again`` asks a census input a second time, to see whether its answer is the same
    (by default through ``call``, in the same process)."""
    asked: list[Reply] = []
    second = None
    while isinstance(step := verdict(vspec, case, reply, suite, asked, second), Ask):
        if step.second:
            second = again() if again is not None else (call(case.data, case.attributes), SAME_PROCESS)
        else:
            asked.append(call(case.data, step.attributes))
    return step


def _judged(vspec: VersionSpec, case: Case, reply: Reply, suite: str, answers: _Answers) -> Judgement:
    expectation = expected(vspec, case)
    ids = list(expectation.clause_ids)
    if expectation.kind == "undefined":
        records = _census_records(vspec, case, expectation, reply, answers)
        return Judgement(case, reply, _result(case, suite, "undefined", OBSERVED, ids, [], reply, ids[0]), records,
                         [])
    if expectation.kind == "rejection":
        outcome = _ON_INVALID[reply.status]
        message = f"{case.type_name} input of shape {list(case.data.shape)} with {dict(case.attributes)} " \
                  f"must be rejected under {', '.join(ids)}"
        failures = [] if outcome == PASS else [Failure(_deciding(expectation), outcome, message)]
        result = _result(case, suite, "rejection", outcome, ids, failures, reply, _deciding(expectation))
        return Judgement(case, reply, result, [], failures, "must raise (rejection)")
    failures = _semantic_failures(vspec, case, expectation, reply, answers)
    exercised = _exercised(vspec, case, expectation, reply)
    exercised += [f.clause for f in failures if f.clause not in exercised]
    outcome = PASS if not failures else _ON_VALID.get(reply.status, FAIL)
    required = expectation.required if expectation.required is not None else expectation.first
    census_records = [] if failures else _tie_census(vspec, case, expectation, reply)
    return Judgement(case, reply, _result(case, suite, "semantic", outcome, exercised, failures, reply),
                     census_records, failures, required)


# Census examples keep their tensors only up to this size: the report shows a few examples per
# topic, and writing every large input out exactly would cost more than the run itself.
CENSUS_EXAMPLE_LIMIT = 256


def same_answer(first: Reply, second: Reply) -> bool:
    """Whether two answers to the same input agree: the same status and, for returned
    answers, the same type, shape and bytes (an error's wording may differ)."""
    if first.status != second.status:
        return False
    if first.status != OK:
        return True
    a, b = np.asarray(first.value), np.asarray(second.value)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    # An object answer's bytes are pointers: compare what its elements say (engine.asking.worker's descriptions).
    return a.tolist() == b.tolist() if a.dtype.hasobject else a.tobytes() == b.tobytes()


def _indices(reply: Reply) -> np.ndarray | None:
    """The answer as native int64 where it holds int64 indices by the rule of ``spec.oracle.read``
    (so the census reads a list or a big-endian answer as it reads any other), else as it came."""
    if reply.status != OK:
        return reply.value
    array, problem = read(reply.value, reply.by_value)
    return array if problem is not None else array.astype(np.int64)


def _census_records(vspec: VersionSpec, case: Case, expectation: Expectation, reply: Reply,
                    answers: _Answers) -> list[CensusRecord]:
    """One record per undefined clause the input falls under. The input is asked a second time,
    in another worker process where there is one (unless the first ask crashed or hung): an
    implementation whose answers to one input differ follows no policy, whatever the answers
    look like, and one that answers from uninitialised memory differs between processes."""
    deterministic, where = None, None
    if reply.status not in FAULTS:
        second, where = answers.second()
        deterministic = same_answer(reply, second)
    indices = _indices(reply)
    flags = tuple(census.flags(vspec, case.data, case.attributes, reply.status, indices))
    return [_census(case, clause.id, reply,
                    census.policies(vspec, clause, case.data, case.attributes, reply.status, indices),
                    census.group(vspec, clause, case.data, case.attributes), deterministic, where, flags)
            for clause in expectation.clauses]


def _census(case: Case, topic: str, reply: Reply, fits: list[str], group: str | None = None,
            deterministic: bool | None = True, again: str | None = None, flags: tuple[str, ...] = ()) -> CensusRecord:
    small = case.data.size <= CENSUS_EXAMPLE_LIMIT
    if reply.status != OK:
        observed = f"{reply.status}: {reply.error}"
    else:
        observed = to_tensor(reply.value) if small and np.size(reply.value) <= CENSUS_EXAMPLE_LIMIT else None
    return CensusRecord(version=case.version, type_name=case.type_name, topic=topic,
                        input=_input_tensor(case) if small else None, attributes=dict(case.attributes),
                        observed=observed, fits=fits, status=_CENSUS_STATUS[reply.status], group=group,
                        deterministic=deterministic, again=again, flags=list(flags))


def _tie_census(vspec: VersionSpec, case: Case, expectation: Expectation, reply: Reply) -> list[CensusRecord]:
    """Where ties are undefined (v1, v11) and the input has one, record which index was chosen."""
    if expectation.tie_rule != "any" or np.array_equal(expectation.first, expectation.last):
        return []
    return [_census(case, vspec.clause_for_check("ties").id, reply,
                    census.tie_choice(expectation.first, expectation.last, reply.value))]
