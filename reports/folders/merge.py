"""``python -m reports merge SHARD_DIR... --out DIR``: one run from the records of its shards.

Nothing is judged again: the shards' case and census records are put together and the report,
certificate and raw results are made from them as for a run on one machine. Shards that could
not be parts of one run (another suite commit, spec, seed, profile, claim, option,
implementation version or instruction set) are refused, as is a shard given twice; a missing shard leaves the
merged run incomplete, so it is never a certificate."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import spec
from results import CensusRecord, RawRun, RunInfo, Unreadable, load
from results.stream import USAGE_COUNTS

# What every shard of one run has in common, and how to say it: (label, reader of a run).
_SAME: tuple[tuple[str, Callable[[RawRun], Any]], ...] = (
    ("suite commit", lambda run: run.environment.get("git_commit")),
    ("spec digest", lambda run: run.environment.get("spec_sha256")),
    ("implementation", lambda run: run.info.impl),
    ("implementation version", lambda run: run.environment.get("version") or run.environment.get("package_version")),
    ("profile", lambda run: run.info.profile),
    ("seed", lambda run: run.info.seed),
    ("claim", lambda run: (run.info.claim, run.info.type_names)),
    ("versions", lambda run: run.info.versions),
    ("options (forms, packing, isolation, timeout, memory limit)",
     lambda run: (run.info.forms, run.info.packing, run.info.isolation, run.info.timeout_s,
                  run.info.memory_limit_bytes)),
    ("instruction set (the CPU's extensions and the cap on the runtime's)",
     lambda run: (run.environment.get("cpu_isa"), run.environment.get("isa_cap"))),
    ("shard count", lambda run: run.info.shard["count"]),
    ("plan (the run's tests)", lambda run: run.info.shard["plan_sha256"]),
)
_SUMMED = ("models_compiled", "calls_made", "models_loaded", "model_seconds")


class MergeError(ValueError):
    """Shards that cannot be merged; the message is one line naming the problem and the fix."""


def _read(folder: Path) -> RawRun:
    try:
        run = load(folder)
    except (OSError, Unreadable) as exc:
        raise MergeError(f"{folder}: no readable raw results ({exc}); pass the --report-dir of each shard") from None
    if run.info.shard is None:
        raise MergeError(f"{folder}: a whole run, not a shard; merge takes the report folders of `--shard K/N` runs")
    return run


def _check(runs: list[tuple[Path, RawRun]]) -> None:
    (first_folder, first), *others = runs
    for label, read in _SAME:
        for folder, run in others:
            if read(run) != read(first):
                raise MergeError(f"the shards are not parts of one run: {label} {read(first)!r} in {first_folder} but "
                                 f"{read(run)!r} in {folder}; run every shard with the same suite checkout, options "
                                 f"and implementation")
    seen: dict[int, Path] = {}
    for folder, run in runs:
        index = run.info.shard["index"]
        if index in seen:
            raise MergeError(f"shard {index} of {run.info.shard['count']} given twice ({seen[index]} and {folder}); "
                             f"pass each shard's folder once")
        seen[index] = folder


def _usage(runs: list[RawRun]) -> list[dict[str, Any]] | None:
    """Models and calls by suite and form, summed over the shards."""
    usage: dict[tuple[str, str], dict[str, Any]] = {}
    for run in runs:
        for row in run.info.model_usage or ():
            total = usage.setdefault((row["suite"], row["form"]), {**row, **dict.fromkeys(USAGE_COUNTS, 0)})
            for name in USAGE_COUNTS:
                total[name] += row.get(name, 0)
    return list(usage.values()) if usage else None


def _environment(runs: list[RawRun]) -> dict[str, Any]:
    """The first shard's environment, but the least any shard could claim: a modified checkout or
    an unsandboxed implementation in one shard is the merged run's."""
    environment = dict(runs[0].environment)
    if any(run.environment.get("git_dirty") is not False for run in runs):
        environment["git_dirty"] = next(run.environment.get("git_dirty") for run in runs
                                        if run.environment.get("git_dirty") is not False)
    unsandboxed = [run.environment.get("sandbox") for run in runs
                   if not (run.environment.get("sandbox") or {}).get("mechanism")]
    if unsandboxed:
        environment["sandbox"] = unsandboxed[0]
    return environment


def _incomplete(runs: list[RawRun], missing: list[int], count: int) -> str | None:
    if missing:
        return (f"shard{'s' * (len(missing) > 1)} {', '.join(map(str, missing))} of {count} missing: the merged "
                f"report covers {count - len(missing)} of {count} parts of the run")
    for run in runs:
        if not run.info.complete:
            return f"shard {run.info.shard['index']} of {count} is incomplete ({run.info.incomplete_reason})"
    return None


def _plan_order(records: list[CensusRecord]) -> list[CensusRecord]:
    """Census records in the order one machine records them (one census test per version and type,
    run in plan order): the examples a census entry shows are its first records."""
    order = {v: spec.load(v).type_names for v in {record.version for record in records}}
    return sorted(records, key=lambda r: (r.version, order[r.version].index(r.type_name)
                                          if r.type_name in order[r.version] else len(order[r.version])))


def _info(shards: list[RawRun], present: list[int], missing: list[int], reason: str | None) -> RunInfo:
    """The merged run's settings and tallies: the first shard's settings, started when the first
    shard started, as long as the longest, its counts summed (None where no shard counted) and
    its plan and lost tests those of every shard."""
    sums = {name: (None if all(getattr(run.info, name) is None for run in shards)
                   else sum(getattr(run.info, name) or 0 for run in shards)) for name in _SUMMED}
    planned = None if any(run.info.planned is None for run in shards) else \
        sorted(key for run in shards for key in run.info.planned)
    return replace(shards[0].info, shard=None, merged={"merged": present, "missing": missing},
                   started=min(run.info.started for run in shards),
                   duration_s=max(run.info.duration_s for run in shards), complete=reason is None,
                   incomplete_reason=reason, workers=sum(run.info.workers for run in shards),
                   model_usage=_usage(shards), planned=planned,
                   lost=sorted(key for run in shards for key in run.info.lost or ()), **sums)


def merge(folders: list[Path]) -> RawRun:
    """The run the shards in ``folders`` are parts of; MergeError where they are not parts of one."""
    if not folders:
        raise MergeError("no shard folders given; pass the --report-dir of each `--shard K/N` run")
    runs = sorted(((Path(folder), _read(Path(folder))) for folder in folders),
                  key=lambda pair: pair[1].info.shard["index"])
    _check(runs)
    shards = [run for _, run in runs]
    count = shards[0].info.shard["count"]
    present = [run.info.shard["index"] for run in shards]
    missing = [index for index in range(1, count + 1) if index not in present]
    info = _info(shards, present, missing, _incomplete(shards, missing, count))
    return RawRun(info, _environment(shards), [result for run in shards for result in run.results],
                  _plan_order([record for run in shards for record in run.census]),
                  [end for run in shards for end in run.ends])
