"""Judging one reply of the implementation against the spec: the outcome, the deciding clause
and, for failures, a counterexample; for undefined inputs, a census record instead."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from generators import Case
from results import CaseResult, CensusRecord, Counterexample
from results.tensors import to_tensor
from spec import VersionSpec
from spec.oracle import Expectation, expect, verify

from . import census
from .isolation import Reply

# The failure a reply status stands for on a valid input, and on one that must be rejected.
_ON_VALID = {"unsupported": "unsupported", "raised": "error", "crash": "crash", "timeout": "timeout"}
_ON_INVALID = {"ok": "missing-rejection", "oversize": "missing-rejection", "raised": "pass", "unsupported": "pass",
               "crash": "crash", "timeout": "timeout"}

Call = Callable[[np.ndarray, Mapping[str, int]], Reply]


@dataclass
class Judgement:
    result: CaseResult
    census: list[CensusRecord]
    # Builds the counterexample of a failure. Deferred: while Hypothesis shrinks, many failures
    # are judged and only the last (smallest) one is written out exactly.
    evidence: Callable[[], Counterexample] | None = None

    @property
    def failed(self) -> bool:
        return self.result.outcome not in ("pass", "observed")


def _exercised(vspec: VersionSpec, case: Case, expectation: Expectation) -> list[str]:
    """The semantic clauses a valid case puts to the test."""
    checks = ["accepts", "output-dtype", "output-shape", "index-range", "minimum", "axis"]
    if expectation.tie_rule != "any":  # where the version decides ties
        checks.append("ties")
    if any(name not in case.attributes for name in vspec.attributes):
        checks.append("defaults")
    if case.data.size == 0 and vspec.has_check("zero-size"):
        checks.append("zero-size")
    return [vspec.clause_for_check(c).id for c in checks if vspec.has_check(c)]


def _result(case: Case, suite: str, kind: str, outcome: str, clauses: list[str], clause: str | None,
            reply: Reply) -> CaseResult:
    return CaseResult(version=case.version, type_name=case.type_name, suite=suite, kind=kind, outcome=outcome,
                      clauses=clauses, clause=clause, tags=list(case.tags), duration_s=reply.seconds)


def _deciding(expectation: Expectation) -> str:
    """The clause to blame for a missing rejection: an axis out of range is often only a
    consequence (of rank 0, say), so the other clauses come first."""
    ordered = sorted(expectation.clauses, key=lambda c: any(key.startswith("axis_") for key in c.when))
    return ordered[0].id


def _evidence(case: Case, expected: object, reply: Reply, problem: str, message: str,
              failed: bool = True) -> Callable[[], Counterexample] | None:
    if not failed:
        return None

    def build() -> Counterexample:
        actual = to_tensor(reply.value) if reply.status == "ok" and reply.value is not None else \
            f"{reply.status}: {reply.error}"
        shown = to_tensor(expected) if isinstance(expected, np.ndarray) else expected
        return Counterexample(input=to_tensor(case.data), attributes=dict(case.attributes),
                              expected=shown, actual=actual, problem=problem, message=message)
    return build


def _reattribute(vspec: VersionSpec, case: Case, clause_id: str, call: Call) -> tuple[str, str]:
    """Sharpen the blame for a failed valid case by asking the implementation once more:
    if the same input passes with every default written out, the defaults clause is violated;
    if it passes with the equivalent non-negative axis, the axis clause; zero-size inputs
    point at the zero-size clause."""
    def passes(attributes: Mapping[str, int]) -> bool:
        reply = call(case.data, attributes)
        return reply.status == "ok" and verify(vspec, expect(vspec, case.data, attributes), case.data,
                                               reply.value) is None

    explicit = {**vspec.effective(case.attributes), **case.attributes}
    if explicit != dict(case.attributes) and passes(explicit):
        return vspec.clause_for_check("defaults").id, "the same input passes with the defaults written out"
    axis = explicit.get("axis", 0)
    if axis < 0 and passes({**case.attributes, "axis": axis % case.data.ndim}):
        return vspec.clause_for_check("axis").id, f"the same input passes with axis={axis % case.data.ndim}"
    if case.data.size == 0 and vspec.has_check("zero-size"):
        return vspec.clause_for_check("zero-size").id, "the input has a zero-size dimension"
    return clause_id, ""


def judge(vspec: VersionSpec, case: Case, reply: Reply, suite: str, call: Call) -> Judgement:
    """Judge ``reply`` (the implementation's answer to ``case``); ``call`` re-asks the
    implementation with other attributes, used only to sharpen the blame for a failure."""
    expectation = expect(vspec, case.data, case.attributes)
    ids = list(expectation.clause_ids)
    if expectation.kind == "undefined":
        records = [_census(case, clause.id, reply, census.policies(vspec, clause, case.data, case.attributes,
                                                                    reply.status, reply.value))
                   for clause in expectation.clauses]
        return Judgement(_result(case, suite, "undefined", "observed", ids, ids[0], reply), records)
    if expectation.kind == "rejection":
        outcome = _ON_INVALID[reply.status]
        message = f"{case.type_name} input of shape {list(case.data.shape)} with {dict(case.attributes)} " \
                  f"must be rejected under {', '.join(ids)}"
        return Judgement(_result(case, suite, "rejection", outcome, ids, _deciding(expectation), reply), [],
                         _evidence(case, "must raise (rejection)", reply, outcome, message, outcome != "pass"))
    exercised = _exercised(vspec, case, expectation)
    required = expectation.required if expectation.required is not None else expectation.first
    if reply.status == "oversize":  # far larger than the output (engine.worker): wrong in shape, not kept
        return Judgement(_result(case, suite, "semantic", "fail", exercised, vspec.clause_for_check("output-shape").id,
                                 reply), [], _evidence(case, required, reply, "shape", reply.error))
    if reply.status != "ok":
        outcome = _ON_VALID[reply.status]
        accepts = vspec.clause_for_check("accepts").id
        if case.data.size == 0 and vspec.has_check("zero-size"):
            accepts = vspec.clause_for_check("zero-size").id  # refused only because it is empty
        message = f"valid input answered with {reply.status}: {reply.error}"
        return Judgement(_result(case, suite, "semantic", outcome, exercised, accepts, reply), [],
                         _evidence(case, required, reply, outcome, message))
    violation = verify(vspec, expectation, case.data, reply.value)
    if violation is None:
        return Judgement(_result(case, suite, "semantic", "pass", exercised, None, reply),
                         _tie_census(vspec, case, expectation, reply))
    clause_id, why = _reattribute(vspec, case, violation.clause.id, call)
    message = violation.message + (f" ({why})" if why else "")
    if clause_id not in exercised:
        exercised.append(clause_id)
    return Judgement(_result(case, suite, "semantic", "fail", exercised, clause_id, reply), [],
                     _evidence(case, required, reply, violation.problem, message))


# Census examples keep their tensors only up to this size: the report shows a few examples per
# topic, and writing every large input out exactly would cost more than the run itself.
CENSUS_EXAMPLE_LIMIT = 256


def _census(case: Case, topic: str, reply: Reply, fits: list[str]) -> CensusRecord:
    small = case.data.size <= CENSUS_EXAMPLE_LIMIT
    if reply.status != "ok":
        observed = f"{reply.status}: {reply.error}"
    else:
        observed = to_tensor(reply.value) if small and np.size(reply.value) <= CENSUS_EXAMPLE_LIMIT else None
    return CensusRecord(version=case.version, type_name=case.type_name, topic=topic,
                        input=to_tensor(case.data) if small else None, attributes=dict(case.attributes),
                        observed=observed, fits=fits)


def _tie_census(vspec: VersionSpec, case: Case, expectation: Expectation, reply: Reply) -> list[CensusRecord]:
    """Where ties are undefined (v1, v11) and the input has one, record which index was chosen."""
    if expectation.tie_rule != "any" or np.array_equal(expectation.first, expectation.last):
        return []
    value = np.asarray(reply.value)
    return [_census(case, vspec.clause_for_check("ties").id, reply,
                    census.tie_choice(expectation.first, expectation.last, value))]
