"""The verdict rule, stated once, with the words it uses. Everything that asks "did this version
pass", "for which types", "how strict" or "why" asks here.

Per version, three levels, after what the ONNX text asks of an implementation (docs/explanation/specification.md):

- **The headline**, CONFORMANT or NON-CONFORMANT. It is NON-CONFORMANT only for a valid input
  (a semantic clause) of a type the implementation implements that was answered wrongly, refused
  or raised on, or for any input at all, valid, invalid or undefined, that crashed or hung the
  implementation. The latter is this suite's own position: the text says nothing of crashes, but a
  runtime that an input can take down is not one a vendor can ship. Nothing else changes it.
- **Scope**: a type of T (or of ``--dtypes``) answered "unsupported" for every valid input is not
  implemented, and named beside the headline ("scope: 7 of 11 types of T implemented"). A type refused
  for some valid inputs and computed for others fails. ``--claim all`` claims every type: then a
  type not implemented is a failure too.
- **Strictness**: how invalid models (the rejection clauses) are treated. The text constrains
  models; it never makes refusing an invalid one an implementation's duty, so refusing is strict,
  computing anyway lenient, and neither touches the headline.

Census cases (undefined behaviour) never count, except that a crash or a hang on them does.

A version the run stopped before (interrupted, or cut short otherwise) with nothing against it
and no semantic case judged is NOT JUDGED: no headline can be read from cases that never ran."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import spec

from .causes import clause_number, own_causes
from .outcomes import ERROR, FAULTS, MISSING_REJECTION, PASS, UNSUPPORTED
from .records import CaseResult, CensusRecord, RawRun

CONFORMANT, NON_CONFORMANT, NOT_JUDGED = "conformant", "non-conformant", "not-judged"
JUDGED_KINDS = ("semantic", "rejection")
# Outcomes that mean the implementation went down on the input, whatever its kind.
# --claim: the types the headline covers.
CLAIMS = ("implemented", "all")
# Strictness levels.
STRICT, LENIENT, UNTESTED = "strict", "lenient", "untested"
# Strictness not judged: the implementation refused valid models too (of every type it was asked
# invalid models of), so its refusals of invalid ones say nothing of strictness.
REFUSES_VALID = "refuses-valid"
_REFUSED = (ERROR, UNSUPPORTED)  # what a valid input refused or raised on came to
EMPTY_TAG = "zero-size:yes"  # the tag of a generated input with no element


@dataclass(frozen=True)
class Scope:
    """The types of the claim (T, or T narrowed by --dtypes) and how each stands: implemented, not
    implemented (every valid input answered "unsupported"), or untested (no valid input ran)."""

    claimed: tuple[str, ...]
    implemented: tuple[str, ...]
    not_implemented: tuple[str, ...]
    untested: tuple[str, ...]
    claim: str = "implemented"  # one of CLAIMS


@dataclass(frozen=True)
class Leniency:
    """One rejection clause as the implementation treated it: invalid models refused, computed
    (missing rejections), or that took it down (faults, counted in the headline too)."""

    clause: str
    title: str
    refused: int
    computed: int
    faults: int
    computed_types: tuple[str, ...]  # the types of the computed inputs
    every_type: bool  # computed for every type it was tried on: a behaviour of the clause, not of types


@dataclass(frozen=True)
class Strictness:
    level: str  # strict, lenient, untested or refuses-valid
    clauses: tuple[Leniency, ...]


@dataclass(frozen=True)
class Standing:
    """A version's standing under the rule: the headline and why, its scope and its strictness.
    ``failures`` are the cases that make the headline NON-CONFORMANT; ``census_faults`` the
    undefined inputs that crashed or hung the implementation; ``clauses`` the clauses failing
    with a cause of their own (root cause first, see results.causes)."""

    version: int
    verdict: str
    reason: str  # a message key the reports translate
    scope: Scope
    strictness: Strictness
    failures: tuple[CaseResult, ...] = ()
    census_faults: tuple[CensusRecord, ...] = ()
    clauses: tuple[str, ...] = ()
    judged: int = 0  # semantic and rejection cases judged
    same_cause: dict[int, str] = field(default_factory=dict)  # index into failures -> the clause it shares a cause with


def is_judged(result: CaseResult) -> bool:
    """Whether the case was judged on a clause (semantic or rejection), not only observed."""
    return result.kind in JUDGED_KINDS


def judged(results: Iterable[CaseResult], version: int) -> list[CaseResult]:
    """The judged cases of ``version``, in run order."""
    return [r for r in results if r.version == version and is_judged(r)]


def _claimed(vspec: spec.VersionSpec | None, restriction: Iterable[str] | None) -> tuple[str, ...]:
    in_t = vspec.type_names if vspec else ()
    return tuple(t for t in in_t if restriction is None or t in restriction)


def scope(results: Iterable[CaseResult], version: int, claimed: tuple[str, ...], claim: str = "implemented") -> Scope:
    """How each claimed type stands. Inputs with no element do not decide it: a runtime can answer
    an empty result from the shape alone (tract does, for types it has no kernel for), which says
    nothing of a kernel."""
    outcomes: dict[str, set[str]] = defaultdict(set)
    empty: dict[str, set[str]] = defaultdict(set)
    for r in results:
        if r.version == version and r.kind == "semantic":
            (empty if EMPTY_TAG in r.tags else outcomes)[r.type_name].add(r.outcome)
    for type_name, seen in empty.items():
        outcomes.setdefault(type_name, seen)
    not_implemented = tuple(t for t in claimed if outcomes.get(t) == {UNSUPPORTED})
    untested = tuple(t for t in claimed if t not in outcomes)
    implemented = tuple(t for t in claimed if t not in not_implemented and t not in untested)
    return Scope(claimed, implemented, not_implemented, untested, claim)


def counts_in_headline(result: CaseResult, scope_: Scope) -> bool:
    """Whether a case makes the headline NON-CONFORMANT: a crash or hang on any input, or a
    valid input not answered right, unless its type is not implemented (and not claimed)."""
    if result.outcome in FAULTS:
        return True
    if result.kind != "semantic" or result.outcome == PASS:
        return False
    return scope_.claim == "all" or result.type_name not in scope_.not_implemented


def _refuses_valid(results: Sequence[CaseResult], version: int) -> set[str] | None:
    """The types whose every valid input (with elements) the implementation refused or raised
    on: the refusal of an invalid model of such a type says nothing of strictness. None where it
    computed no valid input of any type (then no refusal does)."""
    outcomes: dict[str, set[str]] = defaultdict(set)
    for r in results:
        if r.version == version and r.kind == "semantic" and EMPTY_TAG not in r.tags:
            outcomes[r.type_name].add(r.outcome)
    refusing = {name for name, seen in outcomes.items() if seen <= set(_REFUSED)}
    return None if outcomes and refusing == set(outcomes) else refusing


def strictness(results: Sequence[CaseResult], version: int, vspec: spec.VersionSpec | None) -> Strictness:
    """How the version treats invalid models, clause by clause: refused (strict) or computed
    (lenient). A refusal counts only where the implementation computes valid models of that type:
    one that refuses everything is not strict, and its strictness is not judged."""
    refusing = _refuses_valid(results, version)
    rejection = [r for r in results if r.version == version and r.kind == "rejection"]
    if not rejection:
        return Strictness(UNTESTED, ())
    if refusing is None:
        return Strictness(REFUSES_VALID, ())
    rejection = [r for r in rejection if r.outcome != PASS or r.type_name not in refusing]
    if not rejection:
        return Strictness(REFUSES_VALID, ())
    known = [c.id for c in vspec.of_kind("rejection")] if vspec else []
    by_clause: dict[str, list[CaseResult]] = defaultdict(list)
    for r in rejection:
        by_clause[r.clause or ""].append(r)
    entries = []
    for clause_id in [*known, *sorted(set(by_clause) - set(known))]:
        mine = by_clause.get(clause_id)
        if not mine:
            continue
        computed = [r for r in mine if r.outcome == MISSING_REJECTION]
        tried = {r.type_name for r in mine}
        computed_types = {r.type_name for r in computed}
        title = vspec.clause(clause_id).title if vspec and clause_id in known else ""
        entries.append(Leniency(clause_id, title, sum(r.outcome == PASS for r in mine), len(computed),
                                sum(r.outcome in FAULTS for r in mine), _in_order(computed_types),
                                bool(computed) and computed_types == tried and len(tried) > 1))
    level = LENIENT if any(e.computed for e in entries) else STRICT
    return Strictness(level, tuple(entries))


def _in_order(types: set[str]) -> tuple[str, ...]:
    order = list(spec.catalogue())
    return tuple(sorted(types, key=lambda t: (order.index(t) if t in order else len(order), t)))


def standing(results: Sequence[CaseResult], version: int, census: Iterable[CensusRecord] = (), *,
             type_names: Iterable[str] | None = None, claim: str = "implemented",
             stopped: bool = False) -> Standing:
    """The version's standing from the run's records: its judged cases, its census records (a crash
    on an undefined input counts), the --dtypes restriction and the --claim. ``stopped``: the run
    ended before its end (the run records it as incomplete)."""
    try:
        vspec = spec.load(version)
    except spec.SpecError:
        vspec = None
    scope_ = scope(results, version, _claimed(vspec, type_names), claim)
    counted = judged(results, version)
    failures = tuple(r for r in results if r.version == version and counts_in_headline(r, scope_))
    census_faults = tuple(c for c in census if c.version == version and c.status in FAULTS)
    own, same = own_causes(failures)
    clauses = tuple(sorted({f.clause or "" for i, f in enumerate(failures) if own[i]} |
                           {c.topic for c in census_faults}, key=clause_number))
    if failures or census_faults:
        reason = "reason-failures"
    elif stopped and not any(r.kind == "semantic" for r in counted):
        reason = "reason-interrupted-no-semantic" if counted else "reason-interrupted"
    elif not any(r.kind == "semantic" for r in counted):
        reason = "reason-no-semantic"
    elif not scope_.implemented:
        reason = "reason-nothing-implemented"
    else:
        reason = "reason-all-passed"
    verdict = {"reason-all-passed": CONFORMANT, "reason-interrupted": NOT_JUDGED,
               "reason-interrupted-no-semantic": NOT_JUDGED}.get(reason, NON_CONFORMANT)
    return Standing(version, verdict, reason, scope_, strictness(results, version, vspec), failures,
                    census_faults, clauses, len(counted), same)


def standings(run: RawRun, versions: Iterable[int] | None = None) -> dict[int, Standing]:
    """Every tested version's standing, read from a whole run."""
    results = list(run.results)
    return {v: standing(results, v, run.census, type_names=run.info.type_names,
                        claim=getattr(run.info, "claim", None) or "implemented", stopped=not run.info.complete)
            for v in (run.info.versions if versions is None else versions)}


def exit_status(run: RawRun) -> int:
    """A finished run's exit status: 2 incomplete; with a baseline, 1 for a new failure; else 1
    when a version is NON-CONFORMANT. The verdicts themselves never depend on a baseline."""
    if not run.info.complete:
        return 2
    if run.info.baseline is not None:
        return 1 if run.info.baseline["new"] else 0
    return 0 if all(s.verdict == CONFORMANT for s in standings(run).values()) else 1


def verdicts(results: Iterable[CaseResult], versions: Iterable[int], census: Iterable[CensusRecord] = (), *,
             type_names: Iterable[str] | None = None, claim: str = "implemented") -> dict[int, str]:
    results, census = list(results), list(census)
    return {v: standing(results, v, census, type_names=type_names, claim=claim).verdict for v in versions}
