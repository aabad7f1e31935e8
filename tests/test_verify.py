"""The certificate and ``python -m reports verify`` (``nox -s verify``): an untouched certify report
passes every check; an edited verdict, count, failure, raw result or HTML, a changed spec file and
a non-certify run are each caught by the check that names them; ``--rerun`` reproduces the
results digest of a deterministic implementation."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import spec
from engine.asking.loader import UsageError, located
from engine.asking.sandbox import DENIES
from engine.config import shards
from engine.config.options import run_info, validate
from engine.judging.run import run_all
from generators import profiles
from reports import write_reports
from reports.__main__ import main
from reports.folders.verify import Checkout, rerun_check, verify
from results import HistoryModel, PackNode, RawRun, load, save
from results.digest import answer_digest, input_digest, results_digest
from results.records import NEEDS_HISTORY

ROOT = Path(__file__).resolve().parent.parent
COMMIT = "c0ffee" + "0" * 34  # the checkout a test report claims, and the verifier is told it is on
CLEAN = Checkout(COMMIT, False, spec.files_digest())
ZOO = "zoo.correct:numpy_argmin"
SANDBOXED = {"mechanism": "bubblewrap 0.11.0", "denies": list(DENIES), "reason": None}


def _report(folder: Path, profile: str, sandbox: dict = SANDBOXED, **options: str) -> Path:
    """An in-process run of a correct zoo entry at ArgMin-13 on float, written as a run writes it,
    from a clean checkout at COMMIT, recorded as sandboxed (so only the run's own properties decide
    its certificate)."""
    profiles.register()
    settings = validate({"impl": ZOO, "profile": profile, "versions": "13", "dtypes": "float", "isolation": "none",
                         **options})
    session = run_all(settings)
    environment = {"impl": ZOO, "module": "zoo.correct", "package": None, "version": None, "sandbox": sandbox,
                   "git_commit": COMMIT, "git_dirty": False, "spec_sha256": spec.files_digest()}
    raw = RawRun(run_info(settings, 0.0, planned=shards.planned(settings)), environment, session.results,
                 session.census, session.ends)
    save(raw, folder)
    write_reports(raw, folder)
    return folder


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _report(tmp_path_factory.mktemp("quick"), "quick", seed="5")


@pytest.fixture
def copy(quick: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(quick, tmp_path / "report"))


def _checks(folder: Path, here: Checkout = CLEAN) -> dict[str, object]:
    return {check.name: check for check in verify(folder, here=here, say=str)}


def _edit_json(folder: Path, edit) -> None:
    path = folder / "report.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    edit(document)
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")


def test_case_digests_tell_inputs_and_answers_apart() -> None:
    array = np.array([1.0, 2.0], dtype=np.float32)
    assert input_digest(array, {}) != input_digest(array, {"axis": 0})  # omitted differs from the default
    assert input_digest(array, {}) != input_digest(array.astype(np.float64), {})
    assert input_digest(array, {"axis": 0, "keepdims": 1}) == input_digest(array, {"keepdims": 1, "axis": 0})
    ok = answer_digest("ok", np.array([0]), None)
    assert ok != answer_digest("ok", np.array([1]), None) != answer_digest("ok", np.array([0], np.int32), None)
    assert answer_digest("raised", None, "E at 0x7f3a2b1c4d50") == answer_digest("raised", None, "E at 0x55d1e2f3a4b0")
    assert answer_digest("timeout", None, "no answer within 10 s") == answer_digest("timeout", None, "within 3 s")


def _reference_digest(*parts: bytes) -> str:
    """The case digest's definition, spelled out: SHA-256 over length-prefixed parts, 16 hex digits."""
    return hashlib.sha256(b"".join(len(p).to_bytes(8, "little") + p for p in parts)).hexdigest()[:16]


@pytest.mark.parametrize("array", [np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2], np.array(7, np.int8),
                                   np.zeros((0, 3), np.float16), np.array([1.5, -0.0], ml_dtypes.bfloat16),
                                   np.array([2**64 - 1], np.uint64)], ids=str)
def test_case_digests_hash_the_dtype_shape_and_bytes_whatever_the_layout(array: np.ndarray) -> None:
    contiguous = np.ascontiguousarray(array)  # at least 1-d: a rank-0 input digests as shape (1,)
    parts = (array.dtype.name.encode(), repr(contiguous.shape).encode(), contiguous.tobytes())
    assert input_digest(array, {"axis": 0}) == _reference_digest(*parts, b'[["axis", 0]]')
    assert answer_digest("ok", array, None) == _reference_digest(b"ok", *parts)


def test_every_case_carries_digests_and_the_run_digest_ignores_order(quick: Path) -> None:
    raw = load(quick)
    assert all(r.input_digest and r.answer_digest for r in raw.results)
    assert results_digest(raw.results) == results_digest(list(reversed(raw.results)))
    changed = [replace(raw.results[0], outcome="fail"), *raw.results[1:]]
    assert results_digest(changed) != results_digest(raw.results)


def test_an_untouched_certify_report_passes_every_check(tmp_path: Path, capsys, monkeypatch) -> None:
    folder = _report(tmp_path, "certify")
    document = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert document["certificate"]["status"] == "certificate" and document["certificate"]["reasons"] == []
    checks = _checks(folder)
    assert list(checks) == ["schema", "results", "derived", "plan", "flakes", "checkout", "documents", "certificate"]
    assert all(check.ok for check in checks.values()), [str(c) for c in checks.values()]
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert 'data-status="certificate"' in html and document["certificate"]["results_digest"] in html
    monkeypatch.setattr("reports.folders.verify.this_checkout", lambda: CLEAN)
    assert main(["verify", str(folder)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == f"report of {ZOO} (version not stated): profile certify, seed none (derandomized), ArgMin-13"
    assert len(lines) == 12 and all(line.startswith("PASS ") for line in lines[3:-1])
    assert lines[-1] == "VERIFIED: every check holds; the report is a certificate"


def test_an_unsandboxed_certify_run_is_no_certificate_and_says_why(tmp_path: Path) -> None:
    unsandboxed = {"mechanism": None, "denies": [], "reason": "--sandbox off: the implementation ran unsandboxed"}
    folder = _report(tmp_path, "certify", unsandboxed)
    checks = _checks(folder)
    assert [name for name, check in checks.items() if not check.ok] == ["certificate"]
    assert "The implementation did not run in a sandbox" in checks["certificate"].message
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert 'data-status="not-a-certificate"' in html and "--sandbox off: the implementation ran unsandboxed" in html


def test_a_non_certify_run_is_caught_and_says_what_it_is(copy: Path) -> None:
    checks = _checks(copy)
    assert not checks["certificate"].ok and not checks["certificate"].counts  # said, not failed
    assert "Quick smoke run, not a certificate" in checks["certificate"].message
    assert all(check.ok for name, check in checks.items() if name != "certificate")


def test_an_edited_verdict_is_caught(copy: Path) -> None:
    def edit(document: dict) -> None:
        document["versions"][0]["verdict"] = "non-conformant"
    _edit_json(copy, edit)
    checks = _checks(copy)
    assert not checks["derived"].ok and "versions[0].verdict" in checks["derived"].message
    assert "ArgMin-13: HTML conformant, JSON non-conformant" in checks["documents"].message


def test_an_edited_count_is_caught(copy: Path) -> None:
    def edit(document: dict) -> None:
        document["versions"][0]["counts"]["pass"] += 1
    _edit_json(copy, edit)
    message = _checks(copy)["derived"].message
    assert "versions[0].counts.pass" in message


def test_a_removed_failure_is_caught(tmp_path: Path) -> None:
    folder = _report(tmp_path / "broken", "quick", seed="5", impl="zoo.broken_values:ties_last_always")
    document = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert document["failures"], "the broken entry should have failed"
    _edit_json(folder, lambda d: d["failures"].pop())
    assert not _checks(folder)["derived"].ok


def test_a_flake_and_a_history_must_bear_their_evidence(tmp_path: Path) -> None:
    """A failure called a flake whose second answer is wrong, one said to need history whose
    answer alone is wrong (or that records none), or a failure whose recorded answer passes, does
    not stand: the report would send a vendor to a snippet that says otherwise."""
    folder = _report(tmp_path / "broken", "quick", seed="5", impl="zoo.broken_values:ties_last_always")
    assert _checks(folder)["flakes"].ok
    raw = load(folder)
    failure = next(r for r in raw.results if r.counterexample is not None and r.kind == "semantic")
    ce = failure.counterexample
    assert ce.again == ce.actual and not ce.flaky and ce.reproduction is None, "--isolation none: asked again here"
    ce.flaky = True
    save(raw, folder)
    flakes = _checks(folder)["flakes"]
    assert not flakes.ok and "called a flake, but an answer asked again is not right" in flakes.message
    ce.flaky, ce.reproduction, ce.after_history = False, NEEDS_HISTORY, ce.actual
    ce.history = [HistoryModel(13, None, [PackNode(ce.input, {})])]
    save(raw, folder)
    assert "said to need history, but its answers alone and after it" in _checks(folder)["flakes"].message
    ce.again = ce.expected
    save(raw, folder)
    assert _checks(folder)["flakes"].ok, "right alone, wrong after its history"
    ce.reproduction, ce.history, ce.after_history, ce.again = None, None, None, ce.actual
    ce.actual = ce.expected
    save(raw, folder)
    assert "its recorded answer passes" in _checks(folder)["flakes"].message


def test_an_edited_raw_result_is_caught(copy: Path) -> None:
    path = copy / "raw.json.gz"
    raw = json.loads(gzip.decompress(path.read_bytes()))
    raw["results"][0]["outcome"] = "fail"
    path.write_bytes(gzip.compress(json.dumps(raw).encode()))
    checks = _checks(copy)
    assert not checks["results"].ok and "were changed" in checks["results"].message


def test_an_edited_html_page_is_caught(copy: Path) -> None:
    path = copy / "report.html"
    html = path.read_text(encoding="utf-8")
    path.write_text(html.replace('data-verdict="conformant"', 'data-verdict="non-conformant"'), encoding="utf-8")
    assert "ArgMin-13: HTML non-conformant, JSON conformant" in _checks(copy)["documents"].message
    path.write_text(html.replace("Seed", "Sead", 1), encoding="utf-8")
    assert "report.html is not report.json rendered" in _checks(copy)["documents"].message


def test_an_edited_junit_file_is_caught_and_another_serialization_is_not(copy: Path) -> None:
    """junit.xml is held to report.json by what it says, not by its bytes: junitparser writes it with
    lxml where that is installed, whose declaration and empty elements are spelled otherwise."""
    path = copy / "junit.xml"
    xml = path.read_bytes()
    assert b' />' in xml and xml.startswith(b"<?xml version='1.0' encoding='utf-8'?>")
    path.write_bytes(xml.replace(b" />", b"/>").replace(b"<?xml version='1.0' encoding='utf-8'?>",
                                                       b"<?xml version='1.0' encoding='UTF-8'?>"))
    assert _checks(copy)["documents"].ok
    for edited in (xml.replace(b'name="C5 minimum"', b'name="C5 minimal"'), xml.replace(b'tests="', b'tests="1'),
                   xml[:-20]):
        assert edited != xml
        path.write_bytes(edited)
        documents = _checks(copy)["documents"]
        assert not documents.ok and documents.message == "junit.xml is not report.json rendered"


def test_the_documents_check_names_the_files_it_checked(copy: Path) -> None:
    assert _checks(copy)["documents"].message.startswith("report.html and junit.xml are report.json rendered")
    (copy / "junit.xml").unlink()
    documents = _checks(copy)["documents"]
    assert documents.ok and "junit.xml" not in documents.message.split(";")[0]
    assert documents.message.endswith("there is no junit.xml to check")


def test_a_linked_report_folder_is_refused_as_a_linked_file_is(copy: Path, tmp_path: Path, capsys) -> None:
    link = tmp_path / "latest"
    link.symlink_to(copy)
    assert main(["verify", str(link)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"error: {link} is a symbolic link (to {copy})") and error.endswith("report folder itself")


def test_a_changed_spec_file_is_caught(copy: Path, tmp_path: Path) -> None:
    changed = Path(shutil.copytree(ROOT / "spec", tmp_path / "spec", ignore=shutil.ignore_patterns("__pycache__")))
    path = changed / "argmin-13.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("is invalid", "may be invalid", 1),
                    encoding="utf-8")
    checks = _checks(copy, Checkout(COMMIT, False, spec.files_digest(changed)))
    assert not checks["checkout"].ok and "spec files differ" in checks["checkout"].message
    assert f"check out commit {COMMIT}" in checks["checkout"].message


def test_another_commit_or_a_modified_checkout_is_named(copy: Path) -> None:
    elsewhere = _checks(copy, Checkout("1" * 40, False, spec.files_digest()))["checkout"]
    assert not elsewhere.ok and f"git checkout {COMMIT}" in elsewhere.message
    modified = _checks(copy, Checkout(COMMIT, True, spec.files_digest()))["checkout"]
    assert not modified.ok and "uncommitted changes" in modified.message


def test_verify_command_exit_status_and_lines(quick: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    """A true report that is no certificate passes verify and says so; --certificate makes that a
    failure. First what the report claims (implementation, profile, seed, versions, verdicts, what
    was asked), then a line per check, last the answer."""
    monkeypatch.setattr("reports.folders.verify.this_checkout", lambda: CLEAN)
    assert main(["verify", str(quick / "report.json")]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    document = json.loads((quick / "report.json").read_text(encoding="utf-8"))
    cases, census = document["certificate"]["cases"], document["certificate"]["census_inputs"]
    assert lines[:3] == [f"report of {ZOO} (version not stated): profile quick, seed 5, ArgMin-13",
                         "verdicts: ArgMin-13 CONFORMANT", f"asked: {cases:,} cases judged, {census:,} census inputs"]
    assert [line.split()[0] for line in lines[3:-1]] == ["PASS"] * 7 + ["NOTE"]
    assert f"({cases:,} cases judged, {census:,} census inputs)" in lines[4]  # the results check, in the same words
    assert lines[-2].startswith("NOTE certificate: Quick smoke run, not a certificate")
    assert lines[-1] == "VERIFIED: every check holds; the report is no certificate (NOTE certificate above)"
    assert main(["verify", str(quick / "report.json"), "--certificate"]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-2].startswith("FAIL certificate:") and lines[-1] == "NOT VERIFIED: the certificate check failed"
    assert main(["verify", str(tmp_path / "nothing-here")]) == 2
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    assert main(["verify", str(tmp_path / "bad.json")]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2 and all(line.startswith("error: ") for line in errors)


def test_the_report_page_names_every_check_verify_makes(quick: Path) -> None:
    names = [check.name for check in verify(quick, here=CLEAN, say=str)]
    page = (ROOT / "docs" / "explanation" / "report.md").read_text(encoding="utf-8")
    section = page.split("The checks, in order:")[1][:2500]
    assert len(names) == 8 and [name for name in [*names, "rerun"] if f"`{name}`" not in section] == []


def test_a_fail_anywhere_ends_with_not_verified(copy: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr("reports.folders.verify.this_checkout", lambda: CLEAN)
    _edit_json(copy, lambda d: d["versions"][0].update(verdict="non-conformant"))
    assert main(["verify", str(copy)]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[1] == "verdicts: ArgMin-13 NON-CONFORMANT"  # what the report claims, checked below
    assert "FAIL derived:" in "\n".join(lines) and lines[-1].startswith("NOT VERIFIED: the derived")
    assert main(["verify", str(copy), "--rerun", "--yes"]) == 2  # not rerun: the report cannot be trusted
    captured = capsys.readouterr()
    assert captured.err.startswith("error: not rerun") and captured.out.strip().splitlines()[-1].startswith(
        "NOT VERIFIED: the derived")


def test_a_reports_plugin_file_is_found_from_where_verify_starts_then_where_the_run_did(tmp_path: Path,
                                                                                      monkeypatch) -> None:
    """engine.asking.loader.located: a relative path is read from the current folder first, then
    from the folder the report says the run was started in (made absolute); neither, one line
    naming both places."""
    run_folder, elsewhere = tmp_path / "vendor", tmp_path / "customer"
    run_folder.mkdir()
    elsewhere.mkdir()
    (run_folder / "my_argmin.py").write_text("def argmin(data, *, opset, **attributes): pass\n", encoding="utf-8")
    monkeypatch.chdir(run_folder)
    assert located("model:my_argmin.py:compile", str(tmp_path / "gone")) == "model:my_argmin.py:compile"
    monkeypatch.chdir(elsewhere)
    assert located("my_argmin.py:argmin", str(run_folder)) == f"{run_folder / 'my_argmin.py'}:argmin"
    assert located("onnxruntime", str(run_folder)) == "onnxruntime"
    with pytest.raises(UsageError, match=r"here .*customer.* nor where the run was started .*vendor") as raised:
        located("sub/my_argmin.py:argmin", str(run_folder))
    assert "\n" not in str(raised.value)


# A plug-in run as docs/how-to/plugins.md says: from the plug-in's own folder, outside the checkout, its
# file named by a relative path, with the checkout on the import path as nox puts it there.
VENDOR = ["--impl", "my_argmin.py:argmin", "--versions", "13", "--dtypes", "float", "--profile", "quick", "--seed",
          "5", "--isolation", "none", "--report-dir", "out"]


def _from(folder: Path, *command: str) -> subprocess.CompletedProcess:
    """``command`` started in ``folder``, outside the checkout, with the checkout importable and
    this Python's ``python`` first on PATH (nox's --no-venv sessions run ``python``)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "PATH": path}, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def vendor(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("vendor")
    shutil.copy(ROOT / "tests" / "impls" / "path_form_argmin.py", folder / "my_argmin.py")
    done = _from(folder, sys.executable, "-m", "suites", *VENDOR)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return folder


def test_a_plugins_report_is_verified_with_rerun_from_its_folder_or_another(vendor: Path, tmp_path: Path) -> None:
    """The report records where the run was started; `nox -s verify -- out --rerun`, from the
    plug-in's folder as from any other, finds the plug-in the report names by a relative path and
    gets as far as asking to run it (nobody can answer here, so it stops there: exit 2)."""
    report = json.loads((vendor / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["certificate"]["implementation"] == "my_argmin.py:argmin"
    assert report["run"]["started_in"] == str(vendor.resolve())
    nox = [sys.executable, "-m", "nox", "--no-venv", "--no-install", "-f", str(ROOT / "noxfile.py"), "-s", "verify",
           "--"]
    for folder, report_dir in ((vendor, "out"), (tmp_path, str(vendor / "out"))):
        done = _from(folder, *nox, report_dir, "--rerun")
        assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
        assert "does not exist" not in done.stderr and "nobody can confirm: pass --yes" in done.stderr, done.stderr
        assert "PASS results:" in done.stdout and done.stdout.strip().splitlines()[-1].startswith("NOT VERIFIED")
    assert f"--impl {vendor.resolve() / 'my_argmin.py'}:argmin" in done.stdout  # from elsewhere: the run's file
    (vendor / "my_argmin.py").rename(vendor / "moved.py")
    try:
        done = _from(tmp_path, *nox, str(vendor / "out"), "--rerun")
    finally:
        (vendor / "moved.py").rename(vendor / "my_argmin.py")
    line, = done.stderr.strip().splitlines()[-1:]
    assert done.returncode == 2 and "nor where the run was started" in line and "my_argmin.py" in line, done.stderr


def _verify_rerun(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reports", "verify", str(folder), "--rerun", "--yes"], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)


@pytest.mark.e2e
def test_rerun_reproduces_the_digest_of_a_zoo_entry(quick: Path) -> None:
    """The in-process run and a fresh `python -m suites` run with the recorded settings judge the
    same inputs and get the same answers."""
    done = _verify_rerun(quick)
    assert "PASS rerun: a new run gives the same results digest" in done.stdout, done.stdout + done.stderr


def test_rerun_lists_the_cases_whose_answers_differ(quick: Path, tmp_path: Path) -> None:
    raw = load(quick)
    document = json.loads((quick / "report.json").read_text(encoding="utf-8"))
    again = load(quick)
    again.results[3] = replace(again.results[3], answer_digest="0" * 16)  # as if it had answered otherwise
    again.results.pop()
    check = rerun_check(document, raw, again, tmp_path)
    assert not check.ok
    summary, detail = check.message.splitlines()[:2]
    assert "1 case(s) answered differently, 1 only in the report, 0 only in the rerun" in summary
    case = raw.results[3]
    assert detail.strip() == (f"ArgMin-13 {case.suite} {case.type_name} input {case.input_digest}: "
                              f"{case.outcome} -> {case.outcome} (another answer)")


@pytest.mark.e2e
@pytest.mark.parametrize(("impl", "options", "status"), [
    ("onnxruntime", ["--profile", "standard", "--seed", "11", "--dtypes", "float,int16"], 0),  # int16: not implemented
    (ZOO, ["--profile", "certify", "--dtypes", "float"], 0),
], ids=["onnxruntime", "zoo-certify"])
def test_rerun_reproduces_a_run_from_the_front_door(impl: str, options: list[str], status: int,
                                                     tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "suites", "--impl", impl, "--versions", "13", *options,
                          "--report-dir", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert run.returncode == status, run.stdout[-3000:]
    done = _verify_rerun(tmp_path)
    assert "PASS rerun: a new run gives the same results digest" in done.stdout, done.stdout + done.stderr
    for name in ("schema", "results", "derived", "documents"):
        assert f"PASS {name}:" in done.stdout, done.stdout
