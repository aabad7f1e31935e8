"""The special-value floor: a few small pinned inputs per (version, type) that every profile
checks before its Hypothesis search, whatever the seed.

A random search over shapes and value families reaches each special value often, but not on
every seed: within the quick budget, a bug confined to one family of one type (bfloat16
subnormals flushed to zero, float16's -0 ordered below +0) slipped through on a third of the
seeds. The floor makes those families certain: each is a handful of rank-1 inputs whose minimum
is not at index 0 (so a kernel that loses the value answers 0 and is caught; all-maximum slices
aside, which catch sentinels instead), with the attributes omitted and, where the version
declares select_last_index, also set to 1 for the ties.

Families (the ``floor:*`` tag): ``signed-zero`` (+0 and -0 tied after a larger value, both
orders), ``subnormal`` (the smallest and the largest subnormals beside their neighbours, and
-smallest beside zero), ``extremes`` (+-inf beside the finite extremes, the type's maximum and
minimum, each next value down from the top, all-maximum slices), ``precision`` (neighbours a
narrower or same-width type cannot tell apart: 2**53 + 1 beside 2**53 for 64-bit integers,
1 + eps beside 1 for floats, bfloat16 beyond float16's range), and for the census ``nan``."""

from __future__ import annotations

from functools import cache

import numpy as np

from spec import TensorType, VersionSpec

from .build import case_tags
from .case import Case
from .values import finfo, pools, step_down, step_up

TAG = "floor"


def _float_families(tensor_type: TensorType) -> dict[str, list[list[float]]]:
    info = finfo(tensor_type.dtype)
    big, tiny, sub = float(info.max), float(info.tiny), float(info.smallest_subnormal)
    largest_sub = tiny - sub
    return {
        "signed-zero": [[1.0, 0.0, -0.0], [1.0, -0.0, 0.0]],
        "subnormal": [[2 * sub, sub], [-sub, -2 * sub], [largest_sub, largest_sub - sub], [0.0, -sub]],
        "extremes": [[np.inf, big], [np.inf, np.inf, big], [-big, -np.inf], [big, -big], [np.inf, np.inf]],
        "precision": [[step_up(1.0, tensor_type.dtype), 1.0]],
    }


def _int_families(tensor_type: TensorType) -> dict[str, list[list[int]]]:
    info = np.iinfo(tensor_type.dtype)
    top, low = int(info.max), int(info.min)
    return {"extremes": [[top, low], [low + 1, low], [top, top]]}


def _top_pairs(tensor_type: TensorType) -> list[list[object]]:
    """Each value of the type's top end beside the next one down ([inf, max], [max, max - 1],
    values just beyond a narrower float's maximum): a running minimum that starts at one of
    them cannot see past it."""
    top = pools(tensor_type).top
    return [[top[i], top[i + 1]] for i in range(len(top) - 1)]


def _detour_pairs(tensor_type: TensorType) -> list[list[object]]:
    """The smallest and the largest positive value a cast detour destroys (see values.Pools),
    each beside the value just below it: 2**53 + 1 and 2**53 for 64-bit integers."""
    detour = pools(tensor_type).detour
    positive = [] if detour is None else sorted((v for v in detour if v > 0), key=float)
    return [[v, step_down(v, tensor_type)] for v in positive[:1] + positive[-1:]]


@cache
def _inputs(tensor_type: TensorType) -> tuple[tuple[str, np.ndarray], ...]:
    """(family, rank-1 input) pairs of a type, without repeats (compared bitwise), read-only."""
    families = _float_families(tensor_type) if tensor_type.is_float else _int_families(tensor_type)
    families["extremes"] += _top_pairs(tensor_type)
    families.setdefault("precision", []).extend(_detour_pairs(tensor_type))
    seen, chosen = set(), []
    for family, rows in families.items():
        for row in rows:
            with np.errstate(over="ignore"):
                data = np.array([np.asarray(v).astype(tensor_type.dtype) for v in row], tensor_type.dtype)
            if data.tobytes() not in seen:
                seen.add(data.tobytes())
                data.setflags(write=False)
                chosen.append((family, data))
    return tuple(chosen)


def _case(vspec: VersionSpec, tensor_type: TensorType, family: str, data: np.ndarray, attributes: dict[str, int],
          intent: str = "semantic", extra: tuple[str, ...] = ()) -> Case:
    tags = case_tags(vspec, tensor_type, data, 0, "omitted", attributes, TAG, "plain", data)
    if intent == "undefined":  # a NaN case has no tie count (see strategies._nan)
        tags = [t for t in tags if not t.startswith("ties:")]
    return Case(vspec.version, data, attributes, (*tags, f"{TAG}:{family}", *extra), intent)


def semantic_floor(vspec: VersionSpec, type_name: str) -> tuple[Case, ...]:
    """The pinned valid inputs of one (version, type) test; ties are asked both ways where the
    version's select_last_index decides them."""
    tensor_type = vspec.type(type_name)
    settings = [{}] + ([{"select_last_index": 1}] if "select_last_index" in vspec.attributes else [])
    return tuple(_case(vspec, tensor_type, family, data, attributes)
                 for family, data in _inputs(tensor_type)
                 for attributes in (settings if family == "signed-zero" else settings[:1]))


NAN_ROWS = (("first", (np.nan, 1.0)), ("middle", (1.0, np.nan, 0.0)), ("last", (1.0, np.nan)),
            ("all", (np.nan, np.nan)))


def census_floor(vspec: VersionSpec, type_name: str) -> tuple[Case, ...]:
    """The pinned census inputs of one (version, type) test: NaN first, in the middle, last and
    everywhere, for float types where the version leaves NaN undefined."""
    tensor_type = vspec.type(type_name)
    topic = next((c.id for c in vspec.of_kind("undefined") if c.when and "contains_nan" in c.when), None)
    if topic is None or not tensor_type.is_float:
        return ()
    return tuple(_case(vspec, tensor_type, "nan", np.array(row, np.float64).astype(tensor_type.dtype), {},
                       "undefined", (f"topic:{topic}", f"nan-position:{place}")) for place, row in NAN_ROWS)
