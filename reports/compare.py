"""What changed between two runs, from their report documents alone: verdicts per version,
clauses and types newly failing or newly passing, and census policies.

A regression is something that passed and now fails: a version that was conformant and is not,
or a clause or type whose cases all passed and now do not."""

from __future__ import annotations

from .aggregate import CENSUS, NOT_RUN

PASSING = "pass"
NEUTRAL = (CENSUS, NOT_RUN)


def _failing(outcome: str) -> bool:
    return outcome not in (PASSING, *NEUTRAL)


def _run(document: dict) -> dict:
    run = document["run"]
    return {k: run[k] for k in ("impl", "started", "profile", "seed", "complete")}


def _status(document: dict) -> dict[tuple, dict]:
    """(version, 'clause'|'type', name) -> {outcome, title}"""
    found = {}
    for clause in document["clauses"]:
        found[clause["version"], "clause", clause["id"]] = {"outcome": clause["outcome"], "title": clause["title"]}
    for cell in document["matrix"]:
        found[cell["version"], "type", cell["type"]] = {"outcome": cell["outcome"], "title": ""}
    return found


def _policy(entry: dict | None) -> str:
    if entry is None:
        return "(not observed)"
    return ", ".join(entry["policy"]) if entry["coherent"] else "(no coherent policy)"


def compare(old: dict, new: dict) -> dict:
    """The differences between two report documents (old first); ``regression`` says whether
    anything that passed now fails."""
    verdicts = []
    before_verdicts = {v["version"]: v["verdict"] for v in old["versions"]}
    for entry in new["versions"]:
        before = before_verdicts.get(entry["version"])
        if before is not None and before != entry["verdict"]:
            verdicts.append({"version": entry["version"], "before": before, "after": entry["verdict"],
                             "regression": before == "conformant"})
    before_status, after_status = _status(old), _status(new)
    failing, passing = [], []
    for key in sorted(after_status, key=lambda k: (k[0], k[1], k[2])):
        after = after_status[key]["outcome"]
        before = before_status.get(key, {"outcome": NOT_RUN})["outcome"]
        item = {"version": key[0], "what": key[1], "name": key[2], "title": after_status[key]["title"],
                "before": before, "after": after, "regression": before == PASSING and _failing(after)}
        if _failing(after) and not _failing(before):
            failing.append(item)
        elif after == PASSING and _failing(before):
            passing.append(item)
    old_census = {(c["version"], c["topic"], c.get("group") or ""): c for c in old["census"]}
    new_census = {(c["version"], c["topic"], c.get("group") or ""): c for c in new["census"]}
    census = []
    for key in sorted(old_census.keys() | new_census.keys()):
        before, after = _policy(old_census.get(key)), _policy(new_census.get(key))
        if before != after:
            entry = new_census.get(key) or old_census[key]
            title = entry["title"] + (f" ({key[2]})" if key[2] else "")
            census.append({"version": key[0], "topic": key[1], "title": title, "before": before, "after": after})
    regression = any(v["regression"] for v in verdicts) or any(f["regression"] for f in failing)
    return {"old": _run(old), "new": _run(new), "verdicts": verdicts, "newly_failing": failing,
            "newly_passing": passing, "census": census, "regression": regression}


def as_text(comparison: dict) -> str:
    """The comparison as terminal text."""
    old, new = comparison["old"], comparison["new"]
    lines = [f"old: {old['impl']} started {old['started']} ({old['profile']}, seed {old['seed']})",
             f"new: {new['impl']} started {new['started']} ({new['profile']}, seed {new['seed']})"]
    sections = (
        ("Verdict changes", [f"ArgMin-{v['version']}: {v['before']} -> {v['after']}"
                             + ("  REGRESSION" if v["regression"] else "") for v in comparison["verdicts"]]),
        ("Newly failing", [f"ArgMin-{f['version']} {f['what']} {f['name']} {f['title']}".rstrip()
                           + f": {f['before']} -> {f['after']}" + ("  REGRESSION" if f["regression"] else "")
                           for f in comparison["newly_failing"]]),
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
