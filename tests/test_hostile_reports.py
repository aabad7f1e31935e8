"""Reports are untrusted input: hostile report folders for verify, compare, matrix and
rebuild. Each gets a one-line error and the documented exit status, never a traceback, a
terminal escape or unbounded memory; ``verify --rerun`` runs nothing it has not shown."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import results
from reports import __main__ as cli
from tests import test_verify

ROOT = Path(__file__).resolve().parent.parent
quick = test_verify.quick  # fixture: the report of a correct run
copy = test_verify.copy  # fixture: a copy of it to spoil


def _run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


# --- 5. bounded reads, no symlinks, no escapes, no tracebacks ----------------------------------

def test_a_gzip_bomb_is_refused_at_the_cap(copy: Path, capsys: pytest.CaptureFixture,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """47 MB of gzip holding 10 GiB of zeros took verify to 3.86 GB; here the cap is lowered to
    1 MiB so that the bomb can be small."""
    monkeypatch.setattr(results, "JSON_CAP", 1 << 20)
    (copy / "raw.json.gz").write_bytes(gzip.compress(bytes(4 << 20)))
    for argv in (["verify", str(copy)], ["compare", str(copy / "raw.json.gz"), str(copy)]):
        status, _, err = _run(capsys, *argv)
        assert status == 2 and "decompresses to more than 1 MiB" in _one_line_error(err)


@pytest.mark.e2e
@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="needs RLIMIT_AS (Linux)")
def test_a_gzip_bomb_under_a_memory_limit_is_a_one_line_error(copy: Path) -> None:
    """1.2 GiB of zeros, gzipped (1.2 MB), checked by verify under a 2 GiB address-space limit:
    zlib was asked for one 1 GiB buffer, and a MemoryError traceback ended verify with exit 1."""
    with gzip.open(copy / "raw.json.gz", "wb", compresslevel=1) as bomb:
        for _ in range(12):
            bomb.write(bytes(100 << 20))
    limited = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
               "from reports.__main__ import main; sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", limited, "verify", str(copy)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert re.search(r"decompresses to more than 1024 MiB|ran out of memory", _one_line_error(done.stderr))


@pytest.mark.parametrize("command", ["verify", "compare", "matrix"])
def test_a_report_symlinked_to_dev_zero_is_not_followed(copy: Path, tmp_path: Path, command: str,
                                                        capsys: pytest.CaptureFixture) -> None:
    (copy / "report.json").unlink()
    (copy / "report.json").symlink_to("/dev/zero")
    argv = {"verify": [str(copy)], "compare": [str(copy), str(copy)],
            "matrix": [str(copy), "--out", str(tmp_path / "m.html")]}[command]
    status, _, err = _run(capsys, command, *argv)
    assert status == 2 and "a symbolic link, which is not followed" in _one_line_error(err)


def test_deep_nesting_and_missing_keys_give_status_2_not_a_traceback(copy: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    for argv in (["verify", str(deep)], ["compare", str(deep), str(copy)], ["matrix", str(deep)]):
        status, _, err = _run(capsys, *argv)
        assert status == 2, (argv, err)
        _one_line_error(err)
    document = json.loads((copy / "report.json").read_text())
    del document["versions"]
    (copy / "report.json").write_text(json.dumps(document))
    status, _, err = _run(capsys, "compare", str(copy), str(copy))  # 1 would mean "regression"
    assert status == 2 and "malformed" in _one_line_error(err)


def test_terminal_escapes_in_a_report_never_reach_the_terminal(quick: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture) -> None:
    document = json.loads((quick / "report.json").read_text())
    document["run"]["impl"] = "x\x1b]0;owned\x07\x1b[2K\r\x1b[8mPASS"
    (tmp_path / "report.json").write_text(json.dumps(document))
    status, out, err = _run(capsys, "compare", str(quick), str(tmp_path / "report.json"))
    assert status == 0 and "x?]0;owned??[2K??[8mPASS" in out
    assert not any(c in out + err for c in "\x1b\x07\r")


# --- 6. verify --rerun is safe to type ---------------------------------------------------------

def test_no_rerun_after_a_failed_integrity_check(copy: Path, capsys: pytest.CaptureFixture) -> None:
    """A report naming a .py file shipped in its own folder was rerun (imported in-process) even
    after its results check had failed."""
    (copy / "evil.py").write_text("import pathlib\npathlib.Path(__file__).with_name('RAN').write_text('x')\n"
                                  "def argmin(data, **_): return data\n")
    document = json.loads((copy / "report.json").read_text())
    document["certificate"]["implementation"] = f"{copy / 'evil.py'}:argmin"
    document["certificate"]["isolation"] = "none"
    (copy / "report.json").write_text(json.dumps(document))
    status, _, err = _run(capsys, "verify", str(copy), "--rerun", "--yes")
    assert status == 2 and "not rerun: the derived, documents check(s) failed" in _one_line_error(err)
    assert not (copy / "RAN").exists()


def test_the_rerun_is_shown_and_refused_without_a_terminal_or_yes(copy: Path, capsys: pytest.CaptureFixture,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    status, out, err = _run(capsys, "verify", str(copy), "--rerun")
    assert status == 2 and "pass --yes" in _one_line_error(err)
    *_, shown, answer = out.splitlines()
    assert answer.startswith("NOT VERIFIED: ")  # the checkout check fails here, and the rerun was not made
    assert shown.startswith("rerun: ") and "--impl zoo.correct:numpy_argmin" in shown
    assert "--isolation process --sandbox require" in shown and "--memory-limit" in shown
    assert not Path(shown.split("--report-dir ")[1].split()[0]).exists()  # nothing left behind


def test_the_rerun_command_carries_every_recorded_setting(quick: Path) -> None:
    from reports.folders.verify import rerun_command

    document = json.loads((quick / "report.json").read_text())
    raw = results.load(quick)
    command = rerun_command(document, Path("/tmp/x"), raw.info.memory_limit_bytes)
    value = {command[i]: command[i + 1] for i in range(3, len(command) - 1, 2)}
    assert value["--isolation"] == "process"  # recorded: none; a rerun never runs in-process
    assert value["--sandbox"] == "require"  # and never unsandboxed
    assert value["--memory-limit"] == str(raw.info.memory_limit_bytes)
    assert (value["--profile"], value["--seed"], value["--versions"], value["--dtypes"]) == ("quick", "5", "13",
                                                                                           "float")


# --- 7. counterexamples are covered by the results digest --------------------------------------

def test_a_changed_counterexample_changes_the_results_digest() -> None:
    """A newline planted in a failure's `problem` passed schema, results, derived, checkout and
    documents: counterexamples were outside the digest."""
    from dataclasses import replace

    from results import CaseResult, Counterexample, Tensor
    from results.digest import results_digest

    example = Counterexample(Tensor("float", [2], ["1.0", "0.0"]), {}, Tensor("int64", [1], ["1"]),
                             Tensor("int64", [1], ["0"]), "not-a-minimum", "index 0 is not a minimum")
    failure = CaseResult(version=13, suite="semantic", kind="semantic", type_name="float", outcome="fail",
                         clause="C5", clauses=["C5"], input_digest="0" * 16, answer_digest="1" * 16,
                         counterexample=example)
    planted = replace(failure, counterexample=replace(example, problem="not-a-minimum\nimport os"))
    assert results_digest([failure]) != results_digest([planted])


def test_a_line_break_in_a_problem_field_stays_in_the_replay_comment() -> None:
    from reports.document.replay import _headline
    from results import Counterexample, Tensor

    planted = Counterexample(Tensor("float", [1], ["1.0"]), {}, None, None, "wrong\nimport os; os.system('x')", "")
    line = _headline(13, "C5", planted, "float[1]")
    assert line.startswith("# ") and "\n" not in line and "\\nimport os" in line


def test_a_rerun_that_runs_too_long_is_ended_with_everything_it_started(quick: Path, capsys: pytest.CaptureFixture,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The rerun had no timeout (and kept all its output in memory)."""
    from reports.folders import verify as verifying

    monkeypatch.setattr(verifying, "RERUN_SECONDS", 0.5)
    status, out, err = _run(capsys, "verify", str(quick), "--rerun", "--yes")
    assert status == 2 and "the rerun could not be carried out (no result within 0.5 s)" in _one_line_error(err)
    assert "rerun: " in out


def test_rebuild_does_not_follow_a_symlinked_stream(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from results import stream

    where = stream.folder(tmp_path)
    where.mkdir(parents=True)
    (where / stream.HEADER).symlink_to("/dev/zero")
    status, _, err = _run(capsys, "rebuild", str(tmp_path))
    assert status == 2 and "cannot be read" in _one_line_error(err)
