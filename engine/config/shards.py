"""``--shard K/N``: the K-th of N parts of a run, so a CI matrix runs one run on N machines.

The parts are cut from the run's whole plan (every suite's tasks, as ``engine.config.plan`` makes them
for the same options), so each test keeps its id, seed and cases: the N shards together judge
exactly what one machine would. A test's expected cost depends on its suite, model form and the
profile, not on its position, so the parts are balanced by cost (the longest-first greedy rule:
each test, dearest first, goes to the part with the least cost so far), not by test count."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import spec
from engine.asking.loader import UsageError
from engine.config.plan import SUITES, Task, plan
from engine.contract.forms import QUOTA_FORMS
from generators.profiles import CASES
from generators.quotas import FORM_QUOTA, REJECTION_QUOTA, census_quota
from generators.strategies import census_split

_FORMAT = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
# Seconds per case and per test, read from the per-test times of onnxruntime's standard run (seed 7,
# all versions and forms, two test processes): packs in the symbolic form, a compile per case in
# the quota forms (whose quota hardly grows with the profile), two asks of every census input,
# one-node models for rejection cases. Versions with select_last_index (12, 13) search twice the
# attributes. A census test asks NaN at its share of the volume and a quota per other topic.
_PER_CASE = {"property": 0.012, "quota": 0.011, "census": 0.012, "rejection": 0.005}
_PER_TEST = {"property": 0.2, "quota": 0.2, "census": 0.5, "rejection": 0.1, "fixed": 0.3}
_VERSION = {1: 0.55, 11: 0.55, 12: 1.2, 13: 1.7}  # of the property suite
_FLOOR = 20  # the special-value floor's cases in every per-type test


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse(text: str | None) -> Shard | None:
    """``"3/8"`` -> Shard(3, 8); None for no value; UsageError names a bad one."""
    if text in (None, ""):
        return None
    found = _FORMAT.fullmatch(text)
    if not found:
        raise UsageError(f"--shard {text!r} is not K/N; use e.g. --shard 1/4 (the first of four parts)")
    index, count = int(found[1]), int(found[2])
    if count < 1 or not 1 <= index <= count:
        raise UsageError(f"--shard {text!r}: K must be between 1 and N (N at least 1); "
                         f"use e.g. --shard 1/{max(count, 1)}")
    return Shard(index, count)


def test_key(task: Task) -> str:
    """A test's name across shards and runs: its suite and task id."""
    return f"{task.suite}:{task.id}"


def cost(task: Task, profile: str) -> float:
    """The expected cost of one test, in seconds of onnxruntime's time on a loaded 2-core machine."""
    if task.suite == "fixed":
        return _PER_TEST["fixed"]
    if task.suite == "rejection":
        return _PER_TEST["rejection"] + _PER_CASE["rejection"] * REJECTION_QUOTA[profile]
    if task.suite == "property" and task.form in QUOTA_FORMS:
        return _PER_TEST["quota"] + _PER_CASE["quota"] * (FORM_QUOTA[profile] + _FLOOR)
    if task.suite == "census":  # NaN (and its floor) at its share of the volume, a quota per other topic
        drawn, quotas = census_split(spec.load(task.version), task.type_name)
        nan = (CASES[profile] + _FLOOR) * len(drawn) / (len(drawn) + len(quotas))
        return _PER_TEST["census"] + _PER_CASE["census"] * (nan + census_quota(profile, quotas))
    return (_PER_TEST["property"] + _PER_CASE["property"] * (CASES[profile] + _FLOOR)) * _VERSION.get(task.version, 1.0)


def whole_plan(settings) -> list[Task]:
    """Every test of the run the settings make on one machine, in plan order."""
    return [task for suite in SUITES for task in plan(settings, suite)]


def parts(tasks: list[Task], count: int, profile: str) -> list[list[Task]]:
    """``tasks`` cut into ``count`` parts of near-equal expected cost; the same for every caller."""
    loads = [0.0] * count
    cut: list[list[Task]] = [[] for _ in range(count)]
    for task in sorted(tasks, key=lambda t: (-cost(t, profile), test_key(t))):
        lightest = min(range(count), key=lambda i: (loads[i], i))
        loads[lightest] += cost(task, profile)
        cut[lightest].append(task)
    return cut


def plan_digest(tasks: list[Task]) -> str:
    """A digest of the whole plan's test names: shards of one run share it."""
    return hashlib.sha256("\n".join(sorted(map(test_key, tasks))).encode()).hexdigest()


def record(settings, shard: Shard) -> dict:
    """What a shard's run records of itself (RunInfo.shard): which part of which plan, and its tests."""
    tasks = whole_plan(settings)
    mine = parts(tasks, shard.count, settings.profile)[shard.index - 1]
    return {"index": shard.index, "count": shard.count, "plan_sha256": plan_digest(tasks),
            "plan_tests": len(tasks), "tests": sorted(map(test_key, mine))}


def planned(settings) -> list[str]:
    """The keys of the tests a run with these settings plans (its part's, with a shard), sorted:
    what its record of its plan must hold (reports.verify). Reads the settings' versions,
    type_names, forms, profile and shard only."""
    if settings.shard is None:
        return sorted(map(test_key, whole_plan(settings)))
    return record(settings, settings.shard)["tests"]


def select(settings, suite: str) -> list[Task]:
    """The tasks of ``suite`` this process runs: all of them, or those of its shard."""
    tasks = plan(settings, suite)
    if settings.shard is None:
        return tasks
    mine = set(record(settings, settings.shard)["tests"])
    return [task for task in tasks if test_key(task) in mine]
