"""What changed between two runs, from their report documents alone: verdicts per version, their
scope and strictness, clauses and types newly failing or newly passing, and census policies; and,
first, whether the two were made on different instruction sets or caps (reports.isa).

A regression is something that passed and now fails: a version that was conformant and is not, a
clause or type of T whose cases all passed and now do not, or a type that was implemented and is
not any more. Strictness (how invalid models are treated) changes are listed, never a regression:
they are not conformance (results.verdict).

Where the old run's folder holds the new run's counterexamples asked of the old implementation
(``replays.json``, engine.judging.replays), a clause newly failing whose counterexample fails the old run
too is not new, only newly met: listed, never a regression. Where the new folder holds the old
run's counterexamples, a clause "newly passing" on which one of them still fails is not passing."""

from __future__ import annotations

from collections.abc import Sequence

from generators.profiles import seed_text
from reports.document.aggregate import NOT_RUN
from reports.document.parts import CensusEntry, Document
from results import replays
from results.outcomes import MISSING_REJECTION, OBSERVED, PASS

from .isa import CAP, EXTENSIONS, cap_text, differences, instruction_set

NEUTRAL = (OBSERVED, NOT_RUN)


def _failing(outcome: str) -> bool:
    return outcome not in (PASS, *NEUTRAL)


def _regression(before: str, after: str, kind: str) -> bool:
    """Passed before and fails now, where failing counts: not on an invalid model (strictness)."""
    return before == PASS and _failing(after) and kind != "rejection" and after != MISSING_REJECTION


def _standing_changes(old: Document, new: Document) -> tuple[list[dict], list[dict]]:
    """Per version: types that left or joined the scope, and strictness level changes."""
    before = {v["version"]: v for v in old["versions"]}
    scope, strictness = [], []
    for entry in new["versions"]:
        was = before.get(entry["version"])
        if was is None or "scope" not in was or "scope" not in entry:
            continue
        lost = [t for t in was["scope"]["implemented"] if t in entry["scope"]["not_implemented"]]
        gained = [t for t in entry["scope"]["implemented"] if t in was["scope"]["not_implemented"]]
        if lost or gained:
            scope.append({"version": entry["version"], "no_longer_implemented": lost, "now_implemented": gained,
                          "regression": bool(lost)})
        if was["strictness"]["level"] != entry["strictness"]["level"]:
            strictness.append({"version": entry["version"], "before": was["strictness"]["level"],
                               "after": entry["strictness"]["level"]})
    return scope, strictness


def _run(document: Document) -> dict:
    run = document["run"]
    return {k: run[k] for k in ("impl", "started", "profile", "seed", "complete")}


def _status(document: Document) -> dict[tuple, dict]:
    """(version, 'clause'|'type', name) -> {outcome, title}"""
    found = {}
    for clause in document["clauses"]:
        found[clause["version"], "clause", clause["id"]] = {"outcome": clause["outcome"], "title": clause["title"],
                                                            "kind": clause["kind"]}
    for cell in document["matrix"]:
        found[cell["version"], "type", cell["type"]] = {"outcome": cell["outcome"], "title": "",
                                                        "kind": "semantic" if cell["in_t"] else "rejection"}
    return found


def _policy(entry: CensusEntry | None) -> str:
    if entry is None:
        return "(not observed)"
    return ", ".join(entry["policy"]) if entry["coherent"] else "(no coherent policy)"


def _also_failing(asked: Sequence[dict], source: str) -> set[tuple[int, str]]:
    """The rows of ``source``'s counterexamples that fail where they were asked: each as
    (version, clause) and as (version, type), as the comparison's rows are keyed."""
    failing = [e for e in asked if e["source"] == source and e["outcome"] == replays.FAILS]
    return {(e["version"], e["clause"]) for e in failing} | {(e["version"], e["type_name"]) for e in failing}


def _label(document: Document) -> str:
    """A run's name in replays.json (results.replays.label)."""
    certificate = document["certificate"]
    return replays.label(certificate["implementation_version"], document["run"]["impl"], certificate.get("isa_cap"))


def compare(old: Document, new: Document, old_asked: Sequence[dict] = (), new_asked: Sequence[dict] = ()) -> dict:
    """The differences between two report documents (old first); ``regression`` says whether
    anything that passed now fails. ``old_asked``: the new run's counterexamples asked of the old
    implementation; ``new_asked``: the old run's asked of the new one (results.replays)."""
    already = _also_failing(old_asked, _label(new))
    still = _also_failing(new_asked, _label(old))
    verdicts = _verdicts(old, new, already)
    failing, passing = _cells(old, new, already, still)
    scope, strictness = _standing_changes(old, new)
    regression = any(item["regression"] for item in (*verdicts, *failing, *scope))
    sets = [instruction_set(old["certificate"]), instruction_set(new["certificate"])]
    return {"old": _run(old), "new": _run(new), "isa": {"old": sets[0], "new": sets[1], "differs": differences(sets)},
            "verdicts": verdicts, "scope": scope, "strictness": strictness,
            "newly_failing": failing, "newly_passing": passing, "census": _census(old, new), "regression": regression}


def _verdicts(old: Document, new: Document, already: set) -> list[dict]:
    """Each version whose verdict changed; a change to NON-CONFORMANT is a regression unless every
    clause it fails on fails the old implementation too (``already``)."""
    verdicts = []
    before_verdicts = {v["version"]: v["verdict"] for v in old["versions"]}
    for entry in new["versions"]:
        before = before_verdicts.get(entry["version"])
        if before is not None and before != entry["verdict"]:
            known = all((entry["version"], c) in already for c in entry.get("failing_clauses", [])) and already
            verdicts.append({"version": entry["version"], "before": before, "after": entry["verdict"],
                             "already_in_old": bool(known), "regression": before == "conformant" and not known})
    return verdicts


def _cells(old: Document, new: Document, already: set, still: set) -> tuple[list[dict], list[dict]]:
    """The clauses and types newly failing, and those newly passing (unless the new run's
    counterexamples still fail the old one's ask, ``still``)."""
    before_status, after_status = _status(old), _status(new)
    failing, passing = [], []
    for key in sorted(after_status, key=lambda k: (k[0], k[1], k[2])):
        after = after_status[key]["outcome"]
        before = before_status.get(key, {"outcome": NOT_RUN})["outcome"]
        item = {"version": key[0], "what": key[1], "name": key[2], "title": after_status[key]["title"],
                "before": before, "after": after, "already_in_old": key[::2] in already,
                "regression": _regression(before, after, after_status[key]["kind"]) and key[::2] not in already}
        if _failing(after) and not _failing(before):
            failing.append(item)
        elif after == PASS and _failing(before) and key[::2] not in still:
            passing.append(item)
    return failing, passing


def _census(old: Document, new: Document) -> list[dict]:
    """Each census topic (and group) whose policy changed."""
    old_census = {(c["version"], c["topic"], c.get("group") or ""): c for c in old["census"]}
    new_census = {(c["version"], c["topic"], c.get("group") or ""): c for c in new["census"]}
    census = []
    for key in sorted(old_census.keys() | new_census.keys()):
        before, after = _policy(old_census.get(key)), _policy(new_census.get(key))
        if before != after:
            entry = new_census.get(key) or old_census[key]
            title = entry["title"] + (f" ({key[2]})" if key[2] else "")
            census.append({"version": key[0], "topic": key[1], "title": title, "before": before, "after": after})
    return census


def _isa_lines(isa: dict) -> list[str]:
    """What differs between the two runs' instruction sets, in English (none where nothing does)."""
    old, new = isa["old"], isa["new"]
    lines = []
    if EXTENSIONS in isa["differs"]:
        only = [", ".join(n for n in a["extensions"] if n not in b["extensions"]) or "none" for a, b in
                ((old, new), (new, old))]
        lines.append(f"DIFFERENT INSTRUCTION SETS: only the old run's CPU has {only[0]}; only the new run's has "
                     f"{only[1]}")
    if CAP in isa["differs"]:
        lines.append(f"DIFFERENT CAPS ON THE INSTRUCTION SET: old {cap_text(old['cap']) or 'none'}, new "
                     f"{cap_text(new['cap']) or 'none'}")
    if lines:
        lines.append("  a runtime that picks its kernels by the CPU (OpenVINO) may answer differently for this alone")
    return lines


def as_text(comparison: dict) -> str:
    """The comparison as terminal text."""
    old, new = comparison["old"], comparison["new"]
    lines = [f"{name}: {run['impl']} started {run['started']} ({run['profile']}, seed "
             f"{seed_text(run['seed'], run['profile'])})" for name, run in (("old", old), ("new", new))]
    lines += _isa_lines(comparison["isa"])
    sections = (
        ("Verdict changes", [f"ArgMin-{v['version']}: {v['before']} -> {v['after']}"
                             + ("  REGRESSION" if v["regression"] else "")
                             + ("  (its counterexamples fail the old run too: not new)" if v.get("already_in_old")
                                else "") for v in comparison["verdicts"]]),
        ("Scope changes", [f"ArgMin-{s['version']}: "
                           + "; ".join(part for part in (
                               s["no_longer_implemented"] and "no longer implemented: "
                               + ", ".join(s["no_longer_implemented"]),
                               s["now_implemented"] and "now implemented: " + ", ".join(s["now_implemented"]))
                               if part)
                           + ("  REGRESSION" if s["regression"] else "") for s in comparison["scope"]]),
        ("Strictness changes", [f"ArgMin-{s['version']}: {s['before']} -> {s['after']} (not a regression)"
                                for s in comparison["strictness"]]),
        ("Newly failing", [f"ArgMin-{f['version']} {f['what']} {f['name']} {f['title']}".rstrip()
                           + f": {f['before']} -> {f['after']}" + ("  REGRESSION" if f["regression"] else "")
                           + ("  (its counterexample fails the old run too: not new)" if f.get("already_in_old")
                              else "") for f in comparison["newly_failing"]]),
        ("Newly passing", [f"ArgMin-{f['version']} {f['what']} {f['name']} {f['title']}".rstrip()
                           + f": {f['before']} -> {f['after']}" for f in comparison["newly_passing"]]),
        ("Census changes", [f"ArgMin-{c['version']} {c['topic']} {c['title']}: {c['before']} -> {c['after']}"
                            for c in comparison["census"]]),
    )
    for title, items in sections:
        lines.append(f"{title}: {len(items) or 'none'}")
        lines += [f"  {item}" for item in items]
    lines.append("REGRESSION: something that passed now fails." if comparison["regression"] else "No regression.")
    return "\n".join(lines)
