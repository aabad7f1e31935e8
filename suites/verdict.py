"""The verdict rule: a version is conformant when every case judged on its semantic and
rejection clauses passed, and at least one of each kind ran. Census cases never count."""

from __future__ import annotations

from collections.abc import Iterable

from .results import CaseResult

CONFORMANT, NON_CONFORMANT = "conformant", "non-conformant"


def verdict(results: Iterable[CaseResult], version: int) -> str:
    judged = [r for r in results if r.version == version and r.kind in ("semantic", "rejection")]
    kinds_run = {r.kind for r in judged}
    if {"semantic", "rejection"} <= kinds_run and all(r.outcome == "pass" for r in judged):
        return CONFORMANT
    return NON_CONFORMANT


def verdicts(results: Iterable[CaseResult], versions: Iterable[int]) -> dict[int, str]:
    results = list(results)
    return {v: verdict(results, v) for v in versions}
