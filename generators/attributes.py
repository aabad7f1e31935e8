"""Attributes, decoded from the spec's declarations: omitted, set to the default, or set to
another accepted value. An omitted attribute and one set to its default are different inputs."""

from __future__ import annotations

from functools import lru_cache

from spec import Attribute, Range, VersionSpec, load, versions

from .choices import Choices, weighted

AXIS_FORMS = weighted(("omitted", 1), ("positive", 2), ("negative", 2))
VALUE_FORMS = weighted(("omitted", 3), ("default", 3), ("other", 4))


@lru_cache(maxsize=256)
def _bounds(accepted: Range, rank: int) -> tuple[int, int]:
    return accepted.bounds(rank)  # cached: the bound expressions are parsed on every call


_LISTED: dict[int, tuple[VersionSpec, tuple[Attribute, ...]]] = {}


def _listed(vspec: VersionSpec) -> tuple[Attribute, ...]:
    """The attributes with listed values, by name (computed once per version: asked every case)."""
    hit = _LISTED.get(id(vspec))
    if hit is None or hit[0] is not vspec:
        chosen = tuple(vspec.attributes[name] for name in sorted(vspec.attributes)
                       if vspec.attributes[name].values is not None)
        hit = _LISTED[id(vspec)] = (vspec, chosen)
    return hit[1]


def reduced_axis(vspec: VersionSpec, rank: int, choices: Choices) -> tuple[int, int | None, str]:
    """Two bytes: (the dimension reduced, the axis attribute or None when omitted, the tag value).
    Negative values are drawn only where the spec's range admits them at this rank."""
    attribute = vspec.attributes["axis"]
    low, high = _bounds(attribute.range, rank)
    form, index = choices.pick(AXIS_FORMS), choices.byte() * rank >> 8
    if form == "omitted":
        return attribute.default % rank, None, "omitted"
    if form == "negative" and low <= index - rank:
        return index, index - rank, "negative"
    index = min(index, high)
    return index, index, "negative" if index < 0 else "positive"


def listed_value(attribute: Attribute, choices: Choices) -> int | None:
    """One byte pair: None (omitted), the default, or another listed value."""
    form, which = choices.pick(VALUE_FORMS), choices.byte()
    if form == "omitted":
        return None
    others = [v for v in attribute.values if v != attribute.default]
    if form == "default" or not others:
        return attribute.default
    return others[which * len(others) >> 8]


def listed_attributes(vspec: VersionSpec, choices: Choices) -> dict[str, int]:
    """Every attribute with listed values (keepdims, select_last_index where declared), two
    bytes each in a fixed order, so adding one never shifts another's bytes."""
    chosen = {}
    for attribute in _listed(vspec):
        value = listed_value(attribute, choices.region(2))
        if value is not None:
            chosen[attribute.name] = value
    return chosen


def attribute_tags(vspec: VersionSpec, attributes: dict[str, int]) -> list[str]:
    """``keepdims:omitted|0|1`` style tags for every listed-value attribute the version declares."""
    return [f"{a.name}:{attributes.get(a.name, 'omitted')}" for a in _listed(vspec)]


def declared_anywhere(name: str) -> Attribute:
    """The declaration of ``name`` in the newest version that has it (for undeclared-attribute
    rejection inputs, whose value must look plausible)."""
    for number in reversed(versions()):
        if name in load(number).attributes:
            return load(number).attributes[name]
    raise KeyError(f"no ArgMin version declares the attribute {name!r}")
