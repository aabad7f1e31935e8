"""The report layer: the aggregated document and its schema, the HTML (escaping, languages,
incomplete runs), replay snippets, JUnit XML, run comparison and the command line."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import ml_dtypes
import numpy as np
import pytest

import spec
from generators import profiles
from reports import aggregate, write_reports
from reports.__main__ import main
from reports.document.replay import build_expression
from reports.pages.compare import compare
from reports.pages.i18n import messages
from reports.pages.junit import to_junit
from reports.pages.render import render_report
from reports.pytest_plugin import summary_lines
from results import CaseResult, Counterexample, Tensor, load, save, to_json
from results.environment import collect, suite_state
from tests.report_fixtures.runs import (
    ENVIRONMENT,
    SCRIPT,
    STUB,
    failing_run,
    hostile_run,
    incomplete_run,
    passing_run,
    refusing_run,
    tensor,
)

REPO = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((REPO / "reports" / "document" / "report.schema.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def failing() -> dict:
    return aggregate(failing_run())


def _validate(document: dict) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(document)


def test_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("make", [failing_run, passing_run, incomplete_run, hostile_run])
def test_document_validates_against_the_schema(make) -> None:
    document = aggregate(make())
    _validate(document)
    assert json.loads(json.dumps(document)) == document  # plain JSON, no NaN or objects


def test_schema_rejects_a_broken_document(failing: dict) -> None:
    broken = json.loads(json.dumps(failing))
    broken["versions"][0]["verdict"] = "mostly conformant"
    with pytest.raises(jsonschema.ValidationError):
        _validate(broken)


def test_verdicts_and_type_restriction(failing: dict) -> None:
    assert {v["version"]: v["verdict"] for v in failing["versions"]} == {
        1: "conformant", 11: "non-conformant", 12: "non-conformant", 13: "non-conformant"}
    assert all(v["type_restriction"] is None for v in failing["versions"])
    passing = aggregate(passing_run())
    assert [(v["verdict"], v["type_restriction"]) for v in passing["versions"]] == [
        ("conformant", ["float", "double"]), ("conformant", ["float", "double"])]


def test_clause_counts_charge_only_the_deciding_clause(failing: dict) -> None:
    clauses = {(c["version"], c["id"]): c for c in failing["clauses"]}
    passes_13 = 6 * len(spec.load(13).type_names)
    assert clauses[13, "C5"]["counts"]["fail"] == 2 and clauses[13, "C5"]["counts"]["pass"] == passes_13
    assert clauses[13, "C1"]["counts"]["pass"] == passes_13 + 2 and clauses[13, "C1"]["outcome"] == "pass"
    assert clauses[13, "C12"]["outcome"] == "missing-rejection"
    assert clauses[12, "C1"]["outcome"] == "crash"
    assert clauses[1, "C6"]["kind"] == "undefined" and clauses[1, "C6"]["outcome"] == "observed"
    assert clauses[13, "C5"]["statement"]["zh-TW"] == spec.load(13).clause("C5").text("zh-TW")
    assert {c["id"] for c in failing["clauses"] if c["version"] == 11} == {c.id for c in spec.load(11).clauses}


def test_matrix_counts_cases_per_version_and_type(failing: dict) -> None:
    cells = {(c["version"], c["type"]): c for c in failing["matrix"]}
    assert cells[13, "bfloat16"]["counts"]["fail"] == 2 and cells[13, "bfloat16"]["outcome"] == "fail"
    assert cells[12, "bfloat16"]["in_t"] is False and cells[12, "bfloat16"]["cases"] == 0
    assert cells[1, "bool"]["outcome"] == "pass" and not cells[1, "bool"]["in_t"]
    assert cells[13, "float8e4m3fn"]["outcome"] == "missing-rejection"


def test_failures_are_distinct_with_the_smallest_counterexample(failing: dict) -> None:
    keys = [(f["version"], f["clause"], f["type"], f["problem"]) for f in failing["failures"]]
    assert len(keys) == len(set(keys)) == 6
    bf16 = next(f for f in failing["failures"] if f["type"] == "bfloat16")
    assert bf16["occurrences"] == 2
    assert bf16["counterexample"]["input"]["values"] == ["1.0", "-3.3895313892515355e+38", "0.0078125"]


def test_census_policy_is_the_intersection_of_fits(failing: dict) -> None:
    topics = {(c["version"], c["topic"]): c for c in failing["census"]}
    assert (topics[13, "C14"]["policy"], topics[13, "C14"]["coherent"]) == (["nan-is-min"], True)
    assert (topics[12, "C14"]["policy"], topics[12, "C14"]["coherent"]) == ([], False)
    assert topics[12, "C14"]["fits_nothing"] == 1
    assert topics[1, "C6"]["policy"] == ["first"]
    # judged per type: int8 always takes the first minimum, uint8 the last; each is one policy
    v11 = topics[11, "C6"]
    assert (v11["coherent"], v11["policy"]) == (True, [])
    assert {t["type"]: t["policy"] for t in v11["types"]} == {"int8": ["first"], "uint8": ["last"]}
    assert {e["fits"][0] for e in topics[11, "C6"]["examples"]} == {"first", "last"}  # both sides shown


def test_coverage_reports_unreached_partitions(failing: dict) -> None:
    cells = {(c["version"], c["type"]): c for c in failing["coverage"]["cells"] if c["kind"] == "semantic"}
    assert "special:subnormal" in cells[1, "float16"]["unreached"]  # float16 holds subnormals at ArgMin-11
    assert "special:subnormal" not in cells[11, "float16"]["unreached"]
    assert "special:subnormal" not in cells[1, "int8"]["unreached"]  # other family: never possible
    assert "special:subnormal" not in cells[1, "double"]["unreached"]  # a value double never held here
    assert not any(t.startswith("type:") for c in cells.values() for t in c["tags"])


def _tagged(version: int, dtype: str, kind: str, *tags: str) -> CaseResult:
    outcome = {"semantic": "pass", "rejection": "pass", "undefined": "observed"}[kind]
    return CaseResult(version, dtype, "property", kind, outcome, ["C1"], None, [f"type:{dtype}", *tags])


def test_coverage_groups_values_counts_kinds_apart_and_keeps_to_each_version() -> None:
    raw = passing_run()
    raw.results = [
        _tagged(13, "float", "semantic", "keepdims:0", "select_last_index:1"),
        _tagged(13, "float", "undefined", "keepdims:235"), _tagged(13, "float", "undefined", "keepdims:-1"),
        _tagged(13, "double", "semantic", "keepdims:1", "select_last_index:omitted"),
        _tagged(12, "float", "semantic", "keepdims:omitted"), _tagged(12, "double", "semantic", "keepdims:omitted"),
    ]
    coverage = aggregate(raw)["coverage"]
    cells = {(c["version"], c["type"], c["kind"]): c for c in coverage["cells"]}
    census = cells[13, "float", "undefined"]
    assert census["tags"] == {"keepdims:out-of-set": 2} and census["unreached"] == []  # one partition, not two
    semantic = cells[13, "float", "semantic"]
    assert semantic["unreached"] == ["keepdims:1", "select_last_index:omitted"]  # reached by double at 13
    assert semantic["groups"] == {"keepdims": [1, 2], "select_last_index": [1, 2]}
    # Nothing from ArgMin-13 is held against ArgMin-12, and census cases do not count as semantic ones.
    assert cells[12, "float", "semantic"]["unreached"] == [] and cells[12, "float", "semantic"]["possible"] == 1


def test_failures_with_one_root_cause_share_a_card() -> None:
    document = aggregate(refusing_run())
    error, refused = document["cards"]
    assert (error["outcome"], error["types"], error["versions"]) == ("error", ["float16"], [1])
    assert (refused["outcome"], refused["versions"]) == ("unsupported", [1, 13])
    assert refused["types"] == ["uint16", "int16", "bfloat16"]  # the matrix's order
    assert len(refused["failures"]) == 5 and refused["anchor"] == "v1-C1-int16"
    assert {document["failures"][i]["anchor"] for i in refused["failures"]} == {
        "v1-C1-int16", "v1-C1-uint16", "v13-C1-int16", "v13-C1-uint16", "v13-C1-bfloat16"}
    assert (error["role"], refused["role"]) == ("headline", "scope")
    # Types refused for every input are scope, named beside the headline; the float16 error fails it.
    versions = {v["version"]: v for v in document["versions"]}
    assert versions[13]["causes"] == [] and versions[13]["verdict"] == "conformant"
    assert versions[13]["scope"]["not_implemented"] == ["uint16", "int16", "bfloat16"]  # the spec's order of T
    assert [(c["clause"], c["outcome"], [t["type"] for t in c["types"]]) for c in versions[1]["causes"]] == [
        ("C1", "error", ["float16"])]
    html = render_report(document)
    assert html.count('class="failure role-') == 2
    assert "not implemented: uint16, int16, bfloat16" in html and ">float16</a>" in html
    # The explanation does not repeat the returned text; numpy's scalar wrappers never reach the reader.
    assert html.count("Could not find an implementation for ArgMin(1) node") == 2  # returned + replay comment
    failing = aggregate(failing_run())
    assert not any("np." in (f["counterexample"]["detail"] or "") for f in failing["failures"])


def test_a_type_failing_in_several_model_forms_is_named_once_per_cause() -> None:
    raw = refusing_run()
    in_forms = [dataclasses.replace(r, form=form) for r in raw.results for form in ("symbolic", "static")]
    raw = dataclasses.replace(raw, results=in_forms, info=dataclasses.replace(raw.info, forms=["symbolic", "static"]))
    document = aggregate(raw)
    _validate(document)
    scope = {v["version"]: v["scope"] for v in document["versions"]}
    assert scope[13]["not_implemented"] == ["uint16", "int16", "bfloat16"]  # once each, whatever the forms
    refused = document["cards"][1]
    assert refused["forms"] == ["symbolic", "static"] and len(refused["failures"]) == 10
    assert len({document["failures"][i]["anchor"] for i in refused["failures"]}) == 10  # every anchor unique


def test_every_link_in_the_report_has_its_target() -> None:
    for document in (aggregate(failing_run()), aggregate(refusing_run())):
        for lang in ("en", "zh-TW"):
            html = render_report(document, lang)
            ids = re.findall(r'\sid="([^"]+)"', html)
            assert len(ids) == len(set(ids)), "duplicate ids"
            targets = set(re.findall(r'href="#([^"]+)"', html))
            assert targets and targets <= set(ids), targets - set(ids)
    cells = {(c["version"], c["type"]): c for c in document["matrix"]}
    assert cells[13, "int16"]["anchor"] == "v13-C1-int16" and cells[13, "float"]["anchor"] is None
    clauses = {(c["version"], c["id"]): c for c in document["clauses"]}
    assert clauses[1, "C1"]["failure_anchor"] == "v1-C1-float16"  # the error: worse than a refusal
    assert clauses[1, "C1"]["types"]["int16"]["unsupported"] == 1


def test_version_differences_come_from_the_spec(failing: dict) -> None:
    pairs = [(d["from"], d["to"]) for d in failing["differences"]]
    assert pairs == [(1, 11), (11, 12), (12, 13)]
    last = failing["differences"][-1]["changes"]
    assert {"what": "types", "name": "bfloat16", "how": "added", "detail": "now in T"} in last


def test_failing_report_shows_its_counterexamples(tmp_path: Path) -> None:
    paths = write_reports(failing_run(), tmp_path / "new" / "dir")
    html = paths["html"].read_text(encoding="utf-8")
    for exact in ("-3.3895313892515355e+38", "18446744073709551615", "-9223372036854775808",
                  "5.960464477539063e-08", "select_last_index=1"):
        assert exact in html
    assert "from engine.asking.loader import resolve" in html and "Non-conformant" in html
    assert json.loads(paths["json"].read_text(encoding="utf-8"))["schema"] == "argmin-conformance/report/4"


def test_implementation_text_cannot_inject_markup(tmp_path: Path) -> None:
    paths = write_reports(hostile_run(), tmp_path)
    html = paths["html"].read_text(encoding="utf-8")
    assert "<script" not in html.lower()
    assert "<img" not in html.lower() and "<b>bold" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&#34;alert(2)&#34;&gt;" in html
    assert "script-src" not in html and "default-src 'none'" in html  # CSP forbids scripts anyway
    junit = ET.parse(paths["junit"]).getroot()  # control characters must not break the XML
    assert SCRIPT in "".join(junit.itertext())


def test_replay_snippet_keeps_returned_text_inside_its_comment() -> None:
    raw = failing_run()
    escape = "boom\nimport os; os.system('echo pwned')\r\u2028print('x')"
    ce = Counterexample(tensor([1.0], "float"), {}, "must raise", escape, "error", "m")
    raw.results = [CaseResult(13, "float", "property", "semantic", "error", ["C1"], "C1", [], "t", 0.0, ce)]
    replay = aggregate(raw)["failures"][0]["replay"]
    assert not any(line.startswith(("import os", "print('x')")) for line in replay.splitlines())
    assert replay.splitlines()[-1].startswith("# recorded: boom import os")


def test_odd_tensors_from_the_implementation_still_render() -> None:
    raw = failing_run()
    odd = Tensor("object", [2], ["<b>1</b>", "2", "3"])  # shape and values disagree
    ce = Counterexample(tensor([], "float", [0, 3]), {"axis": 1}, tensor([], "int64", [0, 1]), odd, "shape", "")
    raw.results.append(CaseResult(13, "float", "property", "semantic", "fail", ["C3"], "C3", [], "t", 0.0, ce))
    document = aggregate(raw)
    _validate(document)
    html = render_report(document)
    assert 'float[0, 3]</span> []' in html and "</span> [&lt;b&gt;1&lt;/b&gt;, 2, 3] (flat)" in html


def test_incomplete_run_still_reports_and_says_so(tmp_path: Path) -> None:
    html = write_reports(incomplete_run(), tmp_path)["html"].read_text(encoding="utf-8")
    assert 'id="incomplete"' in html and "interrupted (KeyboardInterrupt) after 150 cases" in html
    complete = render_report(aggregate(failing_run()))
    assert 'id="incomplete"' not in complete


@pytest.mark.parametrize(("lang", "scope"), [("en", "scope: 9 of 11 types of T implemented"),
                                             ("zh-TW", "範圍：已實作 T 的 11 種型別中的 9 種")])
def test_the_scope_counts_types_implemented_after_what_fails(lang: str, scope: str) -> None:
    """'NON-CONFORMANT for 9 of 11 types of T' read as if 9 types failed. The failing clauses come
    first, beside the headline, then the scope, worded as the types implemented."""
    raw = refusing_run()
    html = render_report(aggregate(raw), lang)
    card = html[html.index('data-version="1" data-verdict'):html.index('data-version="13" data-verdict')]
    assert card.index('class="causes"') < card.index('class="scope"') < card.index(scope)
    if lang == "en":
        line = next(line for line in summary_lines(raw, {}) if line.startswith("  ArgMin-1:"))
        assert line.startswith(f"  ArgMin-1: NON-CONFORMANT (C1: float16 raised an error); {scope}; "
                               "not implemented: uint16, int16 ["), line


def test_traditional_chinese_report(failing: dict) -> None:
    html = render_report(failing, "zh-TW")
    assert '<html lang="zh-TW">' in html
    assert "ArgMin 符合性認證報告" in html and "不符合" in html and "失敗案例" in html
    assert spec.load(13).clause("C5").text("zh-TW") in html
    assert spec.load(13).clause("C5").text("en") not in html


ALL_16_BIT = np.arange(1 << 16, dtype=np.uint16)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_replay_rebuilds_every_16_bit_float_exactly(dtype: str) -> None:
    array = ALL_16_BIT.view(spec.catalogue()[dtype].dtype)
    array = array[~np.isnan(array.astype(np.float32))]
    values = [str(v) for v in array]
    expression = build_expression(Tensor(dtype, [len(values)], values))
    rebuilt = eval(expression, {"np": np, "ml_dtypes": ml_dtypes, "values": values})
    assert rebuilt.dtype == array.dtype and np.array_equal(rebuilt.view(np.uint16), array.view(np.uint16))


@pytest.mark.parametrize(("dtype", "values", "expected"), [
    ("uint64", ["18446744073709551615", "18446744073709551614", "0"], np.array([2**64 - 1, 2**64 - 2, 0], np.uint64)),
    ("int64", ["-9223372036854775808", "9223372036854775807"], np.array([-2**63, 2**63 - 1], np.int64)),
    ("bool", ["1", "0"], np.array([True, False])),
    ("complex64", ["(1+2j)", "(-0-0j)"], np.array([1 + 2j, complex(-0.0, -0.0)], np.complex64)),
    ("float8e4m3fn", ["448.0", "-0.001953125"], np.array([448, -2.0**-9]).astype(ml_dtypes.float8_e4m3fn)),
    ("double", ["5e-324", "-0.0", "inf"], np.array([5e-324, -0.0, np.inf])),
    ("float", ["1e-45", "3.4028235e+38"], np.array([2.0**-149, np.finfo(np.float32).max], np.float32)),
])
def test_replay_rebuilds_exact_values(dtype: str, values: list[str], expected: np.ndarray) -> None:
    expression = build_expression(Tensor(dtype, [1, len(values)], values))
    rebuilt = eval(expression, {"np": np, "ml_dtypes": ml_dtypes, "values": values})
    assert rebuilt.shape == (1, len(values)) and rebuilt.dtype == expected.dtype
    assert rebuilt.tobytes() == expected.tobytes()


def test_replay_snippets_call_the_implementation_with_the_recorded_input(failing: dict, monkeypatch) -> None:
    calls = []
    loader = types.ModuleType("engine.asking.loader")
    loader.resolve = lambda impl: lambda data, **kwargs: calls.append((impl, data, kwargs)) or "ok"
    monkeypatch.setitem(sys.modules, "engine.asking.loader", loader)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the snippet puts the checkout on it
    for failure in failing["failures"]:
        ce = failure["counterexample"]
        with contextlib.suppress(AssertionError):  # "ok" is not an answer: the snippet's check fails
            exec(compile(failure["replay"], "<replay>", "exec"), {})
        impl, data, kwargs = calls.pop()
        assert impl == STUB and kwargs == {"opset": failure["version"], **ce["attributes"]}
        assert list(data.shape) == ce["input"]["shape"] and data.dtype == spec.catalogue()[ce["input"]["type"]].dtype
        readback = [str(float(v)) if data.dtype.kind in "fV" else str(v) for v in data.reshape(-1).tolist()]
        assert [str(float(v)) if data.dtype.kind in "fV" else v for v in ce["input"]["values"]] == readback


def test_replay_snippet_runs_against_the_real_plugin_loader(failing: dict, capsys, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    bf16 = next(f for f in failing["failures"] if f["type"] == "bfloat16")
    exec(compile(bf16["replay"], "<replay>", "exec"), {})
    assert capsys.readouterr().out.strip() == "[1]"  # the stub is a correct ArgMin


def test_junit_has_a_suite_per_version_and_a_case_per_clause(failing: dict) -> None:
    root = ET.fromstring(to_junit(failing))
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert list(suites) == ["ArgMin-1", "ArgMin-11", "ArgMin-12", "ArgMin-13"]
    for number in (1, 11, 12, 13):
        assert int(suites[f"ArgMin-{number}"].get("tests")) == len(spec.load(number).clauses)
    c5 = next(c for c in suites["ArgMin-13"].iter("testcase") if c.get("name") == "C5 minimum")
    assert "-3.3895313892515355e+38" in c5.find("failure").text
    crash = next(c for c in suites["ArgMin-12"].iter("testcase") if c.get("name") == "C1 accepts")
    assert crash.find("error") is not None
    assert suites["ArgMin-1"].get("failures") == "0" and suites["ArgMin-1"].get("errors") == "0"


def _regressed_run():
    raw = passing_run()
    ce = Counterexample(tensor([2.0, 1.0], "float"), {}, tensor([1], "int64", [1]), tensor([0], "int64", [1]),
                        "not-a-minimum", "index 0 is not a minimum")
    raw.results.append(CaseResult(13, "float", "property", "semantic", "fail", ["C1", "C5"], "C5", [], "t", 0.0, ce))
    raw.census = [dataclasses.replace(raw.census[0], fits=["nan-ignored"])]
    return raw


def test_compare_flags_a_regression() -> None:
    old, new = aggregate(passing_run()), aggregate(_regressed_run())
    result = compare(old, new)
    assert result["regression"] is True
    assert result["verdicts"] == [
        {"version": 13, "before": "conformant", "after": "non-conformant", "already_in_old": False,
         "regression": True}]
    assert {(f["what"], f["name"]) for f in result["newly_failing"]} == {("clause", "C5"), ("type", "float")}
    assert result["census"][0]["before"] == "nan-is-min" and result["census"][0]["after"] == "nan-ignored"
    back = compare(new, old)
    assert back["regression"] is False and {f["name"] for f in back["newly_passing"]} == {"C5", "float"}


def test_compare_command_exit_status_and_html(tmp_path: Path, capsys) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(aggregate(passing_run())), encoding="utf-8")
    new.write_text(json.dumps(to_json(_regressed_run())), encoding="utf-8")  # a raw run works too
    assert main(["compare", str(old), str(new), "--html", str(tmp_path / "cmp.html")]) == 1
    out = capsys.readouterr().out
    assert "ArgMin-13: conformant -> non-conformant  REGRESSION" in out
    html = (tmp_path / "cmp.html").read_text(encoding="utf-8")
    assert 'data-regression="true"' in html and "<script" not in html
    assert main(["compare", str(new), str(old)]) == 0
    assert main(["compare", str(old), str(old)]) == 0


def test_render_command_and_bad_input(tmp_path: Path, capsys) -> None:
    raw = tmp_path / "raw.json"
    raw.write_text(json.dumps(to_json(failing_run())), encoding="utf-8")
    assert main(["render", str(raw), "--out", str(tmp_path / "out"), "--lang", "zh-TW"]) == 0
    assert "不符合" in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert main(["render", str(tmp_path / "out" / "report.json"), "--out", str(tmp_path / "again")]) == 0
    capsys.readouterr()
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    assert main(["render", str(tmp_path / "bad.json"), "--out", str(tmp_path / "x")]) == 2
    assert main(["compare", str(tmp_path / "missing.json"), str(raw)]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2 and all(line.startswith("error: ") for line in errors)


def test_environment_collect_gathers_versions_and_spec_hash() -> None:
    sandbox = {"mechanism": None, "denies": [], "reason": "--sandbox off"}
    environment = collect({"impl": STUB, "module": "stub_impl", "package_version": None}, suite_state(), sandbox)
    assert environment["impl"] == STUB and environment["spec_sha256"] == spec.files_digest()
    assert environment["sandbox"] == sandbox
    assert environment["packages"]["numpy"] == np.__version__
    assert environment["git_commit"] is None or len(environment["git_commit"]) == 40
    assert isinstance(environment["python"], str) and environment["platform"]


def test_junit_carries_times_and_the_certificate(failing: dict) -> None:
    root = ET.fromstring(to_junit(failing))
    suites = list(root.iter("testsuite"))
    assert all(float(s.get("time")) > 0 for s in suites) and float(root.get("time")) > 0
    cases = list(root.iter("testcase"))
    assert all(c.get("time") is not None for c in cases)
    c5 = next(c for c in suites[-1].iter("testcase") if c.get("name") == "C5 minimum")
    assert float(c5.get("time")) == pytest.approx(next(
        c["seconds"] for c in failing["clauses"] if (c["version"], c["id"]) == (13, "C5")))
    properties = {p.get("name"): p.get("value") for p in suites[0].find("properties")}
    assert properties["implementation"] == STUB and properties["profile"] == "quick" and properties["seed"] == "12345"
    assert properties["spec_sha256"] == "0" * 64 and properties["suite_commit"] == ENVIRONMENT["git_commit"]
    assert properties["certificate"].startswith("Quick smoke run, not a certificate: Only the certify profile")
    assert properties["results_digest"] == failing["certificate"]["results_digest"]
    assert properties["versions"] == "1,11,12,13" and properties["types"] == ""


def test_raw_results_are_gzipped_and_older_plain_files_still_read(tmp_path: Path, capsys) -> None:
    raw = failing_run()
    path = save(raw, tmp_path / "new")
    assert path.name == "raw.json.gz" and path.read_bytes()[:2] == b"\x1f\x8b"
    assert load(tmp_path / "new") == raw and load(path) == raw
    assert save(raw, tmp_path / "new").read_bytes() == path.read_bytes()  # no time stamp inside
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "raw.json").write_text(json.dumps(to_json(raw)), encoding="utf-8")
    assert load(tmp_path / "old") == raw
    assert main(["compare", str(tmp_path / "old" / "raw.json"), str(path)]) == 0
    assert main(["render", str(path), "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    (tmp_path / "cut.json.gz").write_bytes(path.read_bytes()[:100])
    assert main(["render", str(tmp_path / "cut.json.gz"), "--out", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err.startswith("error: ") and not (tmp_path / "x").exists()


def test_matrix_page_puts_three_runs_side_by_side(tmp_path: Path) -> None:
    runs = {"ort": refusing_run(), "stub": failing_run(), "passing": passing_run()}
    for name, raw in runs.items():
        write_reports(raw, tmp_path / name)
    out = tmp_path / "pages" / "matrix.html"
    assert main(["matrix", str(tmp_path / "ort"), str(tmp_path / "stub" / "report.json"), str(tmp_path / "passing"),
                 "--out", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "<script" not in html and "default-src 'none'" in html
    assert re.findall(r'<th data-impl="([^"]+)"', html) == ["onnxruntime", STUB, STUB]
    # Verdicts per version and column, as each run's report states them.
    verdicts = re.findall(r'data-version="(\d+)" data-verdict="([a-z-]+)"', html)
    assert verdicts == [("1", "non-conformant"), ("1", "conformant"), ("11", "non-conformant"),
                        ("12", "non-conformant"), ("12", "conformant"), ("13", "conformant"),
                        ("13", "non-conformant"), ("13", "conformant")]
    # A type row where some run failed; every cell links into that run's own report, to an anchor it has.
    row = html[html.index('id="v13-C1"'):]
    row = row[:row.index('class="clause-row')]
    assert "int16" in row and "bfloat16" in row and "float16" not in row.replace("bfloat16", "")
    links = re.findall(r'href="([^"#]+)#([^"]+)"', html)
    assert links
    for target, anchor in links:
        page = (out.parent / target).resolve()
        assert page.is_file(), target
        assert f'id="{anchor}"' in page.read_text(encoding="utf-8"), (target, anchor)
    assert {target.split("/")[1] for target, _ in links} == {"ort", "stub", "passing"}


# --- profiles and clause provenance ----------------------------------------------------------------

def _rank0_accepted_run():
    """ArgMin-12 passing; ArgMin-13 failing only the inferred zero-size clause (C9) and computing a
    rank-0 input (C11, inferred: strictness, never the headline); quick profile."""
    raw = passing_run()
    ce = Counterexample(tensor([1.0], "float", []), {}, "must raise (rejection)", tensor([0], "int64", []),
                        "missing-rejection", "float input of shape [] must be rejected under C11")
    raw.results.append(CaseResult(13, "float", "rejection", "rejection", "missing-rejection", ["C11"], "C11",
                                  ["rank:0"], "t", 0.0, ce))
    empty = Counterexample(tensor([], "float", [0, 2]), {"axis": 1}, tensor([], "int64", [0, 1]),
                           "raised: RuntimeError: empty input", "error", "valid input answered with raised")
    raw.results.append(CaseResult(13, "float", "property", "semantic", "error", ["C1", "C9"], "C9",
                                  ["zero-size:yes"], "t", 0.0, empty, ["C9"], "error"))
    info = dataclasses.replace(raw.info, profile_label=profiles.LABELS["quick"],
                               profile_description=profiles.describe("quick"))
    return dataclasses.replace(raw, info=info)


def test_clauses_carry_their_source_and_a_verdict_resting_on_inferred_clauses_says_so() -> None:
    raw = _rank0_accepted_run()
    document = aggregate(raw)
    _validate(document)
    versions = {v["version"]: v for v in document["versions"]}
    assert (versions[12]["verdict"], versions[12]["inferred_only"]) == ("conformant", False)
    assert (versions[13]["verdict"], versions[13]["inferred_only"]) == ("non-conformant", True)
    clauses = {(c["version"], c["id"]): c for c in document["clauses"]}
    rank0, axis = clauses[13, "C11"], clauses[13, "C10"]
    assert rank0["basis"] == "inferred" and rank0["reasoning"]["en"].startswith("For r = 0 the range")
    assert axis["basis"] == "model-constraint" and axis["reasoning"] == {}
    assert axis["quotes"] == [{"in": "attribute:axis", "text": "Accepted range is [-r, r-1] where r = rank(data)."}]
    assert document["failures"][0]["basis"] == "inferred"
    assert document["run"]["profile_label"] == {"en": "smoke test", "zh-TW": "冒煙測試"}
    lines = summary_lines(raw, {})
    assert lines[1].startswith("  quick = smoke test: the special-value floor, then 32 generated cases per test")
    v12, v13 = (next(line for line in lines if line.startswith(f"  ArgMin-{n}:")) for n in (12, 13))
    assert "[quick profile: smoke test]" in v12 and "[quick profile: smoke test]" in v13
    assert "NON-CONFORMANT (C9: float raised an error) (all inferred, not stated by the ONNX text" in v13, v13
    assert "inferred" not in v12 and "lenient: computes rank-0 inputs (C11)" in lines[lines.index(v13) + 1]
    mixed = dataclasses.replace(raw, results=[*raw.results, dataclasses.replace(raw.results[-1], clause="C5")])
    assert not aggregate(mixed)["versions"][1]["inferred_only"], "C5 is stated: not only inferred"


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_the_html_names_the_profile_and_each_clause_basis(lang: str) -> None:
    page = render_report(aggregate(_rank0_accepted_run()), lang)
    label = "smoke test" if lang == "en" else "冒煙測試"
    assert page.count(f"quick {'profile' if lang == 'en' else '設定檔'}") >= 2 and label in page
    assert messages()[lang]["inferred-only"] in page
    assert page.count('class="note basis-inferred"') >= 1 and page.count('class="note basis-stated"') >= 10
    assert "<q lang=\"en\" translate=\"no\">Unrecognized attribute: </q>" in page


def test_a_model_form_without_cases_at_a_version_renders_as_a_dash() -> None:
    """A run narrowed to the census (-k census) asks in the first form only: the forms table shows
    the others as not run instead of failing to render."""
    raw = passing_run()
    info = dataclasses.replace(raw.info, forms=["symbolic", "static"])
    raw = dataclasses.replace(raw, info=info, results=[dataclasses.replace(r, form="symbolic") for r in raw.results])
    html = render_report(aggregate(raw))
    assert 'data-form="static"' in html and 'data-form="symbolic"' in html
