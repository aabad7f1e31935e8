"""RawRun -> the report document: the JSON twin of the HTML report, holding everything it shows.

The document is plain JSON data (validated by ``report.schema.json``), so a report can be
re-rendered or compared later without the run's raw records. Everything the implementation
under test produced (exception texts, returned values) is kept as the strings it recorded;
escaping is the renderers' job."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from itertools import pairwise
from typing import Any

import spec
from results import CENSUS, OUTCOMES, CaseResult, RawRun, Tensor
from results.verdict import judged, reason, verdict
from spec.diff import diff

from . import census, clauses
from .replay import display_values, snippet, standalone

SCHEMA = "argmin-conformance/report/2"
ALL_OUTCOMES = (*OUTCOMES, CENSUS)
# Worst first: the outcome a cell or clause shows when its cases disagree.
SEVERITY = ("crash", "timeout", "fail", "missing-rejection", "error", "unsupported", "pass", CENSUS)
NOT_RUN = "not-run"


def counts(outcomes: Iterable[str]) -> dict[str, int]:
    """Cases per outcome, every known outcome present (zero-filled); unknown outcomes count as error."""
    tally = dict.fromkeys(ALL_OUTCOMES, 0)
    for outcome in outcomes:
        tally[outcome if outcome in tally else "error"] += 1
    return tally


def worst(tally: dict[str, int]) -> str:
    return next((o for o in SEVERITY if tally.get(o)), NOT_RUN)


def _spec(version: int) -> spec.VersionSpec | None:
    try:
        return spec.load(version)
    except spec.SpecError:
        return None


def _tensor(value: Tensor | str | None) -> dict | str | None:
    if isinstance(value, Tensor):
        return {"type": str(value.type_name), "shape": [int(n) for n in value.shape],
                "values": [str(v) for v in value.values], "display": display_values(value)}
    return None if value is None else str(value)


def _run(raw: RawRun) -> dict[str, Any]:
    info = raw.info
    return {
        "impl": str(info.impl), "profile": str(info.profile), "seed": info.seed,
        "versions": sorted(int(v) for v in info.versions),
        "type_restriction": None if info.type_names is None else [str(d) for d in info.type_names],
        "started": str(info.started), "duration_s": float(info.duration_s), "complete": bool(info.complete),
        "incomplete_reason": None if info.incomplete_reason is None else str(info.incomplete_reason),
        "cases_run": len(raw.results), "census_records": len(raw.census),
        "isolation": str(info.isolation), "timeout_s": float(info.timeout_s),
        "forms": None if info.forms is None else [str(f) for f in info.forms],
    }


def _tested_versions(raw: RawRun) -> list[int]:
    return sorted({int(v) for v in raw.info.versions} | {r.version for r in raw.results})


def _versions(raw: RawRun, versions: list[int]) -> list[dict]:
    entries = []
    for version in versions:
        vspec = _spec(version)
        types = list(vspec.type_names) if vspec else []
        restriction = None if raw.info.type_names is None else [t for t in types if t in raw.info.type_names]
        mine = [r for r in raw.results if r.version == version]
        counted = judged(mine, version)
        entries.append({
            "version": version, "verdict": verdict(raw.results, version),
            "reason": reason(raw.results, version), "type_restriction": restriction, "types": types,
            "cases": len(mine), "judged": len(counted), "not_passed": sum(r.outcome != "pass" for r in counted),
            "counts": counts(r.outcome for r in mine),
        })
    return entries


def _type_order(raw: RawRun, versions: list[int]) -> list[str]:
    """Columns of the matrix: the types of the tested versions' T, then any other type a case used
    (rejection inputs), in catalogue order."""
    catalogue = list(spec.catalogue())
    inside: list[str] = []
    for version in sorted(versions, reverse=True):
        vspec = _spec(version)
        inside += [t for t in (vspec.type_names if vspec else ()) if t not in inside]
    others = {r.type_name for r in raw.results} - set(inside)
    return inside + sorted(others, key=lambda t: (catalogue.index(t) if t in catalogue else len(catalogue), t))


def _matrix(raw: RawRun, versions: list[int], types: list[str]) -> list[dict]:
    cells = defaultdict(list)
    for result in raw.results:
        cells[result.version, result.type_name].append(result.outcome)
    rows = []
    for version in versions:
        vspec = _spec(version)
        for type_name in types:
            tally = counts(cells.get((version, type_name), []))
            in_t = bool(vspec and type_name in vspec.type_names)
            declared = raw.info.type_names is None or type_name in raw.info.type_names
            rows.append({"version": version, "type": type_name, "in_t": in_t, "declared": declared,
                         "cases": sum(tally.values()), "counts": tally, "outcome": worst(tally)})
    return rows


def _rank(result: CaseResult) -> tuple[bool, int]:
    """Which result of a failure to show: one with a counterexample, the smallest."""
    ce = result.counterexample
    return ce is None, math.prod(ce.input.shape) if ce else 0


def _failures(raw: RawRun) -> list[dict]:
    """Every distinct failure (version, clause, type, problem), with its smallest counterexample
    (the last one among equally small ones: later counterexamples are the better shrunk)."""
    chosen: dict[tuple, CaseResult] = {}
    seen: Counter = Counter()
    for result in raw.results:
        if result.outcome in ("pass", CENSUS):
            continue
        key = (result.version, result.clause or "", result.type_name, result.problem or result.outcome,
               result.form or "")
        seen[key] += 1
        if key not in chosen or _rank(result) <= _rank(chosen[key]):
            chosen[key] = result
    impl = raw.info.impl_portable or raw.info.impl
    order = _form_order(raw)
    entries = []
    for key in sorted(chosen, key=lambda k: (k[0], _clause_number(k[1]), k[2], k[3], order(k[4]))):
        result = chosen[key]
        vspec = _spec(result.version)
        clause = _find_clause(vspec, result.clause)
        ce = result.counterexample
        entries.append({
            "version": result.version, "clause": result.clause, "type": result.type_name, "problem": key[3],
            "outcome": result.outcome, "kind": result.kind, "suite": result.suite, "test": result.test,
            "occurrences": seen[key],
            "clause_title": clause.title if clause else "",
            "statement": dict(clause.statement) if clause else {},
            "counterexample": None if ce is None else {
                "input": _tensor(ce.input), "attributes": {str(k): v for k, v in ce.attributes.items()},
                "expected": _tensor(ce.expected), "actual": _tensor(ce.actual),
                "problem": str(ce.problem), "message": str(ce.message), "minimized": bool(ce.minimized),
                "also": [{"input": _tensor(e.input), "attributes": {str(k): v for k, v in e.attributes.items()},
                          "actual": _tensor(e.actual)} for e in ce.also],
            },
            "form": result.form,
            "replay": snippet(impl, result.version, ce, kind=result.kind, clause=result.clause,
                              form=result.form) if ce else None,
            "standalone": standalone(impl, result.version, ce, kind=result.kind, clause=result.clause,
                                     form=result.form) if ce else None,
        })
    return entries


def _form_order(raw: RawRun) -> Callable[[str], int]:
    """Model forms in the order the run ran them (the run records it); others first."""
    forms = list(raw.info.forms or [])
    return lambda form: forms.index(form) if form in forms else -1


def _forms(raw: RawRun, versions: list[int]) -> list[dict]:
    """Per model form and version: the cases judged in that form and how they ended, so that a
    runtime that fails only with static shapes or constant folding shows where. Empty for a
    function plug-in (no forms)."""
    tallies: dict[tuple[str, int], list[CaseResult]] = defaultdict(list)
    for result in raw.results:
        if result.form:
            tallies[result.form, result.version].append(result)
    entries = []
    for form in sorted({form for form, _ in tallies}, key=_form_order(raw)):
        for version in versions:
            mine = tallies.get((form, version), [])
            judged_here = [r for r in mine if r.outcome != CENSUS]
            tally = counts(r.outcome for r in judged_here)
            entries.append({
                "form": form, "version": version, "cases": len(judged_here), "counts": tally,
                "outcome": worst(tally),
                "failing_clauses": sorted({r.clause for r in judged_here if r.outcome != "pass" and r.clause},
                                          key=_clause_number),
            })
    return entries


def _clause_number(clause_id: str) -> int:
    digits = "".join(ch for ch in clause_id if ch.isdigit())
    return int(digits) if digits else 0


def _find_clause(vspec: spec.VersionSpec | None, clause_id: str | None) -> spec.Clause | None:
    if vspec is None or clause_id is None:
        return None
    try:
        return vspec.clause(clause_id)
    except KeyError:
        return None


def _family(type_name: str) -> str:
    entry = spec.catalogue().get(type_name)
    return entry.family if entry else "other"


def _coverage(raw: RawRun, versions: list[int], types: list[str]) -> dict:
    """Input partitions (case tags "key:value") reached per version and type.

    The set of partitions that could be reached is not known in advance, so it is taken from the
    run itself: every tag seen anywhere in the run for a type of the same family (float, signed,
    unsigned, ...), in any version. A partition is unreached for a version and type when it is in
    that set but no case of that version and type carried it. ``type:*`` tags are left out (the
    type is already a coordinate)."""
    seen: dict[tuple[int, str], Counter] = defaultdict(Counter)
    by_family: dict[str, set[str]] = defaultdict(set)
    for result in raw.results:
        tags = [str(t) for t in result.tags if not str(t).startswith("type:")]
        seen[result.version, result.type_name].update(tags)
        by_family[_family(result.type_name)].update(tags)
    keys = sorted({t.split(":", 1)[0] for tags in by_family.values() for t in tags})
    cells, unreached_by_version = [], {}
    for version in versions:
        reached_any: set[str] = set()
        possible_any: set[str] = set()
        for type_name in types:
            tally = seen.get((version, type_name), Counter())
            possible = by_family.get(_family(type_name), set())
            if not tally:
                continue
            reached_any |= set(tally)
            possible_any |= possible
            cells.append({"version": version, "type": type_name, "tags": dict(sorted(tally.items())),
                          "reached": len(set(tally) & possible), "possible": len(possible),
                          "unreached": sorted(possible - set(tally)),
                          "by_key": {k: [len({t for t in tally if t.split(":", 1)[0] == k}),
                                         len({t for t in possible if t.split(":", 1)[0] == k})] for k in keys}})
        unreached_by_version[str(version)] = sorted(possible_any - reached_any)
    return {"keys": keys, "cells": cells, "unreached": unreached_by_version}


def _differences(versions: list[int]) -> list[dict]:
    known = [n for n in versions if _spec(n) is not None]
    return [{"from": a, "to": b, "changes": [{"what": c.what, "name": c.name, "how": c.how, "detail": c.detail}
                                             for c in diff(spec.load(a), spec.load(b))]}
            for a, b in pairwise(known)]


def _plain(value: Any) -> Any:
    """JSON-safe copy of the environment dict: anything exotic becomes its string."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    return str(value)


def aggregate(raw: RawRun) -> dict:
    """The report document for one run (see report.schema.json)."""
    versions = _tested_versions(raw)
    types = _type_order(raw, versions)
    census_entries = census.entries(raw, _tensor, lambda version, topic: _find_clause(_spec(version), topic))
    return {
        "schema": SCHEMA,
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "run": _run(raw),
        "versions": _versions(raw, versions),
        "types": types,
        "clauses": clauses.rows(raw, versions, census_entries, counts, worst, _spec),
        "matrix": _matrix(raw, versions, types),
        "forms": _forms(raw, versions),
        "failures": _failures(raw),
        "census": census_entries,
        "coverage": _coverage(raw, versions, types),
        "differences": _differences(versions),
        "environment": _plain(raw.environment),
    }
