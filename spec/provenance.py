"""Checking the clauses' quotes against the ONNX text they cite, as the installed onnx package
has it: ``python -m spec quotes`` (and tests/test_spec_files.py) report any quote that is not
found word for word, so the spec files cannot drift from the operator documentation unnoticed.

Imported only where the quotes are checked: loading the spec never needs onnx."""

from __future__ import annotations

import onnx
import onnx.checker
import onnx.defs
import onnx.helper

from .model import Quote, VersionSpec

# An attribute name no ArgMin version declares, to make onnx.checker state its rule.
PROBE = "argmin_conformance_probe"


def _domain(vspec: VersionSpec) -> str:
    """onnx's own name of the domain: the empty string for the default domain ai.onnx."""
    return "" if vspec.domain == "ai.onnx" else vspec.domain


def _checker_message(vspec: VersionSpec) -> str:
    """What onnx.checker says about a node carrying an attribute the version does not declare."""
    context = onnx.checker.C.CheckerContext()
    context.ir_version = onnx.IR_VERSION
    context.opset_imports = {_domain(vspec): vspec.version}
    node = onnx.helper.make_node(vspec.operator, [name for name, _ in vspec.inputs],
                                 [name for name, _ in vspec.outputs], **{PROBE: 1})
    try:
        onnx.checker.check_node(node, context)
    except onnx.checker.ValidationError as exc:
        return str(exc)
    return ""


def schema_text(vspec: VersionSpec, where: str) -> str:
    """The words of the installed onnx package's schema of this version at ``where`` (see
    spec.schema.json's ``quote``); empty where the schema has no such part."""
    if where == "checker":
        return _checker_message(vspec)
    schema = onnx.defs.get_schema(vspec.operator, vspec.version, _domain(vspec))
    if where == "doc":
        return schema.doc or ""
    part, _, name = where.partition(":")
    if part in ("attribute", "default"):
        attribute = schema.attributes.get(name)
        if attribute is None:
            return ""
        if part == "attribute":
            return attribute.description
        return str(onnx.helper.get_attribute_value(attribute.default_value))
    if part == "type_constraint":
        found = [c for c in schema.type_constraints if c.type_param_str == name]
        return " ".join([found[0].description, *found[0].allowed_type_strs]) if found else ""
    formals = schema.inputs if part == "input" else schema.outputs
    found = [f for f in formals if f.name == name]
    return f"{found[0].description} {found[0].type_str}" if found else ""


def _words(text: str) -> str:
    return " ".join(text.split())


def missing(vspec: VersionSpec) -> list[str]:
    """One line per quote of this version that its cited text does not contain (whitespace aside)."""
    problems = []
    texts: dict[str, str] = {}
    for clause in vspec.clauses:
        for quote in clause.source.quotes:
            if quote.where not in texts:
                texts[quote.where] = _words(schema_text(vspec, quote.where))
            if _words(quote.text) not in texts[quote.where]:
                problems.append(_problem(vspec, clause.id, quote))
    return problems


def _problem(vspec: VersionSpec, clause_id: str, quote: Quote) -> str:
    return (f"{vspec.source.name}: {clause_id}: {quote.where} of ArgMin-{vspec.version} in onnx {onnx.__version__} "
            f"does not contain {quote.text!r}; quote it exactly or mark the clause inferred")
