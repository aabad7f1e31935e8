"""How a version's standing reads, in one sentence per level, in the report's language: the scope
beside the headline ("scope: 7 of 11 types of T implemented; not implemented: int16, ...": a
count of the types implemented, never of those that failed), the strictness ("lenient: computes
bool inputs (C12); accepts undeclared attributes (C13)") and a census topic's policy per type
("first minimum, 270 of 272; 2 answers fit no rule"). The terminal, the
HTML page, JUnit, compare and the matrix page all word it here, from the report document's
``scope`` and ``strictness`` entries; and, in one English line each (the terminal, JUnit,
verify), the causes beside a NON-CONFORMANT headline and what the run is (a certificate or not)."""

from __future__ import annotations

from reports.document.parts import Cause, CauseType, CensusType, Certificate, Scope, Strictness, StrictnessClause

from .i18n import Translator


def scope_text(t: Translator, scope: Scope, restricted: bool) -> str:
    """The types the headline covers, and those it does not."""
    claimed, implemented = scope["claimed"], scope["implemented"]
    if restricted:
        text = t("scope-restricted", k=len(implemented), n=len(claimed))
    elif len(implemented) == len(claimed):
        text = t("scope-all", n=len(claimed))
    else:
        text = t("scope-some", k=len(implemented), n=len(claimed))
    parts = [text]
    if scope["not_implemented"]:
        parts.append(t("not-implemented", types=", ".join(scope["not_implemented"])))
    if scope["untested"]:
        parts.append(t("not-exercised-types", types=", ".join(scope["untested"])))
    if scope["claim"] == "all":
        parts.append(t("claim-all"))
    return "; ".join(parts)


def type_policy(t: Translator, entry: CensusType) -> str:
    """How one type of a census topic reads: its policy ("first minimum"), with how many answers
    follow it where some fit no rule ("first minimum, 270 of 272; 2 answers fit no rule")."""
    if entry["exceptions"]:
        return t("policy-with-exceptions", policy=" + ".join(map(t.policy, entry["policy"])), m=entry["exceptions"],
                 k=entry["answers"] - entry["exceptions"], n=entry["answers"])
    if not entry["coherent"]:
        return t("no-policy")
    return " + ".join(map(t.policy, entry["policy"])) or "—"


def _lenient(t: Translator, entry: StrictnessClause) -> str:
    key = f"lenient-{entry['title']}"
    if entry["title"] == "reject-type":
        key += "-every" if entry["every_type"] else ""
        return t(key, types=", ".join(entry["computed_types"])) + f" ({entry['clause']})"
    return (t(key) if t.has(key) else t("lenient-other")) + f" ({entry['clause']})"


def strictness_text(t: Translator, strictness: Strictness) -> str:
    """Strict, lenient (and what it computes), untested, or not judged (valid models refused too)."""
    tried = strictness["clauses"]
    if strictness["level"] == "refuses-valid":
        return t("strictness-refuses-valid")
    if strictness["level"] == "untested" or not tried:
        return t("strictness-untested")
    if strictness["level"] == "strict":
        return t("strict", n=len(tried), clauses=", ".join(e["clause"] for e in tried))
    return t("lenient", what="; ".join(_lenient(t, e) for e in tried if e["computed"]))


def causes_line(causes: list[Cause]) -> str:
    """What makes the headline NON-CONFORMANT, beside it: 'C1: float16 raised an error; C5: double,
    int64 (in packed models only: int32) wrong answer', as the page says it ('every type tried (11)'
    where a clause failed on every type it was tried on)."""
    t = Translator("en")
    return "; ".join(f"{c['clause']}: {_types(t, c)} {t('cause-' + c['outcome'])}" for c in causes)


def _types(t: Translator, cause: Cause) -> str:
    types: list[CauseType] = cause["types"]
    packed = [ty["type"] for ty in types if ty.get("packed")]
    if cause["every_type"] and len(packed) in (0, len(types)):
        every = t("every-type-tried", n=len(types))
        return f"in packed models only: {every}" if packed else every
    plain = ", ".join(ty["type"] for ty in types if not ty.get("packed"))
    if not packed:
        return plain
    return f"{plain} (in packed models only: {', '.join(packed)})" if plain else \
        f"in packed models only: {', '.join(packed)}"


def certificate_line(block: Certificate) -> str:
    """What the run is, in one English line: "Certificate: ..." or "Quick smoke run, not a
    certificate: only the certify profile produces a certificate." (terminal, JUnit, verify)."""
    english = Translator("en")
    if block["status"] == "certificate":
        return english("certificate")
    why = " ".join(english(f"why-{reason}", **(block.get("shard") or {})) for reason in block["reasons"])
    return f"{english('not-certificate', what=english.label('run-', block['profile']))}: {why}"
