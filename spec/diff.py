"""Differences between two versions, computed from the spec data alone."""

from __future__ import annotations

from dataclasses import dataclass

from .model import Attribute, Clause, VersionSpec


@dataclass(frozen=True)
class Change:
    """One difference: ``what`` is types, attribute or clause; ``how`` is added, removed or changed."""

    what: str
    name: str
    how: str
    detail: str

    def __str__(self) -> str:
        return f"{self.how:<8} {self.what:<9} {self.name}: {self.detail}"


def _describe_attribute(a: Attribute) -> str:
    return f"{a.type}, default {a.default}, accepted {a.accepted()}"


def _describe_clause(c: Clause) -> str:
    rule = f"check {c.check}" if c.check else "when " + ", ".join(f"{k}={v}" for k, v in c.when.items())
    return f"{c.title} ({c.kind}; {rule})"


def _changed_fields(old: object, new: object, fields: tuple[str, ...]) -> list[str]:
    return [f"{f}: {getattr(old, f)} -> {getattr(new, f)}" for f in fields if getattr(old, f) != getattr(new, f)]


def diff(old: VersionSpec, new: VersionSpec) -> list[Change]:
    """What ``new`` adds, removes or changes relative to ``old``."""
    changes = [Change("types", name, "added", f"now in {new.inputs[0][1]}")
               for name in new.type_names if name not in old.type_names]
    changes += [Change("types", name, "removed", f"no longer in {old.inputs[0][1]}")
                for name in old.type_names if name not in new.type_names]
    for name in sorted(old.attributes.keys() | new.attributes.keys()):
        before, after = old.attributes.get(name), new.attributes.get(name)
        if before is None:
            changes.append(Change("attribute", name, "added", _describe_attribute(after)))
        elif after is None:
            changes.append(Change("attribute", name, "removed", _describe_attribute(before)))
        elif details := _changed_fields(before, after, ("type", "default", "values", "range")):
            changes.append(Change("attribute", name, "changed", "; ".join(map(str, details))))
    old_clauses = {c.id: c for c in old.clauses}
    new_clauses = {c.id: c for c in new.clauses}
    for clause_id in sorted(old_clauses.keys() | new_clauses.keys(), key=lambda i: int(i[1:])):
        before, after = old_clauses.get(clause_id), new_clauses.get(clause_id)
        if before is None:
            changes.append(Change("clause", clause_id, "added", _describe_clause(after)))
        elif after is None:
            changes.append(Change("clause", clause_id, "removed", _describe_clause(before)))
        elif details := _changed_fields(before, after, ("kind", "check", "when", "facts", "basis")):
            changes.append(Change("clause", clause_id, "changed", f"{after.title}: " + "; ".join(details)))
        elif before.statement != after.statement:
            changes.append(Change("clause", clause_id, "changed", f"{after.title}: statement reworded"))
    return changes
