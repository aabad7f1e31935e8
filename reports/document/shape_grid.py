"""The tile grid of a run: how many semantic cases were judged in each (L, I) and (L, S) pair of
extent buckets, and which pairs that fit the element budget no case reached.

L is the reduced length, I the inner extent (the product of the dimensions after the axis: the
stride kernels tile against), S the slice count (the output's size). The generators tag every
valid case with the three buckets (``L:``, ``I:``, ``S:``; generators/shapes.py), so this module
only counts tags."""

from __future__ import annotations

from collections import Counter

from generators.shapes import BUCKET_NAMES, REACHABLE
from results import RawRun

from .parts import ShapeGrid

PAIRS = (("L", "I"), ("L", "S"))
_KEYS = frozenset(key for pair in PAIRS for key in pair)


def _buckets(tags: tuple[str, ...]) -> dict[str, str]:
    found = {}
    for tag in tags:
        key, _, value = str(tag).partition(":")
        if key in _KEYS:
            found[key] = value
    return found


def shape_grid(raw: RawRun) -> ShapeGrid:
    """``{"buckets": names, "grids": [{"rows", "columns", "cases", "empty"}]}``: ``cases[i][j]`` is
    the count for row bucket i and column bucket j, null where the pair does not fit the budget;
    ``empty`` lists the [row, column] pairs that fit it and were not reached."""
    tallies = {pair: Counter() for pair in PAIRS}
    for result in raw.results:
        if result.kind != "semantic":
            continue
        found = _buckets(result.tags)
        for pair in PAIRS:
            if all(key in found for key in pair):
                tallies[pair][found[pair[0]], found[pair[1]]] += 1
    grids = []
    for pair, tally in tallies.items():
        cases = [[tally[row, column] if (i, j) in REACHABLE else None for j, column in enumerate(BUCKET_NAMES)]
                 for i, row in enumerate(BUCKET_NAMES)]
        empty = [[BUCKET_NAMES[i], BUCKET_NAMES[j]] for i, j in REACHABLE if cases[i][j] == 0]
        grids.append({"rows": pair[0], "columns": pair[1], "cases": cases, "empty": empty})
    return {"buckets": list(BUCKET_NAMES), "grids": grids}
