"""Report document -> JUnit XML for CI systems: one testsuite per version, one testcase per clause.

Failing semantic/rejection clauses get a <failure> (wrong answer, missing rejection, unsupported
type) or an <error> (crash, timeout, unexpected exception) holding the counterexamples' text;
undefined clauses and clauses no case reached are <skipped>, since they never decide a verdict.

Times are the implementation's own: a testcase's ``time`` is that of the cases that exercised its
clause (a case exercises several clauses, so the testcases of a suite add up to more than the
suite's ``time``, which counts each case once). Every testsuite carries the run's certificate
block as ``<properties>``: implementation and version, profile, seed, spec digest and so on."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from .aggregate import worst
from .certificate import certificate_line

ERRORS = ("crash", "timeout", "error")
FAILURES = ("fail", "missing-rejection", "unsupported")
# Characters XML 1.0 cannot hold at all, even escaped; text from the implementation may carry them.
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: object) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m[0]):02x}", str(text))


def _failure_text(failures: list[dict]) -> str:
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


def _properties(document: dict) -> list[tuple[str, str]]:
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


def to_junit(document: dict) -> bytes:
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
        for name, value in properties:
            ET.SubElement(listed, "property", name=name, value=_clean(value))
        tallies = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for clause in clauses:
            tallies["tests"] += 1
            case = ET.SubElement(suite, "testcase", classname=f"ArgMin-{version}",
                                 name=_clean(f"{clause['id']} {clause['title']}".strip()),
                                 time=_seconds(clause["seconds"]))
            judged = {o: n for o, n in clause["counts"].items() if o != "observed"}
            outcome = worst(judged)
            mine = [f for f in document["failures"] if f["version"] == version and f["clause"] == clause["id"]]
            if clause["kind"] == "undefined" or outcome == "not-run":
                tallies["skipped"] += 1
                undefined = clause["kind"] == "undefined"
                reason = "undefined: recorded in the census, never judged" if undefined else "no case ran"
                ET.SubElement(case, "skipped", message=reason)
            elif outcome != "pass":
                tag = "error" if outcome in ERRORS else "failure"
                tallies["errors" if tag == "error" else "failures"] += 1
                bad = ", ".join(f"{n} {o}" for o, n in judged.items() if n and o != "pass")
                element = ET.SubElement(case, tag, message=_clean(f"{clause['id']}: {bad}"), type=outcome)
                element.text = _clean(_failure_text(mine))
        for key, value in tallies.items():
            suite.set(key, str(value))
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)
