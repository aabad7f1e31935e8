"""Shards, their merge and the baseline: ``--shard K/N`` runs part of exactly the run one machine
would make, ``python -m reports merge`` makes that run's report from the parts (refusing parts of
different runs), and ``--baseline`` turns a run's exit status into "is any failure new"."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from engine.asking.loader import UsageError
from engine.config import shards
from engine.config.options import validate
from reports import aggregate, write_reports
from reports.folders import baseline
from reports.folders.verify import CannotVerify, counted, verify
from results import load, save
from tests.report_fixtures.runs import failing_run, passing_run

ROOT = Path(__file__).resolve().parent.parent
# A small run of each: a fast correct runtime, and a zoo entry with two bugs (int32 answers, C2;
# doubles computed as floats, C5).
RUNS = {"onnxruntime": ["--impl", "onnxruntime", "--dtypes", "float,int16"],
        "two-bugs": ["--impl", "zoo.broken_values:int32_answers_and_doubles_as_float", "--dtypes", "double,int32"]}
COMMON = ["--versions", "13", "--profile", "quick", "--seed", "5", "-n", "0"]


def _suite(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "suites", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)


def _reports(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reports", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def _document(folder: Path) -> dict:
    return json.loads((folder / "report.json").read_text(encoding="utf-8"))


def _untimed(value: object) -> object:
    """A report part without the implementation's seconds, which no two runs share."""
    if isinstance(value, dict):
        return {key: _untimed(item) for key, item in value.items() if key != "seconds"}
    return [_untimed(item) for item in value] if isinstance(value, list) else value


def same_run(whole: dict, merged: dict) -> None:
    """The merged report holds the verdicts, counts, failure cards and results digest of the whole run."""
    for key in ("versions", "failures", "cards", "clauses", "matrix", "census", "coverage"):
        assert _untimed(merged[key]) == _untimed(whole[key]), key
    for key in ("cases", "results_digest", "status", "reasons"):
        assert merged["certificate"][key] == whole["certificate"][key], key


@pytest.mark.parametrize("value", ["0/4", "5/4", "x", "1/0", "2"])
def test_a_bad_shard_value_exits_2_with_one_line(value: str, tmp_path: Path) -> None:
    result = _suite("--impl", "zoo.correct:numpy_argmin", "--shard", value, "--report-dir", str(tmp_path))
    assert result.returncode == 2, result.stdout[-2000:]
    line, = result.stderr.strip().splitlines()
    assert line.startswith("error: --shard") and "--shard 1/" in line and "Traceback" not in result.stdout


@pytest.mark.parametrize("count", [1, 3, 8])
@pytest.mark.parametrize("options", [{"profile": "certify"}, {"impl": "zoo.correct:numpy_argmin", "versions": "1,13"}])
def test_the_shards_hold_every_test_of_the_plan_once(count: int, options: dict) -> None:
    settings = validate(options)
    plan = [shards.test_key(task) for task in shards.whole_plan(settings)]
    cut = [shards.record(settings, shards.Shard(k, count))["tests"] for k in range(1, count + 1)]
    assert sorted(key for part in cut for key in part) == sorted(plan)
    assert cut == [shards.record(settings, shards.Shard(k, count))["tests"] for k in range(1, count + 1)]


def test_eight_certify_shards_are_balanced_by_expected_cost_not_by_count() -> None:
    """The property and census tests of a certify run cost ten times the others: counting tests
    would put many of them in one part. By expected cost the dearest part is within 1.3 of the mean."""
    settings = validate({"profile": "certify"})
    parts = shards.parts(shards.whole_plan(settings), 8, "certify")
    loads = [sum(shards.cost(task, "certify") for task in part) for part in parts]
    assert max(loads) / statistics.mean(loads) <= 1.3
    assert len({len(part) for part in parts}) > 1  # not a cut by count


_BUILT: dict[str, dict[str, Path]] = {}


def _build(kind: str, root: Path) -> dict[str, Path]:
    """The whole run and its two shards, one after the other, and the shards merged."""
    folders = {name: root / name for name in ("whole", "1", "2", "merged")}
    whole = _suite(*RUNS[kind], *COMMON, "--report-dir", str(folders["whole"]))
    assert whole.returncode in (0, 1), whole.stdout[-3000:] + whole.stderr[-2000:]
    for k in (1, 2):
        part = _suite(*RUNS[kind], *COMMON, "--shard", f"{k}/2", "--report-dir", str(folders[str(k)]))
        assert part.returncode in (0, 1), part.stdout[-3000:] + part.stderr[-2000:]
        assert f"SHARD {k} OF 2" in part.stdout and f"shard {k} of 2 of a run, not a certificate" in part.stdout
    merged = _reports("merge", str(folders["2"]), str(folders["1"]), "--out", str(folders["merged"]))
    assert merged.returncode == whole.returncode, merged.stdout + merged.stderr
    return {"kind": kind, **folders}


def _runs(kind: str, factory: pytest.TempPathFactory) -> dict[str, Path]:
    if kind not in _BUILT:
        _BUILT[kind] = _build(kind, factory.mktemp(kind))
    return _BUILT[kind]


@pytest.fixture(params=sorted(RUNS))
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _runs(request.param, tmp_path_factory)


@pytest.fixture
def two_bugs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _runs("two-bugs", tmp_path_factory)


@pytest.mark.e2e
def test_a_shard_says_it_is_a_part_in_every_report(runs: dict[str, Path]) -> None:
    document = _document(runs["1"])
    assert document["certificate"]["shard"] == {"index": 1, "count": 2}
    assert document["certificate"]["status"] == "not-a-certificate" and "shard" in document["certificate"]["reasons"]
    html = (runs["1"] / "report.html").read_text(encoding="utf-8")
    assert 'id="shard"' in html and "shard 1 of 2 of a run, not a certificate" in html


@pytest.mark.e2e
def test_merged_shards_are_the_run_one_machine_makes(runs: dict[str, Path]) -> None:
    whole, merged = _document(runs["whole"]), _document(runs["merged"])
    same_run(whole, merged)
    assert merged["certificate"]["merged"] == {"merged": [1, 2], "missing": []}
    assert merged["certificate"]["shard"] is None
    if runs["kind"] == "two-bugs":
        assert {card["clause"] for card in merged["cards"] if card["role"] == "headline"} == {"C2", "C5"}
    checks = {check.name: check.ok for check in verify(runs["merged"])}
    assert checks["results"] and checks["derived"] and checks["documents"], checks


def _altered(source: Path, target: Path, **changes: object) -> Path:
    run = load(source)
    save(replace(run, info=replace(run.info, **changes)), target)
    return target


@pytest.mark.e2e
def test_merge_refuses_shards_of_different_runs_and_duplicates(runs: dict[str, Path], tmp_path: Path) -> None:
    other_seed = _altered(runs["2"], tmp_path / "seed", seed=6)
    for args, words in (([runs["1"], other_seed], "seed 5"), ([runs["1"], runs["1"]], "shard 1 of 2 given twice"),
                        ([runs["1"], runs["whole"]], "a whole run, not a shard")):
        result = _reports("merge", *map(str, args), "--out", str(tmp_path / "out"))
        assert result.returncode == 2, result.stdout
        line, = result.stderr.strip().splitlines()
        assert line.startswith("error: ") and words in line, line


@pytest.mark.e2e
def test_a_missing_shard_makes_an_incomplete_report_and_no_certificate(runs: dict[str, Path], tmp_path: Path) -> None:
    result = _reports("merge", str(runs["1"]), "--out", str(tmp_path))
    assert result.returncode == 2 and "INCOMPLETE RUN: shard 2 of 2 missing" in result.stdout
    document = _document(tmp_path)
    assert document["run"]["complete"] is False and "incomplete" in document["certificate"]["reasons"]
    assert document["certificate"]["merged"] == {"merged": [1], "missing": [2]}


@pytest.mark.e2e
def test_verify_reruns_a_merged_report_by_shard_and_a_shard_as_itself(two_bugs: dict[str, Path]) -> None:
    """``verify --rerun --shard 2/2`` on the merged report runs that part only and finds the
    report's results of its tests; a shard's own report is rerun as that shard."""
    by_shard = {check.name: check for check in verify(two_bugs["merged"], rerun=True, say=str, shard="2/2")}
    assert by_shard["rerun"].ok, by_shard["rerun"].message
    assert f"({counted(load(two_bugs['2']).results)})" in by_shard["rerun"].message
    itself = {check.name: check for check in verify(two_bugs["1"], rerun=True, say=str)}
    assert itself["rerun"].ok, itself["rerun"].message
    with pytest.raises(CannotVerify, match="the report is shard 1/2 itself"):
        list(verify(two_bugs["1"], rerun=True, say=str, shard="2/2"))


def test_a_baseline_is_a_report_folder_or_file_and_is_compared_by_root_cause(tmp_path: Path) -> None:
    """--baseline takes a report folder as its report.json. Failures are told one line per root
    cause, as the report's cards group them: one bug on several types and versions is one new, known
    or fixed line naming them all, however many (version, clause, type, problem) entries it holds."""
    run = failing_run()
    write_reports(run, tmp_path / "report")
    document = aggregate(run)
    headline = [card for card in document["cards"] if card["role"] == "headline"]
    spread = next(card for card in headline if len(card["types"]) > 1)  # C5: int64, uint64 and bfloat16
    assert validate({"baseline": str(tmp_path / "report")}).baseline == tmp_path / "report"
    with pytest.raises(UsageError, match="a folder without a report"):
        validate({"baseline": str(tmp_path)})
    source, expected = baseline.read(tmp_path / "report")
    assert source.startswith("report.json (sha256 ") and set(expected) == baseline.failures(document)
    fresh = baseline.compare(document, "none.json", {})
    assert len(fresh["new"]) == len(expected) > len(headline)  # the per-failure list is kept as it was
    new = [line for line in baseline.lines(fresh) if line.startswith("  new failure: ")]
    assert len(new) == len(headline) and baseline.lines(fresh)[0].endswith(
        f"{len(expected)} NEW in {len(headline)} root causes (exit status 1)")
    shown = next(line for line in new if spread["clause"] in line)
    assert all(name in shown for name in spread["types"]) and f"({len(spread['failures'])} failures)" in shown
    known = baseline.compare(document, source, expected)
    assert known["new"] == [] and [c["status"] for c in known["causes"]] == ["known"] * len(headline)
    assert {c["anchor"] for c in known["causes"]} == {card["anchor"] for card in headline}
    (tmp_path / "expected.json").write_text(json.dumps(baseline.expectations(document)), encoding="utf-8")
    fixed = baseline.compare(aggregate(passing_run()), *baseline.read(tmp_path / "expected.json"))
    assert [c["status"] for c in fixed["causes"]] == ["fixed"] * len(headline)  # by the causes the file recorded
    assert len(fixed["fixed"]) == len(expected) and all(c["anchor"] is None for c in fixed["causes"])


@pytest.mark.e2e
def test_a_baseline_fails_only_on_new_failures(two_bugs: dict[str, Path], tmp_path: Path) -> None:
    """A baseline from the run itself: exit 0 and the same NON-CONFORMANT verdicts. One that lacks a
    failure and holds one that does not happen: exit 1, naming the new one and the fixed one."""
    runs = two_bugs
    written = _reports("baseline", str(runs["whole"]), "--out", str(tmp_path / "baseline.json"))
    assert written.returncode == 0, written.stderr
    expected = json.loads((tmp_path / "baseline.json").read_text(encoding="utf-8"))
    same = _reports("merge", str(runs["1"]), str(runs["2"]), "--out", str(tmp_path / "same"),
                    "--baseline", str(tmp_path / "baseline.json"))
    assert same.returncode == 0 and "no new failure" in same.stdout, same.stdout + same.stderr
    document = _document(tmp_path / "same")
    assert [v["verdict"] for v in document["versions"]] == ["non-conformant"]
    assert document["certificate"]["baseline"]["new"] == [] and "baseline.json" in document["certificate"]["baseline"][
        "source"]
    dropped, expected["failures"][0] = expected["failures"][0], {"version": 13, "clause": "C4", "type": "int32",
                                                                 "problem": "index-range"}
    (tmp_path / "older.json").write_text(json.dumps(expected), encoding="utf-8")
    other = _reports("merge", str(runs["1"]), str(runs["2"]), "--out", str(tmp_path / "other"),
                     "--baseline", str(tmp_path / "older.json"))
    new = f"ArgMin-13 {dropped['clause']} {dropped['type']} {dropped['problem']}"
    assert other.returncode == 1 and f"new failure: ArgMin-13 {dropped['clause']} {dropped['problem']}: " \
                                     f"{dropped['type']}" in other.stdout, other.stdout
    assert "fixed: ArgMin-13 C4 index-range: int32" in other.stdout
    assert _document(tmp_path / "other")["certificate"]["baseline"]["new"] == [new]
    bad = _reports("merge", str(runs["1"]), "--out", str(tmp_path / "bad"), "--baseline", str(runs["1"] / "junit.xml"))
    assert bad.returncode == 2 and bad.stderr.startswith("error: --baseline") and len(bad.stderr.splitlines()) == 1


@pytest.mark.e2e
def test_a_run_with_its_own_baseline_exits_0_and_keeps_its_verdict(two_bugs: dict[str, Path], tmp_path: Path) -> None:
    result = _suite(*RUNS["two-bugs"], *COMMON, "--report-dir", str(tmp_path), "--baseline",
                    str(two_bugs["whole"] / "report.json"))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "NON-CONFORMANT" in result.stdout and "no new failure (exit status 0)" in result.stdout
    expected = baseline.failures(_document(two_bugs["whole"]))
    assert _document(tmp_path)["certificate"]["baseline"]["failures"] == len(expected) >= 2
    assert {check.name: check.ok for check in verify(tmp_path)}["derived"]


@pytest.mark.e2e
@pytest.mark.e2e
def test_three_shards_run_side_by_side_and_merge_into_the_single_run(tmp_path: Path) -> None:
    """What a CI matrix does: N shards as separate processes at once, then the merge; the merged
    report is the single run's, and verify checks it like any other."""
    args = [*RUNS["two-bugs"], "--versions", "12,13", "--profile", "quick", "--seed", "9", "-n", "0"]
    whole = _suite(*args, "--report-dir", str(tmp_path / "whole"))
    parts = [subprocess.Popen([sys.executable, "-m", "suites", *args, "--shard", f"{k}/3", "--report-dir",
                               str(tmp_path / f"shard-{k}")], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for k in (1, 2, 3)]
    assert {part.wait(timeout=900) for part in parts} <= {0, 1}  # a part may hold no failing test
    merged = _reports("merge", *(str(tmp_path / f"shard-{k}") for k in (3, 1, 2)), "--out", str(tmp_path / "merged"))
    assert merged.returncode == whole.returncode == 1, merged.stdout + merged.stderr
    same_run(_document(tmp_path / "whole"), _document(tmp_path / "merged"))
    checks = {check.name: check.ok for check in verify(tmp_path / "merged")}
    assert checks["results"] and checks["derived"] and checks["documents"], checks
