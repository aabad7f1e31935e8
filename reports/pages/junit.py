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
block as ``<properties>``: implementation and version, profile, seed, spec digest and so on.

The XML is written by junitparser; what is ours is which clause becomes which testcase, and
cleaning the text that XML 1.0 cannot hold. junitparser serializes with lxml where that is
installed, else with the standard library: the same XML in other bytes, so two JUnit files are
compared in their canonical form (``canonical``), as ``verify`` does."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET

from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

from reports.document.aggregate import worst
from reports.document.parts import ClauseRow, Document, FailureCard, Version
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


def _testcase(document: Document, entry: Version, clause: ClauseRow) -> TestCase:
    """One clause of one version: a failure or error where it makes the headline NON-CONFORMANT
    (or an undefined input crashed or hung the implementation), skipped where it is strictness
    (lenient), undefined or reached by no case, its types not implemented named in system-out."""
    version, name = entry["version"], clause["id"]
    case = TestCase(_clean(f"{name} {clause['title']}".strip()), f"ArgMin-{version}", float(clause["seconds"]))
    mine = [f for f in document["failures"] if f["version"] == version and f["clause"] == name]
    headline = [f for f in mine if f["role"] == "headline"]
    outcome = worst({o: sum(f["outcome"] == o for f in headline) for o in ERROR_OUTCOMES + FAILURE_OUTCOMES})
    census_faults = {c["clause"]: c["outcome"] for c in entry["causes"] if c["census"]}
    outcome = census_faults.get(name, outcome)
    lenient = {e["clause"]: e for e in entry["strictness"]["clauses"] if e["computed"]}
    if outcome != "not-run":
        bad = ", ".join(sorted({f"{f['type']} {f['outcome']}" for f in headline})) or outcome
        result = (Error if outcome in ERROR_OUTCOMES else Failure)(_clean(f"{name}: {bad}"), outcome)
        result.text = _clean(_failure_text(headline))
        case.append(result)
    elif name in lenient:
        words = strictness_text(Translator("en"), {"level": "lenient", "clauses": [lenient[name]]})
        case.append(Skipped(_clean(f"{words}; strictness, not a conformance failure")))
    elif clause["kind"] == "undefined":
        case.append(Skipped("undefined: recorded in the census, never judged"))
    elif worst(clause["counts"]) == "not-run":
        case.append(Skipped("no case ran"))
    elif any(f["role"] == "scope" for f in mine):
        case.system_out = _clean("not implemented: " + ", ".join(entry["scope"]["not_implemented"]))
    return case


def to_junit(document: Document) -> bytes:
    """The JUnit XML bytes (UTF-8, with declaration) for a report document."""
    root = JUnitXml(f"argmin-conformance {_clean(document['run']['impl'])}")
    root.time = float(sum(v["seconds"] for v in document["versions"]))
    properties = _properties(document)
    for entry in document["versions"]:
        suite = TestSuite(f"ArgMin-{entry['version']}")
        suite.timestamp = _clean(document["run"]["started"])
        for name, value in [*properties, *_standing(entry)]:
            suite.add_property(name, _clean(value))
        suite.add_testcases([_testcase(document, entry, clause) for clause in document["clauses"]
                             if clause["version"] == entry["version"]])  # counts tests, failures, errors, skipped
        suite.time = float(entry["seconds"])  # each case once, where the testcases count a case per clause
        root.add_testsuite(suite)
    written = io.BytesIO()
    root.write(written)
    return written.getvalue()


def canonical(xml: bytes) -> str | None:
    """The XML's canonical form (C14N 2.0: the same elements, attributes and text give the same
    string, however serialized), or None where it is not well-formed XML in UTF-8."""
    try:
        return ET.canonicalize(xml.decode("utf-8"))
    except (ET.ParseError, UnicodeDecodeError):
        return None
