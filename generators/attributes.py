"""Attributes, decoded from the spec's declarations: omitted, set to the default, or set to
another accepted value. An omitted attribute and one set to its default are different inputs."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache, wraps
from typing import TypeVar

from spec import Attribute, Range, VersionSpec, load, versions

from .choices import Choices, weighted

AXIS_FORMS = weighted(("omitted", 1), ("positive", 2), ("negative", 2))
VALUE_FORMS = weighted(("omitted", 3), ("default", 3), ("other", 4))
T = TypeVar("T")


@lru_cache(maxsize=256)
def _bounds(accepted: Range, rank: int) -> tuple[int, int]:
    return accepted.bounds(rank)  # cached: the bound expressions are parsed on every call


def per_spec(compute: Callable[[VersionSpec], T]) -> Callable[[VersionSpec], T]:
    """``compute(vspec)``, computed once per spec object (asked for every case; spec objects are
    immutable but not hashable, so they are told apart by identity, and kept so ids are not reused)."""
    memo: dict[int, tuple[VersionSpec, T]] = {}

    @wraps(compute)
    def cached(vspec: VersionSpec) -> T:
        hit = memo.get(id(vspec))
        if hit is None or hit[0] is not vspec:
            hit = memo[id(vspec)] = (vspec, compute(vspec))
        return hit[1]

    return cached


@per_spec
def _listed(vspec: VersionSpec) -> tuple[Attribute, ...]:
    """The attributes with listed values, by name."""
    return tuple(vspec.attributes[name] for name in sorted(vspec.attributes)
                 if vspec.attributes[name].values is not None)


def reduced_axis(vspec: VersionSpec, rank: int, choices: Choices,
                 reducible: Sequence[int] | None = None) -> tuple[int, int | None, str]:
    """Two bytes: (the dimension reduced, the axis attribute or None when omitted, the tag value).
    ``reducible``: the dimensions a shape family lets be reduced (default: all); an omitted
    axis is drawn only where the default names one of them. Negative values are drawn only
    where the spec's range admits them at this rank."""
    attribute = vspec.attributes["axis"]
    low, high = _bounds(attribute.range, rank)
    dims = range(rank) if reducible is None else reducible
    form, index = choices.pick(AXIS_FORMS), dims[choices.byte() * len(dims) >> 8]
    if form == "omitted" and attribute.default % rank in dims:
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


# Where an undeclared attribute's name comes from: another version's declarations (ArgMin-1 handed
# select_last_index), a near miss of a declared name (keep_dims, axes, Axis), or any identifier.
UNDECLARED_SOURCES = weighted(("elsewhere", 2), ("near-miss", 2), ("random", 3))
RESERVED = frozenset({"data", "opset"})  # the plug-in contract's own parameter names
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _usable(vspec: VersionSpec, name: str) -> bool:
    return name.isidentifier() and name not in vspec.attributes and name not in RESERVED


@per_spec
def _elsewhere(vspec: VersionSpec) -> list[Attribute]:
    """Attributes another version declares and this one does not, by name."""
    found = {name: a for number in versions() for name, a in load(number).attributes.items()}
    return [found[name] for name in sorted(found) if name not in vspec.attributes]


@per_spec
def _near_misses(vspec: VersionSpec) -> list[str]:
    """Misspellings of the declared names an exporter might produce: plural, singular, capitals,
    camelCase, without underscores, with a leading underscore."""
    names = []
    for name in sorted(vspec.attributes):
        camel = re.sub(r"_(\w)", lambda m: m[1].upper(), name)
        names += [name + "s", name[:-1], name.capitalize(), camel, name.replace("_", ""), "_" + name]
    return [name for name in dict.fromkeys(names) if _usable(vspec, name)]


def _random_name(raw: bytes) -> str:
    """One to ten lowercase letters: the first byte gives the length, the other five the letters."""
    number, letters = int.from_bytes(raw[1:], "big"), []
    for _ in range(1 + (raw[0] * 10 >> 8)):
        number, letter = divmod(number, len(_LETTERS))
        letters.append(_LETTERS[letter])
    return "".join(letters)


def undeclared_attribute(vspec: VersionSpec, choices: Choices) -> tuple[str, int, str]:
    """Twelve bytes: (a name the version does not declare, an int value, where the name came
    from). A name another version declares gets one of its accepted values; any other name a
    32-bit value. Every such attribute must be rejected (onnx.checker: "Unrecognized attribute")."""
    source, which = choices.pick(UNDECLARED_SOURCES), choices.byte()
    name_bytes, value = choices.take(6), int.from_bytes(choices.take(4), "big", signed=True)
    elsewhere = _elsewhere(vspec)
    if source == "elsewhere" and elsewhere:
        attribute = elsewhere[which * len(elsewhere) >> 8]
        accepted = attribute.values or (attribute.default,)
        return attribute.name, accepted[(value & 0xFF) * len(accepted) >> 8], source
    if source == "random":
        name = _random_name(name_bytes)
        return (name if _usable(vspec, name) else f"{name}_x"), value, source
    misses = _near_misses(vspec)
    return misses[which * len(misses) >> 8], value, "near-miss"
