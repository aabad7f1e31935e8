"""reports.document's types against report.schema.json: walked together from the top, every object
the schema lists properties for is a TypedDict with exactly those keys, the required ones required;
every TypedDict the module defines is reached; and the sample documents hold exactly those keys."""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path

import pytest

from reports import aggregate
from reports.document import parts as document
from tests.report_fixtures.runs import failing_run, hostile_run, incomplete_run, passing_run, refusing_run

SCHEMA = json.loads((Path(document.__file__).parent / "report.schema.json").read_text(encoding="utf-8"))


def _resolve(node: dict) -> dict:
    while "$ref" in node:
        node = SCHEMA["$defs"][node["$ref"].removeprefix("#/$defs/")]
    return node


def _arms(annotation: object) -> tuple:
    """The alternatives of a union (``X | None``), or the annotation alone."""
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    return typing.get_args(annotation) if union else (annotation,)


def _walk(node: dict, annotation: object, where: str, seen: dict[str, type]) -> None:
    """Check ``annotation`` against the schema ``node`` and everything below it."""
    node = _resolve(node)
    branches = [_resolve(b) for b in node.get("oneOf", [node])]
    arms = _arms(annotation)
    dicts = [arm for arm in arms if typing.is_typeddict(arm)]
    objects = [b for b in branches if "properties" in b]
    assert len(dicts) == len(objects) <= 1, f"{where}: {annotation} for a schema with {len(objects)} object(s)"
    for typed, schema in zip(dicts, objects, strict=True):
        seen[typed.__name__] = typed
        keys = typed.__required_keys__ | typed.__optional_keys__
        assert keys == schema["properties"].keys(), f"{where} ({typed.__name__}): {keys ^ schema['properties'].keys()}"
        required = set(schema.get("required", []))
        assert typed.__required_keys__ == required, f"{where} ({typed.__name__}) required: " \
                                                    f"{typed.__required_keys__ ^ required}"
        hints = typing.get_type_hints(typed)
        for key, below in schema["properties"].items():
            _walk(below, hints[key], f"{where}.{key}", seen)
    for branch in branches:
        for part, origin in (("items", list), ("additionalProperties", dict)):
            if isinstance(branch.get(part), dict):
                arm = next((a for a in arms if typing.get_origin(a) is origin), None)
                assert arm is not None, f"{where}: {annotation} is no {origin.__name__} for the schema's {part}"
                _walk(branch[part], typing.get_args(arm)[-1], f"{where}[]", seen)


def test_the_types_say_what_the_schema_says() -> None:
    seen: dict[str, type] = {}
    _walk(SCHEMA, document.Document, "document", seen)
    defined = {name for name, value in vars(document).items()
               if typing.is_typeddict(value) and value.__module__ == document.__name__ and not name.startswith("_")}
    assert defined == seen.keys(), f"not in the schema: {defined - seen.keys()}"


def _keys_hold(value: object, annotation: object, where: str) -> None:
    """Every dict of ``value`` typed as a TypedDict has its required keys and no other than its own."""
    if isinstance(value, dict):
        typed = next((arm for arm in _arms(annotation) if typing.is_typeddict(arm)), None)
        if typed is not None:
            assert typed.__required_keys__ <= value.keys() <= typed.__required_keys__ | typed.__optional_keys__, \
                f"{where}: {set(value) ^ (typed.__required_keys__ | typed.__optional_keys__)}"
            hints = typing.get_type_hints(typed)
            for key, item in value.items():
                _keys_hold(item, hints[key], f"{where}.{key}")
            return
        mapping = next((arm for arm in _arms(annotation) if typing.get_origin(arm) is dict), None)
        for key, item in value.items() if mapping else ():
            _keys_hold(item, typing.get_args(mapping)[1], f"{where}[{key!r}]")
    elif isinstance(value, list):
        sequence = next((arm for arm in _arms(annotation) if typing.get_origin(arm) is list), None)
        for i, item in enumerate(value if sequence else ()):
            _keys_hold(item, typing.get_args(sequence)[0], f"{where}[{i}]")


@pytest.mark.parametrize("run", [failing_run, passing_run, incomplete_run, refusing_run, hostile_run])
def test_aggregated_documents_have_the_keys_their_types_name(run) -> None:
    _keys_hold(aggregate(run()), document.Document, "document")
