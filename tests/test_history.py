"""The release history page (reports.history): one runtime's releases, oldest first, with a
release-dependent bug marked where it appears and where it is fixed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from reports import write_reports
from reports.__main__ import main
from results import CaseResult, RawRun, RunInfo
from tests.report_fixtures.runs import ENVIRONMENT, _failure, _passes, _rejections, tensor

TIED = tensor([1.1754944e-38] + [0.0] * 15, "float")  # the tie of two zeros: the first (index 1) is required


def release(version: str, tie_bug: bool) -> RawRun:
    """ArgMin-12 and -13 on float and float16 at one release; with ``tie_bug``, the float tie of
    ArgMin-13 answers the last zero instead of the first."""
    results = []
    for opset in (12, 13):
        for dtype in ("float", "float16"):
            results += _passes(opset, dtype, 4)
            results += [CaseResult(opset, dtype, "property", "semantic", "pass", ["C6"], None,
                                   [f"type:{dtype}", "ties:adjacent"], f"suites/test_semantic.py::test_ties[{opset}]")]
        results += _rejections(opset)
    if tie_bug:
        results.append(_failure(13, "float", "C6", "wrong-tie", TIED, {"axis": 0}, tensor([1], "int64", [1]),
                                tensor([15], "int64", [1]), "tied zeros: the first is required"))
    info = RunInfo(impl="fakert", versions=[12, 13], type_names=["float", "float16"], profile="quick", seed=1,
                   started="2026-12-01T10:00:00+00:00", duration_s=1.0)
    return RawRun(info, {**ENVIRONMENT, "impl": "fakert", "version": version}, results, [])


def test_a_bug_of_one_release_appears_and_is_fixed_on_the_page(tmp_path: Path) -> None:
    # Given newest first: the page orders releases by number, not by argument (10.0 after 9.1).
    releases = {"10.0.0": False, "9.1.0": True, "1.2.0": False}
    for number, bug in releases.items():
        write_reports(release(number, bug), tmp_path / number)
    out = tmp_path / "page" / "history.html"
    assert main(["history", *(str(tmp_path / number) for number in releases), "--out", str(out)]) == 0

    data = json.loads(out.with_suffix(".json").read_text())
    assert data["releases"] == ["1.2.0", "9.1.0", "10.0.0"]
    assert [(r["version"], r["clause"], r["type"]) for r in data["rows"]] == [(13, "C6", "float")]
    assert data["rows"][0]["outcomes"] == ["pass", "fail", "pass"]
    assert data["rows"][0]["marks"] == [None, "appears", "fixed"]

    html = out.read_text(encoding="utf-8")
    assert "<script" not in html and "default-src 'none'" in html
    assert re.findall(r'<th data-release="([^"]+)"', html) == ["1.2.0", "9.1.0", "10.0.0"]
    marks = re.findall(r'data-outcome="([a-z-]+)" data-mark="([a-z]+)"', html)
    assert marks == [("fail", "appears"), ("pass", "fixed")]
    # Each cell links into its own release's report, at an anchor that report has.
    links = re.findall(r'href="([^"#]+)#([^"]+)"', html)
    assert [target for target, _ in links] == [f"../{n}/report.html" for n in ("1.2.0", "9.1.0", "10.0.0")]
    for target, anchor in links:
        assert f'id="{anchor}"' in (out.parent / target).read_text(encoding="utf-8")


def test_releases_that_all_pass_give_an_empty_history(tmp_path: Path) -> None:
    for number in ("1.0", "2.0"):
        write_reports(release(number, False), tmp_path / number)
    out = tmp_path / "history.html"
    assert main(["history", str(tmp_path / "1.0"), str(tmp_path / "2.0"), "--out", str(out)]) == 0
    assert json.loads(out.with_suffix(".json").read_text())["rows"] == []
    assert "Every release passed" in out.read_text(encoding="utf-8")


def test_runs_of_one_release_under_two_caps_are_marked_within_their_cap(tmp_path: Path) -> None:
    """``--isas avx2,native``: a column per (release, cap); the tie bug shows under the cap only,
    and a mark compares a release with the one before it under the same cap, never across caps."""
    capped = {"variable": "ONEDNN_MAX_CPU_ISA", "value": "AVX2", "by": "--isa"}
    folders = []
    for number in ("1.0.0", "2.0.0"):
        for cap in (capped, None):
            run = release(number, tie_bug=cap is not None and number == "2.0.0")
            run.environment["isa_cap"] = cap
            folders.append(write_reports(run, tmp_path / f"{number}-{'avx2' if cap else 'native'}")["html"].parent)
    out = tmp_path / "history.html"
    assert main(["history", *map(str, folders), "--out", str(out)]) == 0
    data = json.loads(out.with_suffix(".json").read_text())
    assert data["releases"] == ["1.0.0", "1.0.0", "2.0.0", "2.0.0"] and data["isa_differs"] == ["cap"]
    assert [run["isa"]["cap"] for run in data["runs"]] == [capped, None, capped, None]
    assert data["rows"][0]["outcomes"] == ["pass", "pass", "fail", "pass"]
    assert data["rows"][0]["marks"] == [None, None, "appears", None]
    assert 'data-isa-cap="AVX2"' in out.read_text(encoding="utf-8")
