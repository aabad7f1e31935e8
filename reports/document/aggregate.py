"""RawRun -> the report document: the JSON twin of the HTML report, holding everything it shows.

The document is plain JSON data (validated by ``report.schema.json``), so a report can be
re-rendered, compared or verified later without the run's raw records. Everything the
implementation under test produced (exception texts, returned values) is kept as the strings it
recorded; escaping is the renderers' job.

Stable anchors tie the parts together: ``v13-C1`` is a clause of a version, ``v13-C1-int16`` the
failure of that clause on that type (``v13-C1-int16-<problem>`` for a second problem there),
``v13-C14-census`` a census topic.
They depend only on the data, so a link from another page (the runtime matrix) stays valid."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from itertools import pairwise
from typing import Any

import spec
from results import OBSERVED, OUTCOMES, CaseResult, Counterexample, Pack, PackNode, RawRun, Tensor
from results.causes import signature, special_values
from results.outcomes import ERROR, FAIL, FAULTS, MISSING_REJECTION, PASS, SEVERITY
from results.records import FLAKY, NEEDS_HISTORY
from results.verdict import Standing, clause_number, standings
from spec.diff import diff

from . import census, clauses
from . import parts as doc
from .certificate import certificate
from .replay import display_values, snippet, standalone
from .shape_grid import shape_grid

SCHEMA = "argmin-conformance/report/4"
ALL_OUTCOMES = (*OUTCOMES, OBSERVED)
NOT_RUN = "not-run"
# numpy's scalar wrappers in messages: 'np.int64(2)' reads as '2'.
_NUMPY_SCALAR = re.compile(r"\b(?:np|numpy)\.\w+\(([^()]*)\)")
# Case tags that are not input partitions of generated cases.
_NOT_PARTITIONS = ("type:",)


def counts(outcomes: Iterable[str]) -> doc.Counts:
    """Cases per outcome, every known outcome present (zero-filled); unknown outcomes count as error."""
    tally = dict.fromkeys(ALL_OUTCOMES, 0)
    for outcome in outcomes:
        tally[outcome if outcome in tally else ERROR] += 1
    return tally


def worst(tally: doc.Counts) -> str:
    return next((o for o in SEVERITY if tally.get(o)), NOT_RUN)


def clause_anchor(version: int, clause_id: str | None) -> str:
    return f"v{version}-{clause_id or 'none'}"


def _spec(version: int) -> spec.VersionSpec | None:
    try:
        return spec.load(version)
    except spec.SpecError:
        return None


def _tensor(value: Tensor | str | None) -> doc.Value:
    if isinstance(value, Tensor):
        return {"type": str(value.type_name), "shape": [int(n) for n in value.shape],
                "values": [str(v) for v in value.values], "display": display_values(value)}
    return None if value is None else str(value)


def _attributes(attributes: dict) -> dict:
    return {str(k): v for k, v in attributes.items()}


def _pack(pack: Pack | None) -> doc.Pack | None:
    """The packed model a packed-only failure showed in, node by node (results.records.Pack)."""
    if pack is None:
        return None
    return {"form": str(pack.form), "position": int(pack.position), "reproduced": bool(pack.reproduced),
            "nodes": _nodes(pack.nodes)}


def _nodes(nodes: list[PackNode]) -> list[doc.PackNode]:
    return [{"input": _tensor(n.input), "attributes": _attributes(n.attributes)} for n in nodes]


def _or_none(convert: Callable[[Any], Any], value: Any) -> Any:
    """``convert(value)``, or None where the run recorded nothing."""
    return None if value is None else convert(value)


def _strings(values: Iterable) -> list[str]:
    return [str(v) for v in values]


def _usage(rows: list[dict]) -> list[doc.ModelUsage]:
    """What the models cost, per suite and model form (RunInfo.model_usage)."""
    return [{"suite": str(u["suite"]), "form": str(u["form"]), "seconds": float(u["seconds"]),
             **{name: int(u[name]) for name in ("compiles", "loaded", "calls")}, "nodes": int(u.get("nodes", 0))}
            for u in rows]


def _schedule(schedule: dict) -> doc.Schedule:
    return {"compile_key": str(schedule["compile_key"]),
            **{name: int(schedule[name]) for name in ("size", "signatures", "shapes")}}


def _run(raw: RawRun) -> doc.Run:
    info = raw.info
    return {
        "impl": str(info.impl), "started_in": _or_none(str, info.started_in),
        "profile": str(info.profile), "seed": info.seed,
        "versions": sorted(int(v) for v in info.versions),
        "type_restriction": _or_none(_strings, info.type_names),
        "started": str(info.started), "duration_s": float(info.duration_s), "complete": bool(info.complete),
        "incomplete_reason": _or_none(str, info.incomplete_reason),
        "cases_run": len(raw.results), "census_records": len(raw.census),
        "isolation": str(info.isolation), "timeout_s": float(info.timeout_s),
        "profile_label": {str(k): str(v) for k, v in info.profile_label.items()},
        "profile_description": {str(k): str(v) for k, v in info.profile_description.items()},
        "forms": _or_none(_strings, info.forms),
        "claim": str(info.claim),
        "packing": str(info.packing),
        "models_compiled": _or_none(int, info.models_compiled),
        "calls_made": _or_none(int, info.calls_made),
        "workers": int(info.workers),
        "models_loaded": _or_none(int, info.models_loaded),
        "model_seconds": _or_none(float, info.model_seconds),
        "model_usage": _or_none(_usage, info.model_usage),
        "compile_cache": _or_none(str, info.compile_cache),
        "schedule": _or_none(_schedule, info.schedule),
        "planned": _or_none(_strings, info.planned),
        "lost": _strings(info.lost or ()),
    }


def _tested_versions(raw: RawRun) -> list[int]:
    return sorted({int(v) for v in raw.info.versions} | {r.version for r in raw.results})


def _seconds(results: Iterable[CaseResult]) -> float:
    return round(sum(float(r.duration_s) for r in results), 6)


def _severity(outcome: str) -> int:
    """Rank of an outcome, worst first; an unknown one ranks as the worst."""
    return SEVERITY.index(outcome) if outcome in SEVERITY else 0


def _causes(version: int, failures: list[doc.FailureCard], types: list[str],
            census_entries: list[doc.CensusEntry]) -> list[doc.Cause]:
    """Why a version's headline is NON-CONFORMANT, root cause first: each clause failing with a
    cause of its own, with its outcome and the types it failed on ("C5: double, int64 wrong
    answer"), each type linked to its failure; a crash or hang on undefined input links to its
    census entry. A clause that failed on every type it was tried on says so instead of listing
    the types a profile happened to sample."""
    grouped: dict[tuple[str, str], list[doc.FailureCard]] = defaultdict(list)
    for failure in failures:
        if failure["version"] == version and failure["role"] == "headline" and not failure["same_cause"]:
            grouped[failure["clause"] or "", failure["outcome"]].append(failure)
    ordered = sorted(grouped.items(), key=lambda item: (clause_number(item[0][0]), _severity(item[0][1])))
    entries: list[doc.Cause] = []
    for (clause, outcome), items in ordered:
        first_of_type: dict[str, doc.CauseType] = {}  # a type that failed in several model forms is named once
        for f in sorted(items, key=lambda f: types.index(f["type"])):
            named = first_of_type.setdefault(f["type"], {"type": f["type"], "anchor": f["anchor"], "packed": True})
            named["packed"] = named["packed"] and bool(f["packed"])  # failed only in packed models
        entries.append({"clause": clause or None, "title": items[0]["clause_title"], "outcome": outcome,
                        "types": list(first_of_type.values()), "every_type": all(f["every_type"] for f in items),
                        "census": False})
    crashed: dict[str, doc.Cause] = {}  # a census topic (all its groups) that crashed or hung the implementation
    for entry in census_entries:
        faults = [s for s in FAULTS if entry["statuses"].get(s)] if entry["version"] == version else []
        if faults:
            cause = crashed.setdefault(entry["topic"], {"clause": entry["topic"], "title": entry["title"],
                                                        "outcome": faults[0], "types": [], "every_type": False,
                                                        "census": True})
            for t in entry["types"]:
                if any(t["statuses"].get(s) for s in FAULTS) and t["type"] not in [x["type"] for x in cause["types"]]:
                    cause["types"].append({"type": t["type"], "anchor": entry["anchor"]})
    return entries + list(crashed.values())


def _specials(tensor: doc.Value) -> frozenset[str]:
    if not isinstance(tensor, dict):
        return frozenset()
    return special_values(Tensor(tensor["type"], tensor["shape"], tensor["values"]))


def _census_cause(entry: doc.CensusEntry, failures: list[doc.FailureCard]) -> str | None:
    """The clause of a wrong answer (same version and type) whose smallest counterexample needs a
    special value that the census topic's odd answers hold too: tract's "incoherent" NaN answers
    (`[nan, inf]` gives 0) are its `[inf, FLT_MAX]` minimum bug, not a NaN policy."""
    for example in entry["examples"]:
        held = _specials(example["input"]) - {"nan"}
        for f in failures:
            if (f["version"], f["type"], f["role"], f["outcome"]) == (entry["version"], example["type"], "headline",
                                                                      FAIL) and f["counterexample"] \
                    and held & _specials(f["counterexample"]["input"]):
                return f["clause"]
    return None


def _scope(standing: Standing) -> doc.Scope:
    s = standing.scope
    return {"claim": s.claim, "claimed": list(s.claimed), "implemented": list(s.implemented),
            "not_implemented": list(s.not_implemented), "untested": list(s.untested)}


def _strictness(standing: Standing, failures: list[doc.FailureCard]) -> doc.Strictness:
    """How the version's invalid models were treated, per rejection clause, each linked to the
    failure that shows it computed (or to the clause row when none did)."""
    clauses_: list[doc.StrictnessClause] = []
    for e in standing.strictness.clauses:
        anchor = _first_anchor(failures, version=standing.version, clause=e.clause, outcome=MISSING_REJECTION)
        clauses_.append({"clause": e.clause, "title": e.title, "refused": e.refused, "computed": e.computed,
                         "faults": e.faults, "computed_types": list(e.computed_types), "every_type": e.every_type,
                         "anchor": anchor or clause_anchor(standing.version, e.clause)})
    return {"level": standing.strictness.level, "clauses": clauses_}


def _versions(raw: RawRun, standings: dict[int, Standing], failures: list[doc.FailureCard], types: list[str],
              census_entries: list[doc.CensusEntry]) -> list[doc.Version]:
    """One entry per version: its headline verdict and why, its scope and strictness beside it,
    counts, its causes with ``types`` (the matrix rows) as their order, and the census warnings."""
    entries: list[doc.Version] = []
    for version, s in standings.items():
        vspec = _spec(version)
        in_t = list(vspec.type_names) if vspec else []
        restriction = None if raw.info.type_names is None else [t for t in in_t if t in raw.info.type_names]
        mine = [r for r in raw.results if r.version == version]
        entries.append({
            "version": version, "verdict": s.verdict, "reason": s.reason, "type_restriction": restriction,
            "types": in_t, "cases": len(mine), "judged": s.judged,
            "not_passed": len(s.failures) + len(s.census_faults),
            "counts": counts(r.outcome for r in mine), "seconds": _seconds(mine),
            "failing_clauses": list(s.clauses),
            "causes": _causes(version, failures, types, census_entries),
            "scope": _scope(s), "strictness": _strictness(s, failures),
            "census_warnings": [{"topic": c["topic"], "title": c["title"], "warnings": list(c["warnings"]),
                                 "anchor": c["anchor"], "same_cause": _census_cause(c, failures)}
                                for c in census_entries if c["version"] == version and c["warnings"]],
            "inferred_only": clauses.inferred_only(s),
        })
    return entries


def _first_anchor(failures: list[doc.FailureCard], **where: object) -> str | None:
    """The anchor of the worst failure matching ``where`` (failures are in clause order)."""
    found = [f for f in failures if all(f[key] == value for key, value in where.items())]
    found.sort(key=lambda f: _severity(f["outcome"]))
    return found[0]["anchor"] if found else None


def _clauses(raw: RawRun, versions: list[int], census_entries: list[doc.CensusEntry],
             failures: list[doc.FailureCard]) -> list[doc.ClauseRow]:
    """The clause rows (reports.clauses), each with its anchor, the implementation's time over
    the cases that exercised it, and a link to its worst failure."""
    rows = clauses.rows(raw, versions, census_entries, counts, worst, _spec)
    seconds: Counter = Counter()
    for result in raw.results:
        for clause_id, _ in clauses.outcomes_per_clause(result):
            seconds[result.version, str(clause_id)] += float(result.duration_s)
    for row in rows:
        key = (row["version"], row["id"])
        if row["outcome"] == NOT_RUN and row["census"]:
            row["outcome"] = OBSERVED  # observed only through census records (ties at v1 and v11)
        row.update(anchor=clause_anchor(*key), seconds=round(seconds[key], 6),
                   failure_anchor=_first_anchor(failures, version=key[0], clause=key[1]))
    return rows


def _slug(text: str) -> str:
    """Text fit for an anchor: 'axis in [-r, -1]' -> 'axis-in-r-1'."""
    return re.sub(r"[^A-Za-z0-9_.]+", "-", text).strip("-")


def _census(raw: RawRun) -> list[doc.CensusEntry]:
    """The census entries (reports.census), each with its anchor: ``v13-C14-census`` for the first
    group of a topic, ``v13-C14-census-<group>`` for the others."""
    entries = census.entries(raw, _tensor, lambda version, topic: _find_clause(_spec(version), topic))
    seen: set[str] = set()
    for entry in entries:
        anchor = f"{clause_anchor(entry['version'], entry['topic'])}-census"
        entry["anchor"] = anchor if anchor not in seen else f"{anchor}-{_slug(str(entry['group']))}"
        seen.add(anchor)
    return entries


def _type_order(raw: RawRun, versions: list[int]) -> list[str]:
    """Rows of the types matrix: the types of the tested versions' T, then any other type a case
    used (rejection inputs), in catalogue order."""
    catalogue = list(spec.catalogue())
    inside: list[str] = []
    for version in sorted(versions, reverse=True):
        vspec = _spec(version)
        inside += [t for t in (vspec.type_names if vspec else ()) if t not in inside]
    others = {r.type_name for r in raw.results} - set(inside)
    return inside + sorted(others, key=lambda t: (catalogue.index(t) if t in catalogue else len(catalogue), t))


def _matrix(raw: RawRun, versions: list[int], types: list[str],
            failures: list[doc.FailureCard]) -> list[doc.MatrixCell]:
    cells = defaultdict(list)
    for result in raw.results:
        cells[result.version, result.type_name].append(result.outcome)
    rows: list[doc.MatrixCell] = []
    for version in versions:
        vspec = _spec(version)
        for type_name in types:
            tally = counts(cells.get((version, type_name), []))
            in_t = bool(vspec and type_name in vspec.type_names)
            declared = raw.info.type_names is None or type_name in raw.info.type_names
            rows.append({"version": version, "type": type_name, "in_t": in_t, "declared": declared,
                         "cases": sum(tally.values()), "counts": tally, "outcome": worst(tally),
                         "anchor": _first_anchor(failures, version=version, type=type_name)})
    return rows


def _rank(result: CaseResult) -> tuple[bool, int]:
    """Which result of a failure to show: one with a counterexample, the smallest."""
    ce = result.counterexample
    return ce is None, math.prod(ce.input.shape) if ce else 0


def _detail(message: str, actual: object) -> str | None:
    """The judge's message without numpy's scalar wrappers, or None where it only restates the
    returned text (a refusal or an error: the "returned" line already says it)."""
    text = _NUMPY_SCALAR.sub(r"\1", message).strip()
    if not text or (isinstance(actual, str) and actual and actual in text):
        return None
    return text


def _counterexample(ce: Counterexample | None) -> doc.Counterexample | None:
    """A failure's counterexample as the document holds it, with the other inputs that failed the
    same way (``also``)."""
    if ce is None:
        return None
    return {
        "input": _tensor(ce.input), "attributes": _attributes(ce.attributes),
        "expected": _tensor(ce.expected), "actual": _tensor(ce.actual),
        "problem": str(ce.problem), "message": str(ce.message), "minimized": bool(ce.minimized),
        "detail": _detail(str(ce.message), ce.actual),
        "also": [{"input": _tensor(e.input), "attributes": _attributes(e.attributes),
                  "actual": _tensor(e.actual)} for e in ce.also],
        "pack": _pack(ce.pack),
        "flaky": bool(ce.flaky),
        "again": _tensor(ce.again),
        "reproduction": None if ce.reproduction is None else str(ce.reproduction),
        "history": None if ce.history is None else [
            {"version": int(m.version), "form": None if m.form is None else str(m.form), "nodes": _nodes(m.nodes)}
            for m in ce.history],
        "after_history": _tensor(ce.after_history),
    }


def _roles(standings: dict[int, Standing]) -> dict[int, tuple[str, str | None]]:
    """What each failed case means for its version, by the verdict rule: ``headline`` (it makes
    the version NON-CONFORMANT), ``scope`` (a type not implemented) or ``strictness`` (an invalid
    model computed); and the clause it shares a root cause with, if any (results.causes)."""
    roles: dict[int, tuple[str, str | None]] = {}
    for s in standings.values():
        for i, result in enumerate(s.failures):
            roles[id(result)] = ("headline", s.same_cause.get(i))
    return roles


def _role(result: CaseResult, roles: dict[int, tuple[str, str | None]]) -> tuple[str, str | None]:
    if id(result) in roles:
        return roles[id(result)]
    return ("strictness", None) if result.kind == "rejection" else ("scope", None)


def _every_type(raw: RawRun) -> set[tuple[int, str | None, str]]:
    """(version, clause, outcome) of failures that every type tried on the clause shared: a
    behaviour of the clause, not of the types a profile sampled."""
    tried: dict[tuple[int, str | None], set[str]] = defaultdict(set)
    failed: dict[tuple[int, str | None, str], set[str]] = defaultdict(set)
    for result in raw.results:
        if result.kind == "undefined":
            continue
        for clause_id, outcome in clauses.outcomes_per_clause(result):
            tried[result.version, clause_id].add(result.type_name)
            if outcome != PASS:
                failed[result.version, clause_id, outcome].add(result.type_name)
    return {key for key, types in failed.items() if len(types) > 1 and types == tried[key[0], key[1]]}


def _failures(raw: RawRun, standings: dict[int, Standing]) -> list[doc.FailureCard]:
    """Every distinct failure (version, clause, type, problem), with its smallest counterexample
    (the last one among equally small ones: later counterexamples are the better shrunk), and what
    it means for the verdict (its role)."""
    chosen: dict[tuple, CaseResult] = {}
    seen: Counter = Counter()
    roles = _roles(standings)
    every_type = _every_type(raw)
    for result in raw.results:
        if result.outcome in (PASS, OBSERVED):
            continue
        ce = result.counterexample
        problem = result.problem or (ce.problem if ce else None) or result.outcome  # older runs lack problem
        key = (result.version, result.clause or "", result.type_name, problem, result.form or "", bool(result.packed))
        seen[key] += 1
        if key not in chosen or _rank(result) <= _rank(chosen[key]):
            chosen[key] = result
    impl = raw.info.impl_portable or raw.info.impl
    order = _form_order(raw)
    entries: list[doc.FailureCard] = []
    anchors: set[str] = set()
    for key in sorted(chosen, key=lambda k: (k[0], clause_number(k[1]), k[2], k[3], order(k[4]))):
        result = chosen[key]
        clause = _find_clause(_spec(result.version), result.clause)
        ce = result.counterexample
        anchor = f"{clause_anchor(result.version, result.clause)}-{result.type_name}"
        anchor = anchor if anchor not in anchors else f"{anchor}-{_slug(key[3])}"
        anchor = anchor if anchor not in anchors else f"{anchor}-{key[4]}"  # the same failure in another model form
        anchor = anchor if anchor not in anchors else f"{anchor}-packed"  # ... and only in a packed model
        anchors.add(anchor)
        role, same_cause = _role(result, roles)
        entries.append({
            "version": result.version, "clause": result.clause, "type": result.type_name, "problem": key[3],
            "anchor": anchor, "outcome": result.outcome, "kind": result.kind, "suite": result.suite,
            "role": role, "same_cause": same_cause,
            "every_type": (result.version, result.clause, result.outcome) in every_type,
            "test": result.test, "occurrences": seen[key],
            "clause_title": clause.title if clause else "",
            "statement": dict(clause.statement) if clause else {}, "basis": clauses.source(clause)["basis"],
            "counterexample": _counterexample(ce),
            "form": result.form,
            "packed": result.packed,
            "replay": snippet(impl, result.version, ce, kind=result.kind, clause=result.clause,
                              form=result.form) if ce else None,
            "standalone": standalone(impl, result.version, ce, kind=result.kind, clause=result.clause,
                                     form=result.form) if ce else None,
        })
    return entries


def _pattern(failure: doc.FailureCard) -> str:
    """What a failure's counterexample says, apart from its type and version: the text of a
    refusal, error or crash with what varies by input blanked (results.causes.signature), or that a result came back
    (the shrunk inputs of wrong answers differ in shape by chance; the card lists each one)."""
    ce = failure["counterexample"]
    if ce is None:
        return ""
    return signature(ce["actual"]) if isinstance(ce["actual"], str) else "returned a result"


def _apart(failure: doc.FailureCard) -> str | None:
    """Where a failure reproduces, where that keeps it off the card of the failures that reproduce alone."""
    reproduction = (failure["counterexample"] or {}).get("reproduction")
    return reproduction if reproduction in (NEEDS_HISTORY, FLAKY) else None


def _cards(failures: list[doc.FailureCard], types: list[str], form_order: Callable[[str], int]) -> list[doc.Card]:
    """Failures merged into one card per root cause: same clause, problem, outcome and
    counterexample pattern, and where it reproduces (a failure that needs history, or a flake,
    needs its own snippets on the page). A card lists the versions, types and model forms it
    covers; its representative (shown in full) is the member with the smallest input."""
    groups: dict[tuple, list[int]] = {}
    for index, failure in enumerate(failures):
        # A failure that shares its root cause with another clause's goes on that clause's card.
        key = (failure["role"], failure["same_cause"] or failure["clause"], failure["problem"], failure["outcome"],
               failure["kind"], _pattern(failure), bool(failure["packed"]),
               _apart(failure))
        groups.setdefault(key, []).append(index)
    cards: list[doc.Card] = []
    for members in groups.values():
        def size(i: int) -> int:
            ce = failures[i]["counterexample"]
            return math.prod(ce["input"]["shape"]) if ce else 0
        # Shown in full: the smallest member of the card's own clause (not one that only shares its cause).
        own = [i for i in members if not failures[i]["same_cause"]] or members
        representative = min(own, key=lambda i: (size(i), i))
        first = failures[members[0]]
        cards.append({
            "anchor": first["anchor"], "clause": first["clause"], "clause_title": first["clause_title"],
            "problem": first["problem"], "outcome": first["outcome"], "kind": first["kind"], "role": first["role"],
            "same_cause": first["same_cause"],
            "clauses": sorted({failures[i]["clause"] or "" for i in members}, key=clause_number),
            "every_type": all(failures[i]["every_type"] for i in members),
            "versions": sorted({failures[i]["version"] for i in members}),
            "types": sorted({failures[i]["type"] for i in members}, key=types.index),
            "failures": members, "representative": representative, "covers": _covers(failures, members),
            "occurrences": sum(failures[i]["occurrences"] for i in members),
            "forms": sorted({failures[i]["form"] for i in members if failures[i]["form"]}, key=form_order),
            "packed": max((failures[i]["packed"] or 0 for i in members), default=0) or None,
        })
    return cards


def _covers(failures: list[doc.FailureCard], members: list[int]) -> list[doc.Cover]:
    """What a card covers, each (version, type, model form) once with the anchors of its members
    (a type failing C1 and, for the same cause, C9 is one entry with two anchors)."""
    covers: dict[tuple, doc.Cover] = {}
    for i in members:
        f = failures[i]
        entry = covers.setdefault((f["version"], f["type"], f["form"]),
                                  {"version": f["version"], "type": f["type"], "form": f["form"], "anchors": []})
        entry["anchors"].append(f["anchor"])
    return list(covers.values())


def _form_order(raw: RawRun) -> Callable[[str], int]:
    """Model forms in the order the run ran them (the run records it); others first."""
    forms = list(raw.info.forms or [])
    return lambda form: forms.index(form) if form in forms else -1


def _forms(raw: RawRun, versions: list[int]) -> list[doc.FormRow]:
    """Per model form and version: the cases judged in that form and how they ended, so that a
    runtime that fails only with static shapes or constant folding shows where. Empty for a
    function plug-in (no forms)."""
    tallies: dict[tuple[str, int], list[CaseResult]] = defaultdict(list)
    for result in raw.results:
        if result.form:
            tallies[result.form, result.version].append(result)
    entries: list[doc.FormRow] = []
    for form in sorted({form for form, _ in tallies}, key=_form_order(raw)):
        for version in versions:
            mine = tallies.get((form, version), [])
            judged_here = [r for r in mine if r.outcome != OBSERVED]
            tally = counts(r.outcome for r in judged_here)
            entries.append({
                "form": form, "version": version, "cases": len(judged_here), "counts": tally,
                "outcome": worst(tally),
                "failing_clauses": sorted({r.clause for r in judged_here if r.outcome != PASS and r.clause},
                                          key=clause_number),
            })
    return entries


def _find_clause(vspec: spec.VersionSpec | None, clause_id: str | None) -> spec.Clause | None:
    if vspec is None or clause_id is None:
        return None
    try:
        return vspec.clause(clause_id)
    except KeyError:
        return None


def _listed_attributes() -> dict[str, tuple[int, ...]]:
    """Attributes with listed values in any version (keepdims, select_last_index): their values."""
    listed: dict[str, tuple[int, ...]] = {}
    for version in spec.versions():
        for name, attribute in spec.load(version).attributes.items():
            if attribute.values is not None:
                listed[name] = attribute.values
    return listed


def _partition(tag: str, listed: dict[str, tuple[int, ...]]) -> str:
    """The coverage partition of a case tag: an attribute's value outside its listed set is one
    partition ("out-of-set"), not one per integer."""
    key, _, value = tag.partition(":")
    if key in listed and value != "omitted" and value not in {str(v) for v in listed[key]}:
        return f"{key}:out-of-set"
    return tag


def _coverage(raw: RawRun, versions: list[int], types: list[str]) -> doc.Coverage:
    """Input partitions (case tags "group:value") of the generated cases, per version, type and
    kind of case (semantic, rejection, undefined): a partition reached only by census cases says
    nothing about the semantic checks, so each kind is counted apart.

    Which partitions could be reached is taken from the run itself, within a version and kind:
    those reached by any type of the same family and the same standing (in T, or outside it and
    so only ever rejected). Value partitions (``special:*``: subnormals, a type's own detour
    values) belong to one type, so they count as possible only for a type that reached them in
    some version. Fixed vectors (ONNX's node tests) are not generated and not counted."""
    listed = _listed_attributes()
    seen: dict[tuple[int, str, str], Counter] = defaultdict(Counter)
    for result in raw.results:
        if result.suite != "fixed":
            seen[result.version, result.type_name, result.kind].update(
                _partition(str(t), listed) for t in result.tags if not str(t).startswith(_NOT_PARTITIONS))
    own_values: dict[tuple[str, str], set[str]] = defaultdict(set)
    for (_, type_name, kind), tally in seen.items():
        own_values[type_name, kind] |= {t for t in tally if t.startswith("special:")}
    standing = {v: set(vspec.type_names) if (vspec := _spec(v)) else set() for v in versions}

    def peers(version: int, type_name: str, kind: str) -> tuple:
        return version, _family(type_name), type_name in standing[version], kind

    universe: dict[tuple, set[str]] = defaultdict(set)
    for (version, type_name, kind), tally in seen.items():
        universe[peers(version, type_name, kind)] |= {t for t in tally if not t.startswith("special:")}
    groups = sorted({t.split(":", 1)[0] for tally in seen.values() for t in tally})
    cells: list[doc.CoverageCell] = []
    for version in versions:
        for type_name in types:
            for kind in ("semantic", "rejection", "undefined"):
                tally = seen.get((version, type_name, kind))
                if not tally:
                    continue
                possible = universe[peers(version, type_name, kind)] | own_values[type_name, kind]
                cells.append({"version": version, "type": type_name, "kind": kind,
                              "in_t": type_name in standing[version], **_reached(tally, possible, groups)})
    return {"groups": groups, "cells": cells}


def _reached(tally: Counter, possible: set[str], groups: list[str]) -> dict:
    """A coverage cell's partitions: each reached with its count, how many of the possible ones
    were reached, which were not, and the same per group."""
    reached = set(tally) & possible
    by_group = {}
    for group in groups:
        members = {t for t in possible if t.split(":", 1)[0] == group}
        if members:
            by_group[group] = [len(members & reached), len(members)]
    return {"tags": dict(sorted(tally.items())), "reached": len(reached), "possible": len(possible),
            "unreached": sorted(possible - reached), "groups": by_group}


def _family(type_name: str) -> str:
    entry = spec.catalogue().get(type_name)
    return entry.family if entry else "other"


def _clause_change(old: spec.Clause | None, new: spec.Clause | None) -> doc.ClauseChange:
    """A clause's side of a version difference, as data the report can word in any language."""
    clause = new or old
    fields = [{"field": f, "before": _plain(getattr(old, f)), "after": _plain(getattr(new, f))}
              for f in ("kind", "check", "when", "facts") if old and new and getattr(old, f) != getattr(new, f)]
    return {"kind": clause.kind, "title": clause.title, "statement": dict(clause.statement), "fields": fields,
            "reworded": bool(old and new and not fields and old.statement != new.statement)}


def _attribute_change(old: spec.Attribute | None, new: spec.Attribute | None) -> doc.AttributeChange:
    def described(a: spec.Attribute | None) -> doc.AttributeSide | None:
        if a is None:
            return None
        return {"type": a.type, "default": a.default, "values": None if a.values is None else list(a.values),
                "range": None if a.range is None else [a.range.min, a.range.max, a.range.stated]}
    return {"before": described(old), "after": described(new)}


def _differences(versions: list[int]) -> list[doc.Difference]:
    """What changed from one tested version to the next (spec.diff), with each change's data."""
    known = [n for n in versions if _spec(n) is not None]
    entries: list[doc.Difference] = []
    for a, b in pairwise(known):
        old, new = spec.load(a), spec.load(b)
        changes: list[doc.Change] = []
        for change in diff(old, new):
            item: doc.Change = {"what": change.what, "name": change.name, "how": change.how, "detail": change.detail}
            if change.what == "clause":
                item["clause"] = _clause_change(_find_clause(old, change.name), _find_clause(new, change.name))
            elif change.what == "attribute":
                item["attribute"] = _attribute_change(old.attributes.get(change.name),
                                                      new.attributes.get(change.name))
            changes.append(item)
        entries.append({"from": a, "to": b, "changes": changes})
    return entries


def _plain(value: Any) -> Any:
    """JSON-safe copy: mappings and sequences kept, anything exotic becomes its string."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    return str(value)


def aggregate(raw: RawRun) -> doc.Document:
    """The report document for one run (see report.schema.json)."""
    versions = _tested_versions(raw)
    types = _type_order(raw, versions)
    standings_ = standings(raw, versions)
    failures = _failures(raw, standings_)
    census_entries = _census(raw)
    return {
        "schema": SCHEMA,
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "run": _run(raw),
        "certificate": certificate(raw),
        "versions": _versions(raw, standings_, failures, types, census_entries),
        "types": types,
        "clauses": _clauses(raw, versions, census_entries, failures),
        "matrix": _matrix(raw, versions, types, failures),
        "forms": _forms(raw, versions),
        "failures": failures,
        "cards": _cards(failures, types, _form_order(raw)),
        "census": census_entries,
        "coverage": _coverage(raw, versions, types),
        "shape_grid": shape_grid(raw),
        "differences": _differences(versions),
        "environment": _plain(raw.environment),
    }
