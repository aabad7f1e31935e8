"""The element budget: the cases of one batch share a budget, so a test generates at
most what its profile states, whatever the bytes Hypothesis draws; every shape family keeps to
the budget it is given; the profile's description states the bound.

That the largest shapes still occur under the budget is tested with the standard profile's
shapes in test_shape_grid.py."""

from __future__ import annotations

import hashlib
import math
from random import Random

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

import spec
from generators import BATCH, Batch, profiles, rejection_cases, semantic_cases, undefined_cases
from generators.build import REGIONS, SIZE, layout
from generators.shapes import (
    ELEMENT_BUDGET,
    FAMILIES,
    RESERVE,
    batch_budget,
    in_budget,
)
from generators.strategies import LARGEST_INVALID

VERSIONS = {n: spec.load(n) for n in spec.versions()}
PIECE = SIZE - REGIONS[-1]  # the bytes of one semantic case


def _strategies(version: int, type_name: str) -> dict[str, tuple[object, int]]:
    """Each suite's strategy for one (version, type), with the most elements one of its cases holds."""
    vspec = VERSIONS[version]
    return {"property": (semantic_cases(vspec, type_name, batch=BATCH), ELEMENT_BUDGET),
            "rejection": (rejection_cases(vspec, batch=BATCH), LARGEST_INVALID),
            "census": (undefined_cases(vspec, type_name, batch=BATCH), LARGEST_INVALID)}


def _one_test(strategy, profile: str, seed: int) -> list[Batch]:
    """The batches one test of ``profile`` draws (one search, as engine.judging.run draws them)."""
    drawn: list[Batch] = []

    @settings(max_examples=profiles.examples(profile), database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(cases: Batch) -> None:
        drawn.append(cases)

    hypothesis_seed(seed)(collect)()
    return drawn


@pytest.mark.parametrize(("profile", "version", "type_name"),
                         [("quick", 13, "bfloat16"), ("quick", 11, "int8"), ("standard", 1, "float")])
def test_a_test_generates_no_more_elements_than_its_profile_states(profile: str, version: int,
                                                                  type_name: str) -> None:
    for suite, (strategy, largest) in _strategies(version, type_name).items():
        seed = int.from_bytes(hashlib.sha256(f"{profile}:{suite}:{version}".encode()).digest()[:8])
        batches = _one_test(strategy, profile, seed)
        assert len(batches) <= profiles.examples(profile)
        sizes = [[case.data.size for case in cases] for cases in batches]
        total = sum(map(sum, sizes))
        assert total <= profiles.elements(profile), f"{suite}: {total:,} elements in one {profile} test"
        assert max(map(sum, sizes)) <= batch_budget(BATCH, largest), f"{suite}: a batch over its budget"
        assert max(map(max, sizes)) <= largest, f"{suite}: a case over {largest:,} elements"


def _largest_pieces(rng: Random) -> list[bytes]:
    """A batch of pieces that each ask for a big shape: mostly 0xFF bytes, the largest choices."""
    return [bytes(255 if rng.random() < 0.8 else rng.randrange(256) for _ in range(PIECE)) for _ in range(BATCH)]


def _batch(type_name: str, pieces: list[bytes]) -> list[tuple[tuple[int, ...], int]]:
    """The shapes of a batch of ArgMin-13 pieces decoded as the suites decode them, each with its budget."""
    vspec = VERSIONS[13]

    def make(piece: bytes, budget: int) -> tuple[tuple[int, ...], int]:
        return layout(vspec, vspec.type(type_name), piece, zero_dims=True, budget=budget).shape, budget

    return in_budget(pieces, make, lambda made: math.prod(made[0]))


def test_a_batch_keeps_to_its_budget_whatever_its_bytes() -> None:
    """Batches of random and of the largest bytes: each case within what the batch left for it
    (the first one ELEMENT_BUDGET, every later one at least RESERVE) and the batch within its
    budget. The largest bytes ask every case for its biggest shape: without the shared budget a
    batch of them would hold several times it."""
    rng = Random(23)
    for round_ in range(150):
        pieces = _largest_pieces(rng) if round_ % 2 else [rng.randbytes(PIECE) for _ in range(BATCH)]
        made = _batch(rng.choice(VERSIONS[13].type_names), pieces)
        sizes, budgets = [math.prod(shape) for shape, _ in made], [budget for _, budget in made]
        assert all(size <= budget for size, budget in zip(sizes, budgets, strict=True)), made
        assert min(budgets) >= RESERVE and budgets[0] == ELEMENT_BUDGET
        assert sum(sizes) <= batch_budget(BATCH), made


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_shape_family_keeps_to_the_budget_it_is_given(family: str) -> None:
    """Each family alone, with budgets from RESERVE to ELEMENT_BUDGET and random or largest bytes."""
    rng, vspec = Random(family), VERSIONS[13]
    only = (family,)
    for round_ in range(300):
        budget = rng.choice((RESERVE, RESERVE + 1, 3 * RESERVE, LARGEST_INVALID, ELEMENT_BUDGET // 3, ELEMENT_BUDGET))
        piece = _largest_pieces(rng)[0] if round_ % 2 else rng.randbytes(PIECE)
        plan = layout(vspec, vspec.type("float"), piece, zero_dims=True, shapes=only, budget=budget)
        assert math.prod(plan.shape) <= budget, (family, budget, plan.shape)


def test_each_profile_states_its_bound() -> None:
    for name in profiles.PROFILES:
        bound = profiles.elements(name)
        assert bound == profiles.examples(name) * batch_budget(BATCH)
        assert f"at most {bound:,} input elements" in profiles.describe(name)["en"]
        assert f"{bound:,}" in profiles.describe(name)["zh-TW"]
    assert profiles.elements("quick") < profiles.elements("standard") < profiles.elements("certify")


def test_a_packed_batch_shares_budgets_as_batches_of_eight() -> None:
    """Packed forms draw 32 cases per example: each run of BATCH of them keeps a budget of its own,
    as four batches would (one budget for 32 would let the first cases starve the later ones)."""
    batches = _one_test(semantic_cases(VERSIONS[13], "float", batch=4 * BATCH), "standard", 5)
    assert all(len(batch) == 4 * BATCH for batch in batches)
    chunks = [batch[start:start + BATCH] for batch in batches for start in range(0, len(batch), BATCH)]
    assert all(sum(case.data.size for case in chunk) <= batch_budget(BATCH) for chunk in chunks)
