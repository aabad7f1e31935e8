"""Report document -> JUnit XML for CI systems: one testsuite per version, one testcase per clause.

A clause that makes the headline NON-CONFORMANT (results.verdict) gets a <failure> (a wrong
answer, a refusal of an implemented type) or an <error> (crash, timeout, unexpected exception)
holding the counterexamples' text. A rejection clause the implementation is lenient on is
<skipped> with what it computes (strictness, never a failure); a type not implemented is named in
<system-out> and in the suite's properties, beside the headline; undefined clauses and clauses no
case reached are <skipped>, unless an undefined input crashed or hung the implementation.

Times are the implementation's own: a testcase's ``time`` is that of the cases that exercised its
clause (a case exercises several clauses, so the testcases of a suite add up to more than the
suite's ``time``, which counts each case once). Every testsuite carries the run's certificate
block as ``<properties>``: implementation and version, profile, seed, spec digest and so on."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from reports.document.aggregate import worst
from reports.document.parts import Document, FailureCard, Version
from results.outcomes import ERROR_OUTCOMES, FAILURE_OUTCOMES

from .i18n import Translator
from .standing import certificate_line, scope_text, strictness_text

# Characters XML 1.0 cannot hold at all, even escaped; text from the implementation may carry them.
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: object) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m[0]):02x}", str(text))


def _failure_text(failures: list[FailureCard]) -> str:
    blocks = []
    for f in failures:
        ce = f["counterexample"]
        lines = [f"{f['clause']} {f['clause_title']} [{f['type']}] {f['problem']} ({f['outcome']}, "
                 f"{f['occurrences']} case(s))"]
        if ce:
            for label, value in (("input", ce["input"]), ("expected", ce["expected"]), ("actual", ce["actual"])):
                shown = value if not isinstance(value, dict) else f"{value['type']}{value['shape']} {value['display']}"
                lines.append(f"  {label}: {shown}")
            lines.append(f"  attributes: {ce['attributes']}  ArgMin-{f['version']}")
            if ce["detail"]:
                lines.append(f"  {ce['detail']}")
        if f["replay"]:
            lines += ["  replay:", *(f"    {line}" for line in f["replay"].splitlines())]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _standing(entry: Version) -> list[tuple[str, str]]:
    """The version's verdict, scope and strictness as name/value pairs."""
    t = Translator("en")
    scope = scope_text(t, entry["scope"], entry["type_restriction"] is not None)
    return [("verdict", entry["verdict"]), ("scope", scope),
            ("not_implemented", ",".join(entry["scope"]["not_implemented"])),
            ("strictness", entry["strictness"]["level"]),
            ("strictness_detail", strictness_text(t, entry["strictness"]))]


def _properties(document: Document) -> list[tuple[str, str]]:
    """The certificate block as name/value pairs, lists joined, unknowns empty."""
    certificate = document["certificate"]
    pairs = [("certificate", certificate_line(certificate))]
    for key, value in certificate.items():
        if key == "status":
            continue
        if isinstance(value, list):
            value = ",".join(map(str, value))
        pairs.append((key, "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)))
    return pairs


def _seconds(value: float) -> str:
    return f"{float(value):.6f}"


def to_junit(document: Document) -> bytes:
    """The JUnit XML bytes (UTF-8, with declaration) for a report document."""
    root = ET.Element("testsuites", name=f"argmin-conformance {_clean(document['run']['impl'])}",
                      time=_seconds(sum(v["seconds"] for v in document["versions"])))
    properties = _properties(document)
    for entry in document["versions"]:
        version = entry["version"]
        clauses = [c for c in document["clauses"] if c["version"] == version]
        suite = ET.SubElement(root, "testsuite", name=f"ArgMin-{version}", timestamp=_clean(document["run"]["started"]),
                              time=_seconds(entry["seconds"]))
        listed = ET.SubElement(suite, "properties")
        for name, value in [*properties, *_standing(entry)]:
            ET.SubElement(listed, "property", name=name, value=_clean(value))
        tallies = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        lenient = {e["clause"]: e for e in entry["strictness"]["clauses"] if e["computed"]}
        census_faults = {c["clause"]: c for c in entry["causes"] if c["census"]}
        for clause in clauses:
            tallies["tests"] += 1
            case = ET.SubElement(suite, "testcase", classname=f"ArgMin-{version}",
                                 name=_clean(f"{clause['id']} {clause['title']}".strip()),
                                 time=_seconds(clause["seconds"]))
            mine = [f for f in document["failures"] if f["version"] == version and f["clause"] == clause["id"]]
            headline = [f for f in mine if f["role"] == "headline"]
            outcome = worst({o: sum(1 for f in headline if f["outcome"] == o)
                             for o in ERROR_OUTCOMES + FAILURE_OUTCOMES})
            if clause["id"] in census_faults:
                outcome = census_faults[clause["id"]]["outcome"]
            if outcome != "not-run":
                tag = "error" if outcome in ERROR_OUTCOMES else "failure"
                tallies["errors" if tag == "error" else "failures"] += 1
                bad = ", ".join(sorted({f"{f['type']} {f['outcome']}" for f in headline})) or outcome
                element = ET.SubElement(case, tag, message=_clean(f"{clause['id']}: {bad}"), type=outcome)
                element.text = _clean(_failure_text(headline))
            elif clause["id"] in lenient:
                tallies["skipped"] += 1
                words = strictness_text(Translator("en"), {"level": "lenient", "clauses": [lenient[clause["id"]]]})
                ET.SubElement(case, "skipped", message=_clean(f"{words}; strictness, not a conformance failure"))
            elif clause["kind"] == "undefined" or worst(clause["counts"]) == "not-run":
                tallies["skipped"] += 1
                undefined = clause["kind"] == "undefined"
                reason = "undefined: recorded in the census, never judged" if undefined else "no case ran"
                ET.SubElement(case, "skipped", message=reason)
            elif any(f["role"] == "scope" for f in mine):
                out = ET.SubElement(case, "system-out")
                out.text = _clean("not implemented: " + ", ".join(entry["scope"]["not_implemented"]))
        for key, value in tallies.items():
            suite.set(key, str(value))
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)
