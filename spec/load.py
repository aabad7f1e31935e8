"""Reading and validating the spec files. Every problem becomes one SpecError line naming the
file, the place inside it and what is wrong."""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import ml_dtypes
import numpy as np
import yaml

from .model import Attribute, Clause, Quote, Range, Source, TensorType, VersionSpec

SPEC_DIR = Path(__file__).resolve().parent
_VERSION_FILE = re.compile(r"^argmin-(\d+)\.yaml$")


class SpecError(Exception):
    """A spec file is unreadable or breaks its schema; the message is one line."""


def _location(path: list) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".") or "(top)"


def read_yaml(path: Path, error: type[Exception] = SpecError) -> Any:
    """A YAML file's data (the safe loader). A file that cannot be read or parsed raises ``error``
    with one line naming the file, where in it and what is wrong (the reports' message files too)."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{path}: cannot read the file ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise error(f"{path}: {where}: not valid YAML: {problem}") from None


def _read(path: Path, schema_name: str) -> dict:
    document = read_yaml(path)
    schema = json.loads((SPEC_DIR / schema_name).read_text(encoding="utf-8"))
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(document))
    if error is not None:
        raise SpecError(f"{path}: {_location(list(error.absolute_path))}: {error.message}")
    return document


def _dtype(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)


@cache
def catalogue(path: Path = SPEC_DIR / "types.yaml") -> dict[str, TensorType]:
    """Every element type the suite knows, by ONNX name."""
    document = _read(path, "types.schema.json")
    types = {}
    for name, entry in document["types"].items():
        try:
            dtype = _dtype(entry["numpy"])
        except TypeError:
            raise SpecError(f"{path}: types.{name}.numpy: {entry['numpy']!r} is not a numpy or ml_dtypes dtype") \
                from None
        types[name] = TensorType(name, dtype, entry["family"])
    return types


@cache
def type_of(dtype: np.dtype) -> TensorType | None:
    """The catalogue entry holding arrays of this dtype, if any (cached: asked for every case)."""
    for tensor_type in catalogue().values():
        if tensor_type.dtype == dtype:
            return tensor_type
    return None


def _semantic_checks(path: Path, doc: dict) -> None:
    """What a schema cannot say: references between parts of the file must resolve."""
    known = catalogue()
    if (match := _VERSION_FILE.match(path.name)) and int(match[1]) != doc["since_version"]:
        raise SpecError(f"{path}: since_version: {doc['since_version']} does not match the file name")
    for variable, names in doc["type_constraints"].items():
        for i, name in enumerate(names):
            if name not in known:
                raise SpecError(f"{path}: type_constraints.{variable}[{i}]: unknown type {name!r}; "
                                "add it to spec/types.yaml")
    seen = set()
    for i, clause in enumerate(doc["clauses"]):
        where = f"{path}: clauses[{i}]"
        if clause["id"] in seen:
            raise SpecError(f"{where}.id: duplicate clause id {clause['id']}")
        seen.add(clause["id"])
        when = clause.get("when", {})
        if "dtype_outside" in when and when["dtype_outside"] not in doc["type_constraints"]:
            raise SpecError(f"{where}.when.dtype_outside: no type constraint named {when['dtype_outside']!r}")
        name = when.get("attribute_outside_values")
        if name is not None and "values" not in doc["attributes"].get(name, {}):
            raise SpecError(f"{where}.when.attribute_outside_values: {name!r} is not an attribute with listed values")
        if any(key.startswith("axis_") for key in when) and "range" not in doc["attributes"].get("axis", {}):
            raise SpecError(f"{where}.when: an axis condition needs attributes.axis.range")
    if doc["inputs"][0]["type"] not in doc["type_constraints"]:
        raise SpecError(f"{path}: inputs[0].type: no type constraint named {doc['inputs'][0]['type']!r}")


def load_file(path: Path) -> VersionSpec:
    """Read, validate and convert one spec file."""
    doc = _read(path, "spec.schema.json")
    _semantic_checks(path, doc)
    known = catalogue()
    attributes = {
        name: Attribute(
            name=name, type=a["type"], default=a["default"], since=a["since"],
            values=tuple(a["values"]) if "values" in a else None,
            range=Range(a["range"]["min"], a["range"]["max"], a["range"]["stated"]) if "range" in a else None,
        )
        for name, a in doc["attributes"].items()
    }
    clauses = tuple(
        Clause(id=c["id"], kind=c["kind"], title=c["title"], statement=c["statement"], check=c.get("check"),
               when=c.get("when"), facts=c.get("facts", {}),
               source=Source(tuple(Quote(q["in"], q["text"]) for q in c["source"]["quotes"]),
                             c["source"].get("inferred")))
        for c in doc["clauses"]
    )
    input_constraint = doc["inputs"][0]["type"]
    return VersionSpec(
        version=doc["since_version"], operator=doc["operator"], domain=doc["domain"],
        support_level=doc["support_level"], function=doc["function"], shape_inference=doc["shape_inference"],
        inputs=tuple((f["name"], f["type"]) for f in doc["inputs"]),
        outputs=tuple((f["name"], f["type"]) for f in doc["outputs"]),
        type_constraints={k: tuple(v) for k, v in doc["type_constraints"].items()},
        types=tuple(known[name] for name in doc["type_constraints"][input_constraint]),
        attributes=attributes, clauses=clauses, source=path,
    )


def version_files(directory: Path = SPEC_DIR) -> dict[int, Path]:
    found = {int(m[1]): p for p in directory.iterdir() if (m := _VERSION_FILE.match(p.name))}
    return dict(sorted(found.items()))


def versions() -> tuple[int, ...]:
    """The operator versions that have a spec file, oldest first."""
    return tuple(version_files())


@cache
def load(version: int) -> VersionSpec:
    """The spec of one version, e.g. ``load(13)``."""
    files = version_files()
    if version not in files:
        known = ", ".join(map(str, files))
        raise SpecError(f"ArgMin-{version} has no spec file; known versions: {known}")
    return load_file(files[version])


def load_all() -> tuple[VersionSpec, ...]:
    return tuple(load(n) for n in versions())


def outside_types(vspec: VersionSpec) -> tuple[TensorType, ...]:
    """Known element types that this version's T leaves out: inputs it must reject."""
    inside = set(vspec.type_names)
    return tuple(t for t in catalogue().values() if t.name not in inside)


def files_digest(directory: Path = SPEC_DIR) -> str:
    """SHA-256 over every spec and schema file, so a report names the exact spec it used."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".json")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
