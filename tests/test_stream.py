"""Results streamed to disk: what a killed run leaves is read back (a failure found before
shrinking included), set aside as a run marked incomplete where the next run does not overwrite
it, never taken from a run still writing it, and rebuilt into reports by
``python -m reports rebuild DIR``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from reports.__main__ import main
from results import RAW, CaseResult, RunInfo, dumps, load, stream, to_json
from results.records import CensusRecord, Tensor
from tests.report_fixtures.runs import ENVIRONMENT, failing_run

INFO = RunInfo(impl="tests/report_fixtures/stub_impl.py:fn", versions=[13], type_names=None, profile="quick", seed=1,
               started="2026-01-02T03:04:05+00:00")
BY = "a test"


def _killed_run(report_dir: Path, results: list[CaseResult], found: list[CaseResult] = ()) -> None:
    """A stream as a run killed mid-way leaves it: header, records, the lock released."""
    stream.start(report_dir, INFO, ENVIRONMENT).close()
    writer = stream.Writer(report_dir, "main")
    for result in results:
        writer.result(result)
    for result in found:
        writer.found(result)
    writer.close()


@pytest.fixture
def records() -> tuple[list[CaseResult], CaseResult]:
    """Some passes, and one failure with its counterexample."""
    results = failing_run().results
    failure = next(r for r in results if r.counterexample is not None)
    return [r for r in results if r.outcome == "pass"][:20], failure


def test_every_complete_record_is_read_back_and_a_cut_line_is_dropped(tmp_path: Path, records) -> None:
    passes, failure = records
    _killed_run(tmp_path, [*passes, failure])
    with (stream.folder(tmp_path) / "main.jsonl").open("a", encoding="utf-8") as cut:
        cut.write('{"kind": "result", "record": {"version": 13, "type_na')  # the write in flight at the kill
    run = stream.read(tmp_path)
    assert run.results == [*passes, failure]
    assert run.info == INFO


def test_a_failure_found_before_shrinking_counts_until_its_test_ends(tmp_path: Path, records) -> None:
    passes, failure = records
    found = dataclasses.replace(failure, counterexample=dataclasses.replace(failure.counterexample, minimized=False))
    _killed_run(tmp_path, passes, [found])
    assert stream.read(tmp_path).results == [*passes, found]  # killed while shrinking: the failure as found

    _killed_run(tmp_path, [*passes, failure], [found])
    assert stream.read(tmp_path).results == [*passes, failure]  # the test ended: only its smallest failure


def test_a_killed_run_is_set_aside_marked_incomplete(tmp_path: Path, records) -> None:
    passes, failure = records
    _killed_run(tmp_path, [*passes, failure])
    (tmp_path / "raw.json").write_text("the reports of an earlier, finished run", encoding="utf-8")
    run, folder = stream.set_aside(tmp_path, BY)
    assert folder == tmp_path / "incomplete-20260102-030405"
    assert not stream.exists(tmp_path)
    assert (tmp_path / "raw.json").read_text(encoding="utf-8") == "the reports of an earlier, finished run"
    saved = load(folder)
    assert saved.results == [*passes, failure] == run.results
    assert saved.info.complete is False
    assert saved.info.incomplete_reason.endswith("killed, e.g. by SIGKILL or the out-of-memory killer); recovered "
                                                 "from its stream by a test")
    assert saved.info.duration_s > 0  # up to its last record, not the 0 s its header was written with
    assert stream.set_aside(tmp_path, BY) is None  # nothing left to recover

    _killed_run(tmp_path, passes)  # a second run with the same start second keeps the first
    assert stream.set_aside(tmp_path, BY)[1] == tmp_path / "incomplete-20260102-030405-2"


def test_the_stream_of_a_live_run_is_never_taken(tmp_path: Path) -> None:
    lock = stream.start(tmp_path, INFO, ENVIRONMENT)
    try:
        with pytest.raises(stream.InUse, match="another run is writing its results there"):
            stream.set_aside(tmp_path, BY)
        with pytest.raises(stream.InUse):
            stream.start(tmp_path, INFO, ENVIRONMENT)
        assert stream.exists(tmp_path)
    finally:
        lock.close()
    assert stream.set_aside(tmp_path, BY) is not None  # its process gone, the lock is free


def test_rebuild_writes_reports_marked_incomplete(tmp_path: Path, records, capsys) -> None:
    passes, failure = records
    _killed_run(tmp_path, [*passes, failure])
    assert main(["rebuild", str(tmp_path)]) == 0
    folder = tmp_path / "incomplete-20260102-030405"
    printed = capsys.readouterr().out
    for name in (RAW, "report.html", "report.json", "junit.xml"):
        assert str(folder / name) in printed and (folder / name).is_file()
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert report["run"]["complete"] is False
    assert "python -m reports rebuild" in report["run"]["incomplete_reason"]
    assert report["run"]["cases_run"] == len(passes) + 1
    assert 'id="incomplete"' in (folder / "report.html").read_text(encoding="utf-8")


def _nothing(report_dir: Path) -> None:
    return None


def _live(report_dir: Path):
    return stream.start(report_dir, INFO, ENVIRONMENT)


def _damaged(report_dir: Path) -> None:
    stream.start(report_dir, INFO, ENVIRONMENT).close()
    (stream.folder(report_dir) / stream.HEADER).write_text("{", encoding="utf-8")


@pytest.mark.parametrize(("prepare", "words"), [
    (_nothing, ["no unfinished run to rebuild", "nox -s render --"]),
    (_live, ["another run is writing"]),
    (_damaged, ["cannot be read", "JSONDecodeError"]),
], ids=["no-stream", "live-run", "damaged-header"])
def test_rebuild_without_a_stream_to_take_exits_2_with_one_line(prepare, words: list[str], tmp_path: Path,
                                                                capsys) -> None:
    lock = prepare(tmp_path)
    try:
        assert main(["rebuild", str(tmp_path)]) == 2
    finally:
        if lock is not None:
            lock.close()
    line, = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: ") and all(word in line for word in words)


def test_records_are_written_as_their_plain_json(records) -> None:
    """``dumps`` (the stream's and raw.json.gz's writer) gives the very text of json.dumps(to_json(...))."""
    passes, failure = records
    census = CensusRecord(13, "float", "C14", Tensor("float", [2], ["nan", "-0.0"]), {"axis": 0}, "raised: E",
                          ["raised"], "raised", None, True, "another-process", ["wrong-shape"])
    for record in (passes[0], failure, census, INFO):
        assert dumps(record) == json.dumps(to_json(record), ensure_ascii=False)
        assert dumps({"kind": "result", "record": record}) == json.dumps({"kind": "result", "record": to_json(record)},
                                                                          ensure_ascii=False)
    with pytest.raises(TypeError):
        dumps({"not a record": object()})
