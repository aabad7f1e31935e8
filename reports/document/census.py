"""The census of undefined behaviour, told truthfully: per version, topic (the undefined clause)
and group, what the implementation did, type by type.

- Every observation keeps its status (returned, raised, unsupported, crash, timeout); none is
  merged into another. Only returned and raised answers can make a policy.
- Types the implementation refuses outright at that version (every valid input of the type
  answered NotImplementedError) are listed apart and never counted for or against a policy.
- An input whose answer changed when it was asked again (in a second worker process, where the
  run had one) is nondeterministic: no policy.
- A type follows a policy when all its policy-bearing observations fit one named policy. When
  they are deterministic and none fits a named policy, the type follows a rule of its own:
  "no-listed-policy", shown with its examples. When those that fit a named policy share one but
  others fit none, the policy has exceptions: the type is not coherent, and the report counts
  the answers that follow the policy and shows the exceptions ("first minimum, 270 of 272; 2
  answers fit no rule"). Answers that fit different named policies on inputs those policies
  tell apart are incoherent.
- The topic is coherent when every type is, and nothing was nondeterministic.
- Answers flagged by the engine (a wrong shape, a value that cannot index the input) and answers
  that differ between processes are warnings, never violations."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from results import CaseResult, CensusRecord, RawRun
from results.outcomes import CENSUS_STATUSES, CRASH, FAULTS, POLICY_STATUSES, RAISED, TIMEOUT
from results.records import ANOTHER_PROCESS, SAME_PROCESS
from results.verdict import scope

EXAMPLES_PER_TOPIC = 5
NO_LISTED_EXAMPLES = 3  # observations shown first for a rule of its own
NO_LISTED_POLICY = "no-listed-policy"
# Warnings about observations, in the order shown, each with the observations it counts.
_OBSERVATION_WARNINGS = {
    "differs-between-processes": lambda r: r.deterministic is False and r.again == ANOTHER_PROCESS,
    "nondeterministic": lambda r: r.deterministic is False and r.again != ANOTHER_PROCESS,
    "not-an-index": lambda r: "not-an-index" in r.flags,
    "wrong-shape": lambda r: "wrong-shape" in r.flags,
}


def refused_types(results: list[CaseResult]) -> dict[int, list[str]]:
    """Per version, the types the implementation does not implement, by the verdict rule's scope
    (every valid input with elements answered "unsupported")."""
    tried: dict[int, set[str]] = defaultdict(set)
    for result in results:
        if result.kind == "semantic":
            tried[result.version].add(result.type_name)
    found = {version: sorted(scope(results, version, tuple(types)).not_implemented)
             for version, types in sorted(tried.items())}
    return {version: types for version, types in found.items() if types}


def _bears_policy(record: CensusRecord) -> bool:
    return record.status in POLICY_STATUSES and record.deterministic is not False


def _reading(records: list[CensusRecord]) -> dict:
    """How one type's observations read: ``policy``, the named policies every policy-bearing
    observation that fits one fits ([NO_LISTED_POLICY] where none fits any, [] where they fit
    named policies that exclude each other, and where no observation bears a policy);
    ``answers``, the policy-bearing observations; ``exceptions``, those of them that fit no
    named policy while others follow one; ``coherent``, the policy holds for every answer."""
    bearing = [set(r.fits) for r in records if _bears_policy(r)]
    named = [fits for fits in bearing if fits]
    common = set.intersection(*named) if named else set()
    policy = sorted(common) if named else [NO_LISTED_POLICY] if bearing else []
    exceptions = len(bearing) - len(named) if common else 0
    return {"policy": policy, "answers": len(bearing), "exceptions": exceptions,
            "coherent": not bearing or (bool(policy) and not exceptions)}


def _asked_again(records: list[CensusRecord]) -> str | None:
    """Where the topic's inputs were asked the second time: in another process, or (for any of
    them) only in the same one; None where none was asked again."""
    places = {r.again for r in records if r.again is not None}
    return SAME_PROCESS if SAME_PROCESS in places else ANOTHER_PROCESS if places else None


def _statuses(records: list[CensusRecord]) -> dict[str, int]:
    tally = dict.fromkeys(CENSUS_STATUSES, 0)
    for record in records:
        tally[record.status if record.status in tally else RAISED] += 1
    return tally


def _smallest_first(record: CensusRecord) -> tuple:
    """Small inputs first, then a total order of what was asked: records arrive in the order the
    test processes finish their tests, which differs from run to run, and a run's report must not."""
    return (math.prod(record.input.shape), record.input.shape, record.type_name, record.form or "",
            record.input.values, sorted(record.attributes.items()))


def _examples(records: list[CensusRecord], own_rule: set[str]) -> list[CensusRecord]:
    """A few observations: for types with a rule of their own or exceptions to their policy
    (``own_rule``), up to NO_LISTED_EXAMPLES answers that fit no named policy; then one per
    distinct (status, fitting policies, determinism, flags), so an incoherent topic shows the
    answers that disagree; small inputs first. Only observations whose input was kept (a large
    one is not recorded) can show what was asked."""
    records = sorted((r for r in records if r.input is not None), key=_smallest_first)
    picked = [r for r in records if r.type_name in own_rule and _bears_policy(r) and not r.fits][:NO_LISTED_EXAMPLES]
    kinds = {(r.status, frozenset(r.fits), r.deterministic, frozenset(r.flags)) for r in picked}
    for record in records:
        kind = (record.status, frozenset(record.fits), record.deterministic, frozenset(record.flags))
        if kind not in kinds:
            kinds.add(kind)
            picked.append(record)
    picked += [r for r in records if all(r is not p for p in picked)][:max(0, EXAMPLES_PER_TOPIC - len(picked))]
    return picked


def _faults(records: list[CensusRecord]) -> list[CensusRecord]:
    """One crash or hang per type, model form and status, the smallest input recorded: what a
    runtime's CI keeps as a test that must not crash (reports.regressions)."""
    chosen: dict[tuple, CensusRecord] = {}
    for record in sorted((r for r in records if r.status in FAULTS and r.input is not None), key=_smallest_first):
        chosen.setdefault((record.type_name, record.form, record.status), record)
    return list(chosen.values())


def entries(run: RawRun, tensor, find_clause) -> list[dict]:
    """The census section of the report document, one entry per version, topic and group.
    ``tensor`` renders a recorded tensor for JSON; ``find_clause(version, topic)`` gives the spec
    clause or None."""
    refused = refused_types(run.results)
    topics: dict[tuple[int, str, str | None], list[CensusRecord]] = defaultdict(list)
    for record in run.census:
        topics[record.version, str(record.topic), record.group].append(record)
    return [_entry(key, records, refused.get(key[0], []), tensor, find_clause)
            for key, records in sorted(topics.items(), key=lambda kv: _topic_order(*kv[0]))]


def _topic_order(version: int, topic: str, group: str | None) -> tuple[int, int, str]:
    return version, int(topic[1:] or 0), group or ""


def _entry(key: tuple[int, str, str | None], records: list[CensusRecord], refused: list[str], tensor,
           find_clause) -> dict:
    """One topic's entry: its observations by status, its types' readings (those not implemented
    apart), its policy, warnings, examples and faults."""
    version, topic, group = key
    apart = [t for t in refused if any(r.type_name == t for r in records)]
    counted = [r for r in records if r.type_name not in apart]
    per_type, types = _types(counted)
    read = [set(reading["policy"]) for reading in per_type.values() if reading["answers"]]
    overall = sorted(set.intersection(*read)) if read else None
    nondeterministic = sum(r.deterministic is False for r in counted)
    statuses = _statuses(records)
    warnings, flagged = _warnings(counted, types, statuses)
    clause = find_clause(version, topic)
    fits, fits_nothing = _fits(counted)
    return {
        "version": version, "topic": topic, "group": group, "title": clause.title if clause else "",
        "statement": dict(clause.statement) if clause else {},
        "records": len(records), "statuses": statuses, "nondeterministic": nondeterministic,
        "refused_types": apart, "types": types, "policy": overall or [],
        "coherent": overall is not None and nondeterministic == 0 and all(t["coherent"] for t in types),
        "warnings": warnings, "flagged": flagged, "asked_again": _asked_again(counted),
        "fits": fits, "fits_nothing": fits_nothing,
        "examples": [_example(r, tensor) for r in _examples(records, _own_rule(per_type))],
        "faults": [_fault(r, tensor) for r in _faults(records)],
    }


def _types(counted: list[CensusRecord]) -> tuple[dict[str, dict], list[dict]]:
    """Per type, by name: how its observations read (``_reading``), and its row in the entry (its
    observations, their statuses, how many were nondeterministic, and that reading)."""
    by_type: dict[str, list[CensusRecord]] = defaultdict(list)
    for record in counted:
        by_type[record.type_name].append(record)
    per_type = {type_name: _reading(mine) for type_name, mine in sorted(by_type.items())}
    types = [{"type": type_name, "records": len(by_type[type_name]), "statuses": _statuses(by_type[type_name]),
              "nondeterministic": sum(r.deterministic is False for r in by_type[type_name]), **reading}
             for type_name, reading in per_type.items()]
    return per_type, types


def _warnings(counted: list[CensusRecord], types: list[dict], statuses: dict[str, int]) -> tuple[list[str], dict]:
    """The topic's warnings in the order shown, and the observations each flag counts."""
    flagged = {name: n for name, applies in _OBSERVATION_WARNINGS.items()
               if (n := sum(1 for r in counted if applies(r)))}
    flagged.update({"exceptions": n} if (n := sum(t["exceptions"] for t in types)) else {})
    incoherent = any(t["answers"] and not t["policy"] for t in types)
    warnings = [*flagged] + [w for w, on in (("incoherent", incoherent),
                                             ("crashes", statuses[CRASH] + statuses[TIMEOUT] > 0)) if on]
    return warnings, flagged


def _fits(counted: list[CensusRecord]) -> tuple[dict[str, int], int]:
    """How many policy-bearing observations fit each named policy, and how many fit none."""
    bearing = [r for r in counted if _bears_policy(r)]
    fits = Counter(f for r in bearing for f in set(r.fits))
    return dict(sorted(fits.items())), sum(1 for r in bearing if not r.fits)


def _own_rule(per_type: dict[str, dict]) -> set[str]:
    """The types with a rule of their own, or exceptions to their policy."""
    return {type_name for type_name, reading in per_type.items()
            if reading["policy"] == [NO_LISTED_POLICY] or reading["exceptions"]}


def _attributes(record: CensusRecord) -> dict:
    return {str(k): v for k, v in record.attributes.items()}


def _example(r: CensusRecord, tensor) -> dict:
    return {"type": r.type_name, "input": tensor(r.input), "observed": tensor(r.observed),
            "attributes": _attributes(r), "fits": sorted(r.fits), "status": r.status,
            "deterministic": r.deterministic, "again": r.again, "flags": sorted(r.flags)}


def _fault(r: CensusRecord, tensor) -> dict:
    return {"type": r.type_name, "form": r.form, "status": r.status, "input": tensor(r.input),
            "attributes": _attributes(r), "observed": tensor(r.observed)}
