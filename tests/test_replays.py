"""Every run's counterexamples asked of the other runs (engine.judging.replays), and the pages that read
the answers (reports.matrix, reports.history): a bug one run's sample missed is still a FAIL in
that run's cell, marked where it was found, and "appears" where it really appears."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from engine.asking.calls import Reply
from engine.asking.isolation import Runner
from engine.judging.replays import counterexamples, judged, replay
from reports import write_reports
from reports.__main__ import main
from results import RawRun, replays
from tests.test_history import release

BUGGY, CORRECT = "zoo.broken_values:ties_last_always", "zoo.correct:numpy_argmin"


def _run(number: str, impl: str, met: bool) -> RawRun:
    """A release whose implementation is ``impl``; ``met``: its sample met the tie bug."""
    raw = release(number, met)
    return replace(raw, info=replace(raw.info, impl=impl))


def _asked(folder: Path, raw: RawRun, others: dict[str, RawRun], root: Path) -> None:
    """What engine.judging.replays writes into ``folder``: the other releases' counterexamples asked of
    ``raw``'s implementation (in-process here; the nox sessions ask in a sandboxed worker)."""
    runner = Runner(raw.info.impl, isolation="none")
    try:
        data = replay(runner, raw, [(other, json.loads((root / n / "report.json").read_text()))
                                    for n, other in others.items()])
    finally:
        runner.close()
    (folder / replays.REPLAYS).write_text(json.dumps(data))


def _history(tmp_path: Path, runs: dict[str, RawRun]) -> dict:
    for number, raw in runs.items():
        write_reports(raw, tmp_path / number)
    for number, raw in runs.items():
        _asked(tmp_path / number, raw, {n: r for n, r in runs.items() if n != number}, tmp_path)
    out = tmp_path / "page" / "history.html"
    assert main(["history", *(str(tmp_path / n) for n in runs), "--out", str(out)]) == 0
    return json.loads(out.with_suffix(".json").read_text())


def test_a_bug_only_the_first_sample_met_fails_in_both_and_appears_at_the_first(tmp_path: Path) -> None:
    runs = {"0.9.0": _run("0.9.0", CORRECT, False), "1.0.0": _run("1.0.0", BUGGY, True),
            "2.0.0": _run("2.0.0", BUGGY, False), "3.0.0": _run("3.0.0", CORRECT, False)}
    data = _history(tmp_path, runs)
    row, = (r for r in data["rows"] if (r["version"], r["clause"], r["type"]) == (13, "C6", "float"))
    assert row["own"] == ["pass", "fail", "pass", "pass"]  # what each sample met
    assert row["outcomes"] == ["pass", "fail", "fail", "pass"]  # where the bug is
    assert row["found_in"] == [[], [], ["1.0.0"], []]
    assert row["marks"] == [None, "appears", None, "fixed"]
    assert data["replays"]["complete"] and data["replays"]["asked"] == 3  # 1.0.0's one card, asked thrice
    html = (tmp_path / "page" / "history.html").read_text(encoding="utf-8")
    assert '(found in <a href="../1.0.0/report.html#v13-C6-float">1.0.0</a>)' in html
    assert 'id="v13-C6-float"' in (tmp_path / "1.0.0" / "report.html").read_text(encoding="utf-8")


def test_without_replays_the_page_says_a_cell_is_only_its_own_sample(tmp_path: Path) -> None:
    runs = {"1.0.0": _run("1.0.0", BUGGY, True), "2.0.0": _run("2.0.0", BUGGY, False)}
    for number, raw in runs.items():
        write_reports(raw, tmp_path / number)
    out = tmp_path / "history.html"
    assert main(["history", *(str(tmp_path / n) for n in runs), "--out", str(out)]) == 0
    data = json.loads(out.with_suffix(".json").read_text())
    assert data["rows"][0]["outcomes"] == ["fail", "pass"] and not data["replays"]["complete"]
    assert "a bug one sample missed can read as a pass" in out.read_text(encoding="utf-8")


def test_a_counterexample_that_cannot_be_asked_is_never_a_pass() -> None:
    raw = _run("1.0.0", BUGGY, True)
    (card, result), = counterexamples(raw, {"failures": [{
        "kind": "semantic", "outcome": "fail", "version": 13, "clause": "C6", "type": "float", "form": None,
        "anchor": "v13-C6-float", "counterexample": {"input": {"values": result_values(raw)}}}]})[0]
    assert card == "v13-C6-float"
    refused = Reply("raised", None, "ValueError: no", 0.0)
    assert judged(result, refused, [])[0] == replays.NOT_ASKED
    assert judged(result, Reply("ok", None, None, 0.0), ["float"])[0] == replays.NOT_ASKED
    assert judged(result, Reply("crash", None, "SIGSEGV", 0.0), [])[0] == replays.FAILS


def result_values(raw: RawRun) -> list[str]:
    return next(r.counterexample.input.values for r in raw.results if r.counterexample is not None)


@pytest.mark.parametrize("entry", [{"source": 1}, "text", {"source": "a", "anchor": "b"}])
def test_replays_json_is_read_as_untrusted(entry: object, tmp_path: Path) -> None:
    good = {"source": "1.0", "anchor": "x", "version": 13, "clause": "C6", "type_name": "float",
            "outcome": "fail", "detail": "C6"}
    (tmp_path / replays.REPLAYS).write_text(json.dumps({"replays": [entry, good]}))
    assert replays.read(tmp_path)["replays"] == [good]
    (tmp_path / replays.REPLAYS).write_text("[1, 2]")
    assert replays.read(tmp_path) is None


def test_compare_does_not_call_a_bug_new_when_its_counterexample_fails_the_old_run(tmp_path: Path, capsys) -> None:
    runs = {"1.0.0": _run("1.0.0", BUGGY, False), "2.0.0": _run("2.0.0", BUGGY, True)}
    for number, raw in runs.items():
        write_reports(raw, tmp_path / number)
    old, new = (str(tmp_path / n) for n in runs)
    assert main(["compare", old, new]) == 1  # the old sample missed the bug: it reads as new
    assert "REGRESSION" in capsys.readouterr().out
    _asked(tmp_path / "1.0.0", runs["1.0.0"], {"2.0.0": runs["2.0.0"]}, tmp_path)
    assert main(["compare", old, new]) == 0
    assert "(its counterexample fails the old run too: not new)" in capsys.readouterr().out


def test_a_folder_whose_report_and_raw_results_disagree_is_not_asked(tmp_path: Path, capsys) -> None:
    """``nox -s replay`` installs for the implementation report.json names; the raw results must name
    the same, or nothing runs."""
    from engine.judging.replays import main as ask
    from results import save

    raw = _run("1.0.0", BUGGY, True)
    write_reports(raw, tmp_path / "run")
    save(replace(raw, info=replace(raw.info, impl="zoo.correct:numpy_argmin")), tmp_path / "run")
    assert ask([str(tmp_path / "run"), "--from", str(tmp_path / "run")]) == 2
    line, = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: ") and "names 'zoo.broken_values:ties_last_always'" in line


def test_a_run_under_a_cap_is_named_alike_where_it_is_asked_and_on_the_pages(tmp_path: Path) -> None:
    """Two columns of one release under two caps are two runs: the name replays.json gives a run is
    the name the matrix, the history and compare look it up by."""
    from engine.judging.replays import label
    from reports.document.aggregate import aggregate
    from reports.pages.compare import _label
    from reports.pages.matrix import label as column_label
    from reports.pages.matrix import matrix

    raw = _run("2024.4.0", BUGGY, True)
    capped = replace(raw, environment={**raw.environment, "isa_cap": {"variable": "ONEDNN_MAX_CPU_ISA",
                                                                       "value": "AVX2", "by": "--isa"}})
    document = aggregate(capped)
    column, = matrix([(document, tmp_path)], tmp_path / "page.html")["columns"]
    assert label(capped) == column_label(column) == _label(document) == "2024.4.0 AVX2"
    assert label(raw) == "2024.4.0"
