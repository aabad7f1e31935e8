"""The verdict rule, stated once: a version is conformant when every case judged on its semantic
and rejection clauses passed, and at least one case of each of those kinds ran. Census cases
(undefined behaviour) never count. Everything that asks "which cases count", "did this version
pass" or "why" asks here."""

from __future__ import annotations

from collections.abc import Iterable

from .records import CaseResult

CONFORMANT, NON_CONFORMANT = "conformant", "non-conformant"
JUDGED_KINDS = ("semantic", "rejection")


def is_judged(result: CaseResult) -> bool:
    """Whether the case counts toward the verdict."""
    return result.kind in JUDGED_KINDS


def is_failure(result: CaseResult) -> bool:
    """A judged case that did not pass."""
    return is_judged(result) and result.outcome != "pass"


def judged(results: Iterable[CaseResult], version: int) -> list[CaseResult]:
    """The cases of ``version`` that count toward its verdict, in run order."""
    return [r for r in results if r.version == version and is_judged(r)]


def reason(results: Iterable[CaseResult], version: int) -> str:
    """Why ``version`` got its verdict: reason-failures, reason-no-semantic, reason-no-rejection
    or reason-all-passed (message keys the reports translate)."""
    counted = judged(results, version)
    if any(r.outcome != "pass" for r in counted):
        return "reason-failures"
    kinds = {r.kind for r in counted}
    if "semantic" not in kinds:
        return "reason-no-semantic"
    if "rejection" not in kinds:
        return "reason-no-rejection"
    return "reason-all-passed"


def verdict(results: Iterable[CaseResult], version: int) -> str:
    return CONFORMANT if reason(results, version) == "reason-all-passed" else NON_CONFORMANT


def verdicts(results: Iterable[CaseResult], versions: Iterable[int]) -> dict[int, str]:
    results = list(results)
    return {v: verdict(results, v) for v in versions}


def failing_clauses(results: Iterable[CaseResult], version: int) -> list[str]:
    """The deciding clauses of the version's failures, in clause-number order."""
    found = {r.clause or "" for r in judged(results, version) if r.outcome != "pass"}
    return sorted(found, key=lambda c: (int(c[1:]) if c[1:].isdigit() else 0, c))
