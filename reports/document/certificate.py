"""The certificate block of a report: what ran, from which suite and spec, under which claims,
on which instruction set (the CPU's extensions, and the cap the runtime ran under), and a digest
over every judged case, so that a customer can check the report (``nox -s verify``)
instead of taking it on trust.

Only a complete certify run from a committed, unmodified checkout, with the implementation in a
sandbox, is a certificate; every other run carries the same block and says plainly why it is not
one."""

from __future__ import annotations

from typing import Any

from engine import runtimes
from results import RawRun
from results.digest import results_digest
from results.verdict import is_judged

from .parts import Certificate

CERTIFY = "certify"
# Why a run is not a certificate, in the order a reader should hear it (message keys "why-*").
REASONS = ("shard", "profile", "incomplete", "no-commit", "modified-tree", "not-sandboxed", "no-digests")
# Where a run recorded no sandbox (reports written before the sandbox existed).
UNRECORDED = {"mechanism": None, "denies": [], "reason": "the run recorded no sandbox"}


def device(environment: dict[str, Any], impl: str) -> str | None:
    """Where the implementation ran, as far as the run knows: a device the plug-in reported,
    else the option of the built-in runtime the --impl value names (its default unless named)."""
    for key in ("device", "provider"):
        if environment.get(key):
            return str(environment[key])
    found = runtimes.find(impl)
    if found is None or found[0].option in (None, "module"):
        return None
    return found[1] or found[0].default


def _reasons(raw: RawRun) -> list[str]:
    environment = raw.environment
    found = {
        "shard": raw.info.shard is not None,
        "profile": raw.info.profile != CERTIFY,
        "incomplete": not raw.info.complete,
        "no-commit": not environment.get("git_commit"),
        "modified-tree": bool(environment.get("git_commit")) and environment.get("git_dirty") is not False,
        "not-sandboxed": not _sandbox(environment)["mechanism"],
        "no-digests": any(not (r.input_digest and r.answer_digest) for r in raw.results),
    }
    return [reason for reason in REASONS if found[reason]]


def _sandbox(environment: dict[str, Any]) -> dict[str, Any]:
    """Where the implementation ran (engine.asking.sandbox.Sandbox.record), as the run recorded it."""
    recorded = environment.get("sandbox")
    return recorded if isinstance(recorded, dict) and "mechanism" in recorded else UNRECORDED


def _cpu_isa(environment: dict[str, Any]) -> list[str] | None:
    """The CPU's extensions as the run recorded them (results.cpu); None where it recorded none."""
    recorded = environment.get("cpu_isa")
    return [str(name) for name in recorded] if isinstance(recorded, list) else None


def _isa_cap(environment: dict[str, Any]) -> dict[str, str] | None:
    """The cap on the runtime's instruction set the run recorded (engine.config.isa.recorded), or None."""
    recorded = environment.get("isa_cap")
    if not isinstance(recorded, dict):
        return None
    return {key: str(recorded.get(key)) for key in ("variable", "value", "by")}


def certificate(raw: RawRun) -> Certificate:
    """The certificate block of a run (see report.schema.json, ``certificate``)."""
    environment, info = raw.environment, raw.info
    reasons = _reasons(raw)
    return {
        "status": "not-a-certificate" if reasons else "certificate",
        "reasons": reasons,
        "implementation": str(info.impl),
        "implementation_version": environment.get("version") or environment.get("package_version"),
        "device": device(environment, str(info.impl)),
        "forms": None if info.forms is None else [str(f) for f in info.forms],
        "packing": str(info.packing),
        "compile_cache": None if info.compile_cache is None else str(info.compile_cache),
        "suite_commit": environment.get("git_commit"),
        "tree_clean": None if environment.get("git_dirty") is None else not environment["git_dirty"],
        "spec_sha256": environment.get("spec_sha256"),
        "profile": str(info.profile), "seed": info.seed,
        "versions": sorted(int(v) for v in info.versions),
        "types": None if info.type_names is None else [str(t) for t in info.type_names],
        "isolation": str(info.isolation), "timeout_s": float(info.timeout_s),
        "cpu_isa": _cpu_isa(environment), "isa_cap": _isa_cap(environment),
        "sandbox": _sandbox(environment),
        "cases": sum(map(is_judged, raw.results)),
        "census_inputs": sum(not is_judged(r) for r in raw.results),
        "results_digest": results_digest(raw.results),
        "shard": None if info.shard is None else {key: int(info.shard[key]) for key in ("index", "count")},
        "merged": None if info.merged is None else {key: [int(i) for i in info.merged[key]]
                                                    for key in ("merged", "missing")},
        "baseline": None if info.baseline is None else _baseline(info.baseline),
    }


def _baseline(compared: dict[str, Any]) -> dict[str, Any]:
    """The comparison with a baseline the run recorded (reports.folders.baseline.compare); one
    recorded before flakes and root causes were has neither."""
    return {"source": str(compared["source"]), "failures": int(compared["failures"]),
            **{key: [str(line) for line in compared[key]] for key in ("new", "fixed", "flaky") if key in compared},
            **({"causes": [{"status": str(c["status"]), "text": str(c["text"]), "failures": int(c["failures"]),
                            "anchor": None if c["anchor"] is None else str(c["anchor"])}
                           for c in compared["causes"]]} if "causes" in compared else {})}

