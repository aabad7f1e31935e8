"""Stratified quotas: where more cases find no more bugs, a test asks a fixed number of cases
chosen to cover named strata, instead of a share of the profile's volume.

Three parts of a run are such places, each costly because every case there is a model of its own
for a runtime that compiles:

- the ``static`` and ``initializer`` model forms, whose point is to reach a runtime's other code
  paths (static shape inference, constant folding), not volume: every rank, an empty input,
  long and very long axes, the shape families (wide inner extents, tiles, many slices, ...),
  negative and omitted axes, each attribute value, far-apart ties;
- rejection cases, which decide strictness (refusing an invalid model or computing it) and
  crashes, never the headline otherwise: every type outside T, both sides of the axis range,
  each source of an undeclared attribute's name, ranks, and types of T;
- the census's topics other than NaN (empty inputs, attribute values outside their lists,
  ArgMin-1's negative axes and rank 0), which decide a policy per topic and type: many runtimes
  refuse these inputs one by one, and what they do depends on the rank, the axis and the value,
  not on the values of the input: every topic, ranks, axes, each value outside a list.

The cases are the ones the strategies build (the same decoders, batches and element budgets as
Hypothesis' draws), from bytes of a generator seeded by the run's seed and the test, so a run
with the same seed asks the same cases (certify, derandomized, keys on the test alone). Batches
are drawn until every required stratum has a case or ``CANDIDATE_BATCHES`` are drawn; then a
greedy cover picks cases for every stratum the candidates reached, and the quota is filled with
the other candidates in the order they were drawn, within the element budget of a batch of the
quota's size (``shapes.batch_budget``)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from spec import VersionSpec, outside_types

from .attributes import UNDECLARED_SOURCES
from .build import empty_inputs_defined
from .case import Case
from .shapes import ELEMENT_BUDGET, MAX_RANK, batch_budget
from .strategies import BATCH, Decoder

# Cases per test of each quota, by profile. The model forms' quota is about the same at every
# profile: what it covers is the same whatever the volume of the symbolic form.
FORM_QUOTA = {"quick": 16, "standard": 24, "certify": 24}
REJECTION_QUOTA = {"quick": 16, "standard": 32, "certify": 64}
# The same as a budget of models, where a run draws within schedules (a runtime that pays per
# compiled node or shape): the strata rejection_required names, in fewer models.
REJECTION_BUDGET = {"quick": 8, "standard": 12, "certify": 24}
CENSUS_QUOTA = {"quick": 8, "standard": 12, "certify": 24}  # per census topic other than NaN
CANDIDATE_BATCHES = 48  # at most this many batches of BATCH candidates per quota

# Tag keys whose every value among the candidates is a stratum.
FORM_KEYS = ("rank:", "shape:", "axis-length:", "zero-size:", "axis:", "keepdims:", "select_last_index:", "ties:")
REJECTION_KEYS = ("type:", "axis:", "undeclared:", "rank:", "reject:")
CENSUS_KEYS = ("topic:", "rank:", "axis:", "axis-length:", "zero-size:", "keepdims:", "select_last_index:")


def form_required(vspec: VersionSpec) -> tuple[str, ...]:
    """The strata a model form's quota keeps drawing for (the rarer shapes included), where the
    version makes them possible."""
    required = [f"rank:{rank}" for rank in range(1, MAX_RANK + 1)]
    required += ["axis-length:1", "axis-length:long", "axis-length:very-long", "shape:wide-inner", "shape:tiles",
                 "shape:many-slices", "axis:negative", "axis:omitted", "keepdims:0", "ties:far-apart"]
    if empty_inputs_defined(vspec):
        required.append("zero-size:yes")
    if "select_last_index" in vspec.attributes:
        required.append("select_last_index:1")
    return tuple(required)


def rejection_required(vspec: VersionSpec, clause_id: str) -> tuple[str, ...]:
    """The strata a rejection clause's quota keeps drawing for: every type outside T, both sides
    of the axis range, every source of an undeclared attribute's name (as the clause applies)."""
    (condition, _), = vspec.clause(clause_id).when.items()
    if condition == "dtype_outside":
        return tuple(f"type:{t.name}" for t in outside_types(vspec))
    if condition == "axis_outside_range":
        return ("axis:above-range", "axis:below-range")
    if condition == "undeclared_attribute":
        return tuple(f"undeclared:{source}" for source in dict.fromkeys(UNDECLARED_SOURCES))
    return ()


def rejection_quota(profile: str, scheduled: bool) -> int:
    """Invalid models per rejection clause and form: REJECTION_BUDGET where the run draws within
    schedules, else REJECTION_QUOTA."""
    return (REJECTION_BUDGET if scheduled else REJECTION_QUOTA)[profile]


def census_quota(profile: str, topics: Sequence[str]) -> int:
    """The cases of a census test's quota: CENSUS_QUOTA for each of its quota ``topics``."""
    return CENSUS_QUOTA[profile] * len(topics)


def census_required(vspec: VersionSpec, topics: Sequence[str]) -> tuple[str, ...]:
    """The strata a census quota keeps drawing for: each of its topics, and at ArgMin-1 a
    negative axis in [-r, -1] (counted from the end, it has a reading) besides one below -r."""
    required = [f"topic:{topic}" for topic in topics]
    if any("axis_below_range" in vspec.clause(topic).when for topic in topics):
        required.append("axis:from-end")
    return tuple(required)


def stratified(decoder: Decoder, label: str, quota: int, keys: Sequence[str], required: Iterable[str] = (),
               largest: int = ELEMENT_BUDGET) -> tuple[Case, ...]:
    """``quota`` cases of ``decoder``'s batches covering the strata (tag values under ``keys``)
    its candidates reach; ``label`` seeds the bytes (a run's seed and the test); ``required``:
    strata worth drawing more candidates for; ``largest``: the most elements one case holds."""
    candidates = _candidates(decoder, random.Random(label), set(required), 2 * quota)
    strata = [{tag for tag in case.tags if tag.startswith(tuple(keys))} for case in candidates]
    budget = batch_budget(quota, largest)
    chosen: list[int] = []
    uncovered = set().union(*strata)
    while uncovered and len(chosen) < quota:
        best = max((i for i in range(len(candidates)) if i not in chosen), default=None,
                   key=lambda i: (len(strata[i] & uncovered) if candidates[i].data.size <= budget else -1, -i))
        if best is None or not strata[best] & uncovered or candidates[best].data.size > budget:
            break
        chosen.append(best)
        uncovered -= strata[best]
        budget -= candidates[best].data.size
    for i, case in enumerate(candidates):
        if len(chosen) >= quota:
            break
        if i not in chosen and case.data.size <= budget:
            chosen.append(i)
            budget -= case.data.size
    return tuple(candidates[i] for i in sorted(chosen))


def _candidates(decoder: Decoder, rng: random.Random, required: set[str], enough: int) -> list[Case]:
    """Distinct cases from batches of ``decoder``: at least ``enough``, and until ``required`` is
    covered (or the batch cap)."""
    seen: dict[str, Case] = {}
    for _ in range(CANDIDATE_BATCHES):
        for case in decoder.decode(rng.randbytes(decoder.size)):
            seen.setdefault(case.key(), case)
            required.difference_update(case.tags)
        if not required and len(seen) >= enough:
            break
    return list(seen.values())


def batches(cases: Sequence[Case], size: int = BATCH) -> list[tuple[Case, ...]]:
    """``cases`` cut into batches of ``size``, in order."""
    return [tuple(cases[start:start + size]) for start in range(0, len(cases), size)]
