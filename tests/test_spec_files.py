"""The spec files say what docs/explanation/specification.md says, agree with the installed onnx package's own
schemas, and a broken spec file fails with one line naming the file, the place and the problem.

That page's table is transcribed here on purpose: it is the independent statement the YAML is
checked against, so a typo in the YAML cannot hide behind code that reads the same YAML."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import onnx
import onnx.defs
import pytest
import yaml

import spec

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = (1, 11, 12, 13)
BASE_TYPES = {"double", "float", "float16", "int8", "int16", "int32", "int64",
              "uint8", "uint16", "uint32", "uint64"}
#: Clause title -> kind, per version, as docs/explanation/specification.md states it (None: the version has no
#: such clause).
KINDS = {
    "ties": {1: "undefined", 11: "undefined", 12: "semantic", 13: "semantic"},
    "empty-input": {1: None, 11: "undefined", 12: None, 13: None},
    "empty-axis": {1: "undefined", 11: "undefined", 12: "undefined", 13: "undefined"},
    "zero-size": {1: "semantic", 11: None, 12: "semantic", 13: "semantic"},
    "rank-0": {1: "undefined", 11: None, 12: None, 13: None},
    "reject-rank-0": {1: None, 11: "rejection", 12: "rejection", 13: "rejection"},
    "negative-axis": {1: "undefined", 11: None, 12: None, 13: None},
    "reject-axis": {1: "rejection", 11: "rejection", 12: "rejection", 13: "rejection"},
    "reject-attribute": {v: "rejection" for v in VERSIONS},
    "reject-type": {1: "rejection", 11: "rejection", 12: "rejection", 13: "rejection"},
    "nan": {1: "undefined", 11: "undefined", 12: "undefined", 13: "undefined"},
    "keepdims-value": {1: "undefined", 11: "undefined", 12: "undefined", 13: "undefined"},
    "select-last-index-value": {1: None, 11: None, 12: "undefined", 13: "undefined"},
    "output-dtype": {v: "semantic" for v in VERSIONS},
    "output-shape": {v: "semantic" for v in VERSIONS},
    "index-range": {v: "semantic" for v in VERSIONS},
    "minimum": {v: "semantic" for v in VERSIONS},
    "defaults": {v: "semantic" for v in VERSIONS},
}


def _by_title(vspec: spec.VersionSpec, title: str) -> spec.Clause | None:
    found = [c for c in vspec.clauses if c.title == title]
    assert len(found) <= 1, f"ArgMin-{vspec.version} has {len(found)} clauses titled {title!r}"
    return found[0] if found else None


def test_versions_are_the_four_files() -> None:
    assert spec.versions() == VERSIONS
    assert tuple(v.version for v in spec.load_all()) == VERSIONS


@pytest.mark.parametrize("version", VERSIONS)
def test_types_and_output(version: int) -> None:
    vspec = spec.load(version)
    expected = BASE_TYPES | ({"bfloat16"} if version >= 13 else set())
    assert set(vspec.type_names) == expected
    assert len(vspec.type_names) == len(expected), "a type is listed twice"
    assert vspec.outputs == (("reduced", "tensor(int64)"),)
    assert vspec.clause_for_check("output-dtype").facts == {"dtype": "int64"}
    outside = {t.name for t in spec.outside_types(vspec)}
    assert outside.isdisjoint(expected)
    assert {"bool", "complex64", "complex128", "float8e4m3fn", "float8e5m2"} <= outside
    assert ("bfloat16" in outside) == (version < 13)


@pytest.mark.parametrize("version", VERSIONS)
def test_axis_attribute(version: int) -> None:
    axis = spec.load(version).attributes["axis"]
    assert (axis.type, axis.default, axis.since, axis.values) == ("int", 0, 1, None)
    if version == 1:
        assert (axis.range.min, axis.range.max, axis.range.stated) == ("0", "r-1", False)
        assert axis.range.bounds(4) == (0, 3)
    else:
        assert (axis.range.min, axis.range.max, axis.range.stated) == ("-r", "r-1", True)
        assert axis.range.bounds(4) == (-4, 3)
        assert axis.range.bounds(0) == (0, -1), "rank 0 leaves no valid axis"


@pytest.mark.parametrize("version", VERSIONS)
def test_keepdims_and_select_last_index(version: int) -> None:
    vspec = spec.load(version)
    keepdims = vspec.attributes["keepdims"]
    assert (keepdims.default, keepdims.values, keepdims.since, keepdims.range) == (1, (0, 1), 1, None)
    if version < 12:
        assert "select_last_index" not in vspec.attributes
        assert vspec.ties_choice(0) is None and vspec.ties_choice(1) is None
    else:
        last = vspec.attributes["select_last_index"]
        assert (last.default, last.values, last.since, last.range) == (0, (0, 1), 12, None)
        assert (vspec.ties_choice(0), vspec.ties_choice(1), vspec.ties_choice(2)) == ("first", "last", None)
    assert set(vspec.attributes) == {"axis", "keepdims"} | ({"select_last_index"} if version >= 12 else set())


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("title", sorted(KINDS))
def test_clause_kinds(version: int, title: str) -> None:
    clause = _by_title(spec.load(version), title)
    assert (clause.kind if clause else None) == KINDS[title][version]


@pytest.mark.parametrize("version", VERSIONS)
def test_clause_conditions(version: int) -> None:
    """The conditions that make each row of the table decidable by the oracle."""
    vspec = spec.load(version)
    conditions = {c.title: c.when for c in vspec.clauses if c.when}
    assert conditions["nan"] == {"contains_nan": True}
    assert conditions["empty-axis"] == {"reduced_axis_length": 0}
    assert conditions["reject-type"] == {"dtype_outside": "T"}
    assert conditions["keepdims-value"] == {"attribute_outside_values": "keepdims"}
    assert conditions["reject-attribute"] == {"undeclared_attribute": True}  # any name the version does not declare
    assert conditions["reject-axis"] == ({"axis_above_range": True} if version == 1 else {"axis_outside_range": True})
    if version == 1:
        assert conditions["negative-axis"] == {"axis_below_range": True}
        assert conditions["rank-0"] == {"rank": 0}
    else:
        assert conditions["reject-rank-0"] == {"rank": 0}
    if version == 11:
        assert conditions["empty-input"] == {"size": 0}
    if version >= 12:
        assert conditions["select-last-index-value"] == {"attribute_outside_values": "select_last_index"}


@pytest.mark.parametrize("version", VERSIONS)
def test_clause_ids_are_stable_and_bilingual(version: int) -> None:
    """The same title keeps the same id in every version: results and reports cite ids."""
    ids = {}
    for vspec in spec.load_all():
        for clause in vspec.clauses:
            assert ids.setdefault(clause.title, clause.id) == clause.id, clause.title
    for clause in spec.load(version).clauses:
        assert clause.text("en").strip() and clause.text("zh-TW").strip()
        assert clause.text("zh-TW") != clause.text("en")


# --- clause provenance ---------------------------------------------------------------------------

#: Clause title -> versions where it is inferred rather than stated by the ONNX text, as
#: docs/explanation/specification.md says (rank-0 rejection from the empty range [-r, r-1]; axis >= r at ArgMin-1)
#: plus what the text is silent on (NaN, empty axes and zero-size inputs, values outside the
#: described ones, v1/v11 ties, v1's negative axes and rank 0).
INFERRED = {
    "reject-rank-0": {11, 12, 13}, "reject-axis": {1}, "ties": {1, 11}, "zero-size": {1, 12, 13},
    "nan": set(VERSIONS), "empty-axis": set(VERSIONS), "keepdims-value": set(VERSIONS),
    "select-last-index-value": {12, 13}, "negative-axis": {1}, "rank-0": {1},
}


@pytest.mark.parametrize("version", VERSIONS)
def test_each_clause_is_stated_or_marked_inferred(version: int) -> None:
    for clause in spec.load(version).clauses:
        assert clause.source.quotes, f"ArgMin-{version} {clause.id} quotes nothing"
        assert clause.inferred == (version in INFERRED.get(clause.title, set())), f"ArgMin-{version} {clause.id}"
        if clause.inferred:
            assert clause.source.reasoning("en") and clause.source.reasoning("zh-TW") != clause.source.reasoning("en")
    attribute = _by_title(spec.load(version), "reject-attribute")
    assert [q.where for q in attribute.source.quotes] == ["checker"], "C13 cites onnx.checker's rule"


@pytest.mark.parametrize("version", VERSIONS)
def test_quotes_are_the_onnx_text_word_for_word(version: int) -> None:
    from spec.provenance import missing

    assert missing(spec.load(version)) == []


def test_a_misquote_is_named_in_one_line() -> None:
    from spec.provenance import missing

    vspec = spec.load(13)
    c5 = vspec.clause("C5")
    wrong = spec.Source((spec.Quote("doc", "Computes the index of the smallest element."),))
    altered = dataclasses.replace(vspec, clauses=(dataclasses.replace(c5, source=wrong),))
    [line] = missing(altered)
    assert line.startswith("argmin-13.yaml: C5: doc of ArgMin-13 in onnx ") and "'Computes the index of" in line
    unknown = spec.Source((spec.Quote("attribute:axes", "The axes."), spec.Quote("checker", "Unknown attribute")))
    assert len(missing(dataclasses.replace(vspec, clauses=(dataclasses.replace(c5, source=unknown),)))) == 2


def test_quotes_command() -> None:
    done = subprocess.run([sys.executable, "-m", "spec", "quotes"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{sum(len(c.source.quotes) for v in spec.load_all() for c in v.clauses)} of ")


# --- cross-check with the installed onnx package ------------------------------------------------

def _onnx_type_name(type_str: str) -> str:
    assert type_str.startswith("tensor(") and type_str.endswith(")"), type_str
    return type_str[len("tensor("):-1]


@pytest.mark.parametrize("version", VERSIONS)
def test_agrees_with_onnx_schema(version: int) -> None:
    vspec = spec.load(version)
    assert vspec.domain == "ai.onnx" and vspec.operator == "ArgMin"
    schema = onnx.defs.get_schema(vspec.operator, version, "")  # onnx spells ai.onnx as ""
    assert schema.since_version == vspec.version
    assert schema.support_level.name == vspec.support_level
    assert schema.has_function == vspec.function
    assert schema.has_type_and_shape_inference_function == vspec.shape_inference
    assert tuple((f.name, f.type_str) for f in schema.inputs) == vspec.inputs
    assert tuple((f.name, f.type_str) for f in schema.outputs) == vspec.outputs
    onnx_constraints = {c.type_param_str: [_onnx_type_name(t) for t in c.allowed_type_strs]
                        for c in schema.type_constraints}
    assert onnx_constraints == {k: list(v) for k, v in vspec.type_constraints.items()}
    assert set(schema.attributes) == set(vspec.attributes)
    for name, attribute in vspec.attributes.items():
        theirs = schema.attributes[name]
        assert theirs.type == onnx.AttributeProto.INT and attribute.type == "int"
        assert not theirs.required
        assert onnx.helper.get_attribute_value(theirs.default_value) == attribute.default, name
        first_seen = min(v for v in VERSIONS if name in onnx.defs.get_schema("ArgMin", v).attributes)
        assert attribute.since == first_seen, name


def test_no_onnx_argmin_version_beyond_ours() -> None:
    """If onnx publishes ArgMin-N for N beyond our last file, this fails and asks for a spec file."""
    latest = onnx.defs.get_schema("ArgMin", onnx.defs.onnx_opset_version()).since_version
    assert latest == max(spec.versions())


# --- malformed spec files ------------------------------------------------------------------------

def _real(version: int = 13) -> dict:
    return yaml.safe_load((spec.load(version).source).read_text(encoding="utf-8"))


def _clause_index(doc: dict, title: str) -> int:
    return next(i for i, c in enumerate(doc["clauses"]) if c["title"] == title)


def _missing_operator(doc: dict) -> str:
    del doc["operator"]
    return "(top)"


def _wrong_kind(doc: dict) -> str:
    doc["clauses"][3]["kind"] = "mandatory"
    return "clauses[3].kind"


def _bad_range(doc: dict) -> str:
    doc["attributes"]["axis"]["range"]["min"] = "-q"
    return "attributes.axis.range.min"


def _unknown_type(doc: dict) -> str:
    doc["type_constraints"]["T"][2] = "float17"
    return "type_constraints.T[2]"


def _duplicate_id(doc: dict) -> str:
    doc["clauses"][5]["id"] = doc["clauses"][4]["id"]
    return "clauses[5].id"


def _dangling_dtype_outside(doc: dict) -> str:
    i = _clause_index(doc, "reject-type")
    doc["clauses"][i]["when"]["dtype_outside"] = "U"
    return f"clauses[{i}].when.dtype_outside"


def _string_default(doc: dict) -> str:
    doc["attributes"]["keepdims"]["default"] = "one"
    return "attributes.keepdims.default"


def _wrong_since_version(doc: dict) -> str:
    doc["since_version"] = 12
    return "since_version"


def _missing_statement_language(doc: dict) -> str:
    del doc["clauses"][0]["statement"]["zh-TW"]
    return "clauses[0].statement"


def _missing_source(doc: dict) -> str:
    del doc["clauses"][2]["source"]
    return "clauses[2]"


def _reasoning_without_quotes(doc: dict) -> str:
    doc["clauses"][2]["source"] = {"inferred": {"en": "because", "zh-TW": "因為"}}
    return "clauses[2].source"


MALFORMED = {
    "missing-required-field": (_missing_operator, "'operator' is a required property"),
    "wrong-clause-kind": (_wrong_kind, "'mandatory'"),
    "bad-range-expression": (_bad_range, "'-q'"),
    "unknown-type-in-T": (_unknown_type, "unknown type 'float17'"),
    "duplicate-clause-id": (_duplicate_id, "duplicate clause id"),
    "dangling-dtype-outside": (_dangling_dtype_outside, "no type constraint named 'U'"),
    "string-default": (_string_default, "'one'"),
    "since-vspec-vs-file-name": (_wrong_since_version, "does not match the file name"),
    "missing-statement-language": (_missing_statement_language, "'zh-TW' is a required property"),
    "missing-source": (_missing_source, "'source' is a required property"),
    "reasoning-without-quotes": (_reasoning_without_quotes, "'quotes' is a required property"),
}


def _assert_one_line(error: spec.SpecError, path: Path, location: str, problem: str) -> None:
    message = str(error)
    assert "\n" not in message, message
    assert message.startswith(f"{path}: {location}"), message
    assert problem in message, message


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_spec_fails_in_one_line(name: str, tmp_path: Path) -> None:
    break_it, problem = MALFORMED[name]
    doc = _real()
    location = break_it(doc)
    path = tmp_path / "argmin-13.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    with pytest.raises(spec.SpecError) as caught:
        spec.load_file(path)
    _assert_one_line(caught.value, path, location, problem)


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    text = spec.load(13).source.read_text(encoding="utf-8").splitlines()
    line = next(i for i, t in enumerate(text) if t.startswith("operator:"))
    text[line] = "operator: [ArgMin"
    path = tmp_path / "argmin-13.yaml"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    with pytest.raises(spec.SpecError) as caught:
        spec.load_file(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: line ") and "not valid YAML" in message, message


def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "argmin-13.yaml"
    with pytest.raises(spec.SpecError) as caught:
        spec.load_file(path)
    assert "\n" not in str(caught.value) and str(caught.value).startswith(f"{path}: cannot read"), caught.value


def test_unmodified_copy_loads(tmp_path: Path) -> None:
    """The malformed cases above fail because of their one change, not because of the copying."""
    path = tmp_path / "argmin-13.yaml"
    path.write_text(yaml.safe_dump(_real(), allow_unicode=True, sort_keys=False), encoding="utf-8")
    copy = spec.load_file(path)
    assert copy.clauses == spec.load(13).clauses and copy.type_names == spec.load(13).type_names


def test_unknown_version_on_the_command_line() -> None:
    done = subprocess.run([sys.executable, "-m", "spec", "diff", "13", "14"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "ArgMin-14 has no spec file" in lines[0] and "1, 11, 12, 13" in lines[0], done.stderr
