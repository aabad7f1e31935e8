"""The census of undefined behaviour, told truthfully: per version, topic (the undefined clause)
and group, what the implementation did, type by type.

- Every observation keeps its status (returned, raised, unsupported, crash, timeout); none is
  merged into another. Only returned and raised answers can make a policy.
- Types the implementation refuses outright at that version (every valid input of the type
  answered NotImplementedError) are listed apart and never counted for or against a policy.
- An input whose answer changed when it was asked again is nondeterministic: no policy.
- A type is coherent when all its policy-bearing observations fit one named policy; the topic
  is coherent when every type is and nothing was nondeterministic."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from results import CaseResult, CensusRecord, RawRun
from results.records import STATUSES

EXAMPLES_PER_TOPIC = 5
_POLICY_STATUSES = ("returned", "raised")


def refused_types(results: list[CaseResult]) -> dict[int, list[str]]:
    """Per version, the types whose every valid input was answered "unsupported"."""
    outcomes: dict[tuple[int, str], set[str]] = defaultdict(set)
    for result in results:
        if result.kind == "semantic":
            outcomes[result.version, result.type_name].add(result.outcome)
    refused: dict[int, list[str]] = defaultdict(list)
    for (version, type_name), seen in sorted(outcomes.items()):
        if seen == {"unsupported"}:
            refused[version].append(type_name)
    return dict(refused)


def _bears_policy(record: CensusRecord) -> bool:
    return record.status in _POLICY_STATUSES and record.deterministic is not False


def _policy(records: list[CensusRecord]) -> list[str] | None:
    """What every policy-bearing observation fits (None: there are none)."""
    bearing = [set(r.fits) for r in records if _bears_policy(r)]
    return sorted(set.intersection(*bearing)) if bearing else None


def _statuses(records: list[CensusRecord]) -> dict[str, int]:
    tally = dict.fromkeys(STATUSES, 0)
    for record in records:
        tally[record.status if record.status in tally else "raised"] += 1
    return tally


def _examples(records: list[CensusRecord]) -> list[CensusRecord]:
    """A few observations: one per distinct (status, fitting policies, determinism) first, so an
    incoherent topic shows the answers that disagree; small inputs first."""
    records = sorted(records, key=lambda r: math.prod(r.input.shape) if r.input else math.inf)
    picked, kinds = [], set()
    for record in records:
        kind = (record.status, frozenset(record.fits), record.deterministic)
        if kind not in kinds:
            kinds.add(kind)
            picked.append(record)
    picked += [r for r in records if all(r is not p for p in picked)][:max(0, EXAMPLES_PER_TOPIC - len(picked))]
    return picked


def entries(run: RawRun, tensor, find_clause) -> list[dict]:
    """The census section of the report document. ``tensor`` renders a recorded tensor for
    JSON; ``find_clause(version, topic)`` gives the spec clause or None."""
    refused = refused_types(run.results)
    topics: dict[tuple[int, str, str | None], list[CensusRecord]] = defaultdict(list)
    for record in run.census:
        topics[record.version, str(record.topic), record.group].append(record)
    out = []
    for (version, topic, group), records in sorted(topics.items(),
                                                   key=lambda kv: (kv[0][0], int(kv[0][1][1:] or 0), kv[0][2] or "")):
        apart = [t for t in refused.get(version, []) if any(r.type_name == t for r in records)]
        counted = [r for r in records if r.type_name not in apart]
        by_type: dict[str, list[CensusRecord]] = defaultdict(list)
        for record in counted:
            by_type[record.type_name].append(record)
        types = []
        for type_name, mine in sorted(by_type.items()):
            policy = _policy(mine)
            types.append({"type": type_name, "records": len(mine), "statuses": _statuses(mine),
                          "nondeterministic": sum(r.deterministic is False for r in mine),
                          "policy": policy or [], "coherent": policy is None or bool(policy)})
        nondeterministic = sum(r.deterministic is False for r in counted)
        overall = _policy(counted)
        statuses = _statuses(records)
        warnings = [w for w, on in (("nondeterministic", nondeterministic > 0),
                                    ("incoherent", any(not t["coherent"] for t in types)),
                                    ("crashes", statuses["crash"] + statuses["timeout"] > 0)) if on]
        clause = find_clause(version, topic)
        fits = Counter(f for r in counted if _bears_policy(r) for f in set(r.fits))
        out.append({
            "version": version, "topic": topic, "group": group, "title": clause.title if clause else "",
            "statement": dict(clause.statement) if clause else {},
            "records": len(records), "statuses": statuses, "nondeterministic": nondeterministic,
            "refused_types": apart, "types": types, "policy": overall or [],
            "coherent": overall is not None and nondeterministic == 0 and all(t["coherent"] for t in types),
            "warnings": warnings, "fits": dict(sorted(fits.items())),
            "fits_nothing": sum(1 for r in counted if _bears_policy(r) and not r.fits),
            "examples": [{"type": r.type_name, "input": tensor(r.input), "observed": tensor(r.observed),
                          "attributes": {str(k): v for k, v in r.attributes.items()}, "fits": sorted(r.fits),
                          "status": r.status, "deterministic": r.deterministic}
                         for r in _examples(records)],
        })
    return out
