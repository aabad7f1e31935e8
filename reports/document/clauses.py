"""The clause table, accounted honestly: per version and clause, the cases actually judged on
it, overall and per type; the types of the claim on which a semantic clause was never
exercised (a type the implementation refused never reached the output clauses); and, for
undefined clauses, their census counts and policy."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

import spec
from results import CaseResult, RawRun
from results.outcomes import PASS
from results.verdict import Standing


def outcomes_per_clause(result: CaseResult) -> Iterable[tuple[str, str]]:
    """(clause, outcome) for every clause the case was judged on: its outcome for the clauses it
    violated, "pass" for the others it exercised; a census case "observed" on each of its clauses."""
    violated = set(result.violated or ([result.clause] if result.clause and result.outcome != PASS else []))
    for clause_id in dict.fromkeys([*result.clauses, *violated]):
        if result.kind == "undefined":
            yield clause_id, result.outcome
        else:
            yield clause_id, result.outcome if clause_id in violated else PASS


def source(clause: spec.Clause | None) -> dict:
    """A clause's provenance: stated or inferred, the ONNX text it quotes and, if inferred, the
    reasoning (by language)."""
    if clause is None:
        return {"basis": "unknown", "quotes": [], "reasoning": {}}
    return {"basis": clause.basis, "quotes": [{"in": q.where, "text": q.text} for q in clause.source.quotes],
            "reasoning": dict(clause.source.inferred or {})}


def inferred_only(standing: Standing) -> bool:
    """Whether the version's non-conformance rests only on inferred clauses (ones the ONNX text
    does not state, see the spec files' ``source``), which a reader may weigh differently."""
    try:
        vspec = spec.load(standing.version)
    except spec.SpecError:
        return False
    known = {c.id: c for c in vspec.clauses}
    failing = [known.get(clause_id) for clause_id in standing.clauses]
    return bool(failing) and all(clause is not None and clause.inferred for clause in failing)


def rows(run: RawRun, versions: list[int], census: list[dict], counts: Callable, worst: Callable,
         find_spec: Callable[[int], spec.VersionSpec | None]) -> list[dict]:
    """The clause rows of the report document (``counts`` and ``worst`` are the report's own
    tallying rules; ``census`` its census entries): the spec's clauses of each version, then any
    other clause a case named."""
    overall: dict[tuple[int, str], list[str]] = defaultdict(list)
    per_type: dict[tuple[int, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for result in run.results:
        for clause_id, outcome in outcomes_per_clause(result):
            overall[result.version, str(clause_id)].append(outcome)
            per_type[result.version, str(clause_id)][result.type_name].append(outcome)
    entries = []
    for version in versions:
        vspec = find_spec(version)
        known = {c.id: c for c in vspec.clauses} if vspec else {}
        claimed = [t for t in (vspec.type_names if vspec else ())
                   if run.info.type_names is None or t in run.info.type_names]
        seen = [cid for (v, cid) in overall if v == version and cid not in known]
        for clause_id in [*known, *sorted(set(seen))]:
            types = {t: counts(outcomes) for t, outcomes in sorted(per_type.get((version, clause_id), {}).items())}
            topics = [c for c in census if c["version"] == version and c["topic"] == clause_id]
            entries.append(_row(version, clause_id, known.get(clause_id), counts(overall.get((version, clause_id), [])),
                                types, claimed, topics, worst))
    return entries


def _row(version: int, clause_id: str, clause: spec.Clause | None, tally: dict[str, int], types: dict[str, dict],
         claimed: list[str], topics: list[dict], worst: Callable) -> dict:
    """One clause's row: its statement and source, the cases judged on it overall and per type,
    the claimed types a semantic clause was never exercised on, and its census topics' summary."""
    semantic = clause is not None and clause.kind == "semantic"
    return {
        "version": version, "id": clause_id,
        "kind": clause.kind if clause else "unknown", "title": clause.title if clause else "",
        "statement": dict(clause.statement) if clause else {},
        "cases": sum(tally.values()), "counts": tally, "outcome": worst(tally), **source(clause),
        "types": types,
        "not_exercised": [t for t in claimed if t not in types] if semantic else [],
        "census": _census(topics) if topics else None,
    }


def _census(topics: list[dict]) -> dict:
    """An undefined clause's census topics (one per group) in one: their records, the policy they
    share, whether every one is coherent, and their warnings."""
    return {
        "records": sum(c["records"] for c in topics),
        "policy": sorted(set.intersection(*(set(c["policy"]) for c in topics))),
        "coherent": all(c["coherent"] for c in topics),
        "warnings": sorted({w for c in topics for w in c["warnings"]}),
    }
