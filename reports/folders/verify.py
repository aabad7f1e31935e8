"""``python -m reports verify REPORT_DIR_OR_JSON [--rerun]``: check a report without the
implementation: first what it claims (``heading``), then one line per check, last the answer
(``answer``: VERIFIED, or NOT VERIFIED where a check fails).

- schema: report.json validates against report.schema.json;
- results: the certificate's results digest is that of the raw results next to it;
- derived: verdicts, counts, failures (the whole document) are what the verdict rule and the
  aggregation give for those raw results;
- plan: the run planned every test its settings give, and each delivered its end mark and every
  record it counted (a test whose process died left none);
- flakes: every recorded wrong answer fails the oracle, every flake's recorded second answer is
  right by it, and every failure said to need history answered right alone and wrong after it
  (a flake and a history are claims with evidence);
- checkout: the spec files and the suite commit are this checkout's (or: which commit to check out);
- documents: report.html and junit.xml are the JSON rendered (junit.xml as XML, whatever library
  serialized it), so the HTML shows its verdicts;
- certificate: whether the run is a certificate (a complete certify run, clean committed checkout,
  the implementation sandboxed): said, and a failure only with ``--certificate``;
- rerun (``--rerun``): the suite run again with the recorded implementation, profile, seed and
  claims, always sandboxed, gives the same results digest; otherwise the cases whose answers differ.

What it cannot prove: anyone can produce a self-consistent set of files, so the checks show
that the documents agree with each other, with raw results and with this suite; only ``--rerun``
asks the implementation again. Exit status 0 when every check holds (a report that is no
certificate included, unless ``--certificate``), 1 when one fails, 2 when the report cannot be
checked at all."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import IO, Any

import jinja2
import jsonschema

import spec
from engine import runtimes
from engine.asking.loader import UsageError, located
from engine.config import shards
from engine.config.shards import Shard
from engine.runtimes.entry import NATIVE
from reports.document.aggregate import aggregate
from reports.document.certificate import CERTIFY
from reports.document.parts import SCHEMA_FILE
from reports.pages.i18n import Translator
from reports.pages.junit import canonical, to_junit
from reports.pages.render import render_report
from reports.pages.standing import causes_line, certificate_line
from results import CaseResult, RawRun, Tensor, Unreadable, load, raw_path, read_bounded, read_json
from results.digest import results_digest
from results.environment import REPO, checkout
from results.records import NEEDS_HISTORY, lost_tests, missing_census
from results.tensors import from_tensor
from results.verdict import is_judged
from spec.oracle import expect
from spec.oracle import verify as verify_answer

SHOWN_DIFFERENCES = 10
RERUN_SECONDS = 3600  # a certify run of every version against onnxruntime takes about 9 minutes
RERUN_TAIL = 4096  # bytes of the rerun's output read back, for its last line
Confirm = Callable[[str], bool]


class CannotVerify(Exception):
    """The report cannot be checked at all (exit 2); the message names the problem and the fix."""


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    message: str
    counts: bool = True  # False: what it finds is said (NOTE), and never fails the verification

    def __str__(self) -> str:
        return f"{'PASS' if self.ok else 'FAIL' if self.counts else 'NOTE'} {self.name}: {self.message}"


@dataclass(frozen=True)
class Checkout:
    """What the report is compared with: this suite's commit, whether its tree is modified, and
    its spec files' digest."""

    commit: str | None
    dirty: bool | None
    spec_sha256: str


def this_checkout() -> Checkout:
    state = checkout()
    return Checkout(state["git_commit"], state["git_dirty"], spec.files_digest())


def _first_difference(report: Any, derived: Any, path: str = "") -> str | None:
    """Where two JSON values first differ, as 'path: report says X, the raw results give Y'."""
    if isinstance(report, dict) and isinstance(derived, dict):
        for key in [*report, *(k for k in derived if k not in report)]:
            if key not in report or key not in derived:
                side = "only the report has" if key in report else "the report lacks"
                return f"{path}.{key}".lstrip(".") + f": {side} this entry"
            found = _first_difference(report[key], derived[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(report, list) and isinstance(derived, list):
        for index, (a, b) in enumerate(zip(report, derived, strict=False)):
            found = _first_difference(a, b, f"{path}[{index}]")
            if found:
                return found
        if len(report) != len(derived):
            return f"{path.lstrip('.')}: the report lists {len(report)} entries, the raw results give {len(derived)}"
        return None
    if report != derived:
        return f"{path.lstrip('.')}: the report says {json.dumps(report)[:80]}, the raw results give " \
               f"{json.dumps(derived)[:80]}"
    return None


def _schema(document: dict) -> Check:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(document))
    if error is not None:
        where = "/".join(map(str, error.absolute_path)) or "(top)"
        return Check("schema", False, f"report.json breaks its schema at {where}: {error.message[:160]}")
    return Check("schema", True, "report.json validates against report.schema.json")


def counted(results: list[CaseResult]) -> str:
    """"12,345 cases judged, 678 census inputs": the certificate's words for what a run asked."""
    judged = sum(map(is_judged, results))
    return f"{judged:,} cases judged, {len(results) - judged:,} census inputs"


def _results(document: dict, raw: RawRun) -> Check:
    claimed = document["certificate"]["results_digest"]
    actual = results_digest(raw.results)
    if claimed != actual:
        return Check("results", False, f"the certificate's results digest {claimed[:16]}… is not that of the raw "
                                       f"results ({actual[:16]}…): the report or the raw results were changed")
    return Check("results", True, f"results digest {actual[:16]}… matches the raw results ({counted(raw.results)})")


def _derived(document: dict, raw: RawRun) -> Check:
    derived = json.loads(json.dumps(aggregate(raw)))
    derived["generated"] = document.get("generated")
    difference = _first_difference(document, derived)
    if difference:
        return Check("derived", False, f"the report does not follow from its raw results: {difference}")
    return Check("derived", True, "verdicts, counts and failures follow from the raw results by the verdict rule")


def _checkout(document: dict, here: Checkout) -> Check:
    certificate = document["certificate"]
    commit = certificate["suite_commit"]
    if certificate["spec_sha256"] != here.spec_sha256:
        fix = f"check out commit {commit} and verify again" if commit else "use the spec files the run used"
        return Check("checkout", False, f"the spec files differ from the run's (digest {here.spec_sha256[:16]}… here, "
                                        f"{str(certificate['spec_sha256'])[:16]}… in the report); {fix}")
    if commit is None:
        return Check("checkout", False, "the report names no suite commit, so this checkout cannot be matched to it")
    if commit != here.commit:
        return Check("checkout", False, f"the report was made at commit {commit}, this checkout is at {here.commit}; "
                                        f"run `git checkout {commit}` and verify again")
    if here.dirty is not False:
        return Check("checkout", False, "this checkout has uncommitted changes; verify from a clean checkout of "
                                        f"commit {commit}")
    return Check("checkout", True, f"spec files and suite commit {commit[:12]} match this checkout")


class _Verdicts(HTMLParser):
    """The verdicts an HTML report shows: its data-version / data-verdict attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[int, str] = {}
        self.lang = "en"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "html" and values.get("lang"):
            self.lang = str(values["lang"])
        if tag == "div" and values.get("data-version") and values.get("data-verdict"):
            self.found[int(str(values["data-version"]))] = str(values["data-verdict"])


def _documents(document: dict, folder: Path) -> Check:
    html_path, junit_path = folder / "report.html", folder / "junit.xml"
    if not html_path.is_file():
        return Check("documents", False, f"no report.html in {folder}")
    html = read_bounded(html_path).decode("utf-8", errors="replace")
    shown = _Verdicts()
    shown.feed(html)
    stated = {v["version"]: v["verdict"] for v in document["versions"]}
    if shown.found != stated:
        differing = [f"ArgMin-{n}: HTML {shown.found.get(n)}, JSON {stated.get(n)}"
                     for n in sorted(shown.found.keys() | stated.keys()) if shown.found.get(n) != stated.get(n)]
        return Check("documents", False, "report.html shows other verdicts than report.json: " + "; ".join(differing))
    lang = shown.lang if shown.lang in ("en", "zh-TW") else "en"
    try:
        rendered, junit = render_report(document, lang), to_junit(document)
    except (jinja2.TemplateError, LookupError, TypeError, ValueError) as exc:
        return Check("documents", False, f"report.json cannot be rendered ({type(exc).__name__}: {exc}): it was edited")
    if html != rendered:
        pairs = zip(html.splitlines(), rendered.splitlines(), strict=False)
        line = next((i for i, (a, b) in enumerate(pairs, start=1) if a != b), None)
        return Check("documents", False, f"report.html is not report.json rendered (first difference at line {line})")
    if not junit_path.is_file():
        return Check("documents", True, "report.html is report.json rendered and shows its verdicts; there is no "
                                        "junit.xml to check")
    if canonical(read_bounded(junit_path)) != canonical(junit):
        return Check("documents", False, "junit.xml is not report.json rendered")
    return Check("documents", True, "report.html and junit.xml are report.json rendered; the HTML shows its verdicts")


def _planned(raw: RawRun) -> list[str]:
    """The tests the run's own settings give (engine.config.shards.planned), its part's for a shard:
    what its plan must be."""
    info = raw.info
    shard = None if info.shard is None else Shard(int(info.shard["index"]), int(info.shard["count"]))
    return shards.planned(SimpleNamespace(
        versions=tuple(int(v) for v in info.versions), profile=str(info.profile), shard=shard,
        type_names=None if info.type_names is None else tuple(info.type_names),
        forms=None if info.forms is None else tuple(info.forms)))


def _plan(raw: RawRun) -> Check:
    """Every test the run's settings give was planned, and each delivered every record it made
    with its end mark: a run that lost a test (its process died) is caught here even where its
    report calls itself complete."""
    planned = raw.info.planned
    if planned is None:
        return Check("plan", False, "the run recorded no plan (it was made before runs did), so whether every test "
                                    "delivered its results cannot be checked")
    try:
        expected = _planned(raw)
    except (spec.SpecError, KeyError, TypeError, ValueError) as exc:
        return Check("plan", False, f"the run's settings give no plan here ({type(exc).__name__}: {exc})")
    absent = sorted(set(expected) - set(planned))
    if absent or sorted(planned) != sorted(set(planned)) or set(planned) - set(expected):
        named = ", ".join(absent[:3]) or ", ".join(sorted(set(planned) - set(expected))[:3])
        return Check("plan", False, f"the run planned {len(planned)} tests where its settings give {len(expected)} "
                                    f"({named} ...): it was not the whole run")
    lost, missing = lost_tests(raw), missing_census(raw)
    if lost or missing:
        named = ", ".join(lost[:3]) + (f" and {len(lost) - 3} more" if len(lost) > 3 else "")
        what = f"{len(lost)} planned tests have no end mark or not every record ({named})" if lost \
            else f"{missing} census records the tests counted are missing"
        return Check("plan", False, f"{what}: results were lost, so the report is not the whole run")
    return Check("plan", True, f"each of the {len(planned)} planned tests delivered its end mark and every record it "
                               f"counted")


def _fails(result: CaseResult, answer: Tensor) -> bool:
    """Whether ``answer`` to the counterexample's input fails it by the oracle (the check the
    snippets make)."""
    ce = result.counterexample
    data, vspec = from_tensor(ce.input), spec.load(result.version)
    return verify_answer(vspec, expect(vspec, data, ce.attributes), data, from_tensor(answer)) is not None


def _right(result: CaseResult, answer: object) -> bool:
    """Whether the oracle passes ``answer`` (an answer's text, an error or a crash, is never right)."""
    return isinstance(answer, Tensor) and not _fails(result, answer)


def _unborne(result: CaseResult) -> str | None:
    """What the report calls a failure that its recorded answers do not bear out, if anything."""
    ce = result.counterexample
    if ce.flaky and (not _right(result, ce.again) or (ce.after_history is not None
                                                      and not _right(result, ce.after_history))):
        return "called a flake, but an answer asked again is not right"
    if ce.reproduction == NEEDS_HISTORY and (not ce.history or not _right(result, ce.again)
                                             or ce.after_history is None or _right(result, ce.after_history)):
        return "said to need history, but its answers alone and after it do not show that"
    if not ce.flaky and ce.reproduction != NEEDS_HISTORY and (
            not _fails(result, ce.actual) or (ce.again is not None and _right(result, ce.again))):
        return "its recorded answer passes, so its snippet would"
    return None


def _flakes(raw: RawRun) -> Check:
    """A flake and a failure that needs history are claims with evidence: a flake's answer asked
    again is right by the oracle (and its answer after its worker's history, where recorded); a
    needs-history failure's answer in a fresh worker is right, and wrong after the history it
    records; every other failure's recorded answers fail it (so its snippets, asked the same
    input, fail too)."""
    judged = [r for r in raw.results if r.kind == "semantic" and r.counterexample is not None
              and isinstance(r.counterexample.actual, Tensor)]
    wrong = [f"{result.test_key} {result.clause}: {why}" for result in judged if (why := _unborne(result))]
    if wrong:
        return Check("flakes", False, f"{len(wrong)} failure(s) whose answers do not bear out what the report calls "
                                      f"them: {'; '.join(wrong[:3])}")
    flakes = sum(r.counterexample.flaky for r in judged)
    history = sum(r.counterexample.reproduction == NEEDS_HISTORY for r in judged)
    return Check("flakes", True, f"each of the {len(judged)} wrong answers recorded fails the oracle, each of the "
                                 f"{flakes} flake(s) answered right when asked again, and each of the {history} "
                                 f"failure(s) that need history answered right alone and wrong after it")


def _certificate(document: dict, required: bool) -> Check:
    """Whether the report is a certificate: said either way, a failure only where ``required``
    (a report that is no certificate can still be whole and true)."""
    certificate = document["certificate"]
    if certificate["status"] == "certificate" and not certificate["reasons"]:
        return Check("certificate", True, f"a complete certify run from a clean, committed checkout of the suite, the "
                                          f"implementation sandboxed ({certificate['sandbox']['mechanism']})")
    return Check("certificate", False, certificate_line(certificate), counts=required)


def rerun_command(document: dict, report_dir: Path, memory_limit: int | None = None,
                  shard: str | None = None) -> list[str]:
    """``python -m suites`` with every recorded setting: implementation, profile, seed, claims,
    timeout, forms, packing, the schedule (drawn within, and the compile key, or drawn freely),
    memory limit, the cap on a runtime's instruction set (``--isa``; none recorded, ``--isa
    native``) and, for a shard's report, its shard; ``shard`` (K/N)
    runs that part of the run only. Always ``--isolation process --sandbox require``: the
    implementation a report names never runs in the process of the one who checks it, nor
    outside a sandbox (where there is none, the rerun stops, saying so)."""
    certificate = document["certificate"]
    recorded = certificate.get("shard")
    if recorded is not None:
        own = f"{recorded['index']}/{recorded['count']}"
        if shard not in (None, own):
            raise CannotVerify(f"--shard {shard}: the report is shard {own} itself; rerun it without --shard")
        shard = own
    command = [sys.executable, "-m", "suites", "--impl", rerun_impl(document),
               "--profile", certificate["profile"], "--versions", ",".join(map(str, certificate["versions"])),
               "--timeout", f"{certificate['timeout_s']:g}", "--isolation", "process", "--sandbox", "require",
               "--memory-limit", "none" if memory_limit is None else str(int(memory_limit)),
               "--report-dir", str(report_dir)]
    if certificate["seed"] is not None:
        command += ["--seed", str(certificate["seed"])]
    if certificate["types"] is not None:
        command += ["--dtypes", ",".join(certificate["types"])]
    if certificate["forms"] is not None:
        command += ["--forms", ",".join(certificate["forms"])]
    if certificate.get("packing") in ("on", "off"):  # absent from reports made before --packing existed
        command += ["--packing", certificate["packing"]]
    if certificate["forms"] is not None:  # a report made before schedules drew freely
        schedule = document.get("run", {}).get("schedule")
        command += ["--schedule", "off"] if schedule is None else ["--schedule", "on", "--compile-key",
                                                                    schedule["compile_key"]]
    found = runtimes.find(certificate["implementation"])
    if found and found[0].isa_cap and certificate.get("cpu_isa") is not None:  # recorded since --isa existed
        cap = certificate.get("isa_cap")
        command += ["--isa", cap["value"].lower() if cap else NATIVE]
    if shard is not None:
        command += ["--shard", shard]
    return command


def rerun_impl(document: dict) -> str:
    """The implementation the report names, as a rerun started here loads it: a plug-in file named
    by a relative path is read from here, else from the folder the run was started in
    (engine.asking.loader.located)."""
    run = document.get("run")
    started_in = run.get("started_in") if isinstance(run, dict) else None  # absent from older reports
    try:
        return located(document["certificate"]["implementation"], started_in if isinstance(started_in, str) else None)
    except UsageError as exc:
        raise CannotVerify(str(exc)) from None


def _answers(raw: RawRun) -> dict[tuple, tuple[str, str]]:
    return {(r.version, r.suite, r.type_name, r.form or "", r.input_digest): (r.outcome, r.answer_digest)
            for r in raw.results}


def rerun_check(document: dict, raw: RawRun, again: RawRun, where: Path) -> Check:
    """The rerun's results (kept in ``where``) against the report's: the same digest, or the
    cases whose outcome or answer differs."""
    before, after = results_digest(raw.results), results_digest(again.results)
    if before == after:
        return Check("rerun", True, f"a new run gives the same results digest {after[:16]}… "
                                    f"({counted(again.results)})")
    old, new = _answers(raw), _answers(again)
    differing = sorted(key for key in old.keys() & new.keys() if old[key] != new[key])
    lines = []
    for key in differing[:SHOWN_DIFFERENCES]:
        version, suite, type_name, form, digest = key
        answer = "the same answer" if old[key][1] == new[key][1] else "another answer"
        where_form = f" ({form} model)" if form else ""
        lines.append(f"ArgMin-{version} {suite} {type_name}{where_form} input {digest}: {old[key][0]} -> "
                     f"{new[key][0]} ({answer})")
    recorded, version = document["certificate"]["implementation_version"], again.environment.get("version")
    note = "" if version == recorded else f"; the rerun used version {version}, the report {recorded}"
    if again.environment.get("cpu_isa") != document["certificate"].get("cpu_isa"):
        note += "; the rerun ran on a CPU of other extensions, which may change a runtime's answers"
    summary = (f"the results differ: {len(differing)} case(s) answered differently, {len(old.keys() - new.keys())} "
               f"only in the report, {len(new.keys() - old.keys())} only in the rerun (kept in {where}){note}")
    return Check("rerun", False, "\n    ".join([summary, *lines]))


def _last_line(log: IO[bytes]) -> str:
    """The last line of the rerun's output (only its last RERUN_TAIL bytes are read)."""
    log.seek(max(0, os.fstat(log.fileno()).st_size - RERUN_TAIL))
    lines = log.read(RERUN_TAIL).decode("utf-8", errors="replace").strip().splitlines()
    return lines[-1][:300] if lines else "no output"


def _needs(implementation: str) -> str:
    """What running ``implementation`` installs first (``nox -s verify``): a built-in's runtime at
    the release it names; nothing for a plug-in."""
    found = runtimes.find(implementation)
    wanted = found[0].requirements(runtimes.split_release(implementation)[1]) if found else ()
    return f", after installing {' '.join(wanted)} into a virtualenv of its own" if wanted else ""


def _rerun(document: dict, raw: RawRun, confirm: Confirm | None, say: Callable[[str], None],
           shard: str | None = None, confirm_only: bool = False) -> Check | None:
    where = Path(tempfile.mkdtemp(prefix="argmin-rerun-"))
    try:
        command = rerun_command(document, where, raw.info.memory_limit_bytes, shard)
        implementation = command[command.index("--impl") + 1]
        say(f"rerun: implementation {implementation!r}, in a sandboxed worker process, at most "
            f"{RERUN_SECONDS // 60} min{_needs(implementation)}\nrerun: {shlex.join(command)}")
        if confirm is not None and not confirm("Install what it needs and run this implementation on this machine? "
                                               "[y/N] "):
            raise CannotVerify("the rerun was not confirmed; nothing was installed or run")
        if confirm_only:
            shutil.rmtree(where, ignore_errors=True)
            return None
    except BaseException:  # a --shard the report cannot take, refused, no terminal to ask, or Ctrl-C at the question
        shutil.rmtree(where, ignore_errors=True)
        raise
    # From the current folder, so that an implementation named by a relative path is found as
    # the run found it; the suite itself is put on the import path. Its output goes to a file,
    # of which only the end is read.
    paths = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                   env={**os.environ, "PYTHONPATH": paths})
        try:
            status: int | None = process.wait(RERUN_SECONDS)
        except subprocess.TimeoutExpired:
            status = None
        finally:
            if process.returncode is None:  # the time is up, or Ctrl-C: the rerun and all it started end here
                with contextlib.suppress(OSError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if status not in (0, 1) or not raw_path(where).exists():
            shutil.rmtree(where, ignore_errors=True)
            what = f"no result within {RERUN_SECONDS} s" if status is None else f"exit status {status}"
            raise CannotVerify(f"the rerun could not be carried out ({what}): {_last_line(log)}")
    again = load(where)
    if shard is not None and again.info.shard is not None:  # the report's results of that part's tests only
        tests = set(again.info.shard["tests"])
        raw = replace(raw, results=[r for r in raw.results if r.test_key in tests])
    check = rerun_check(document, raw, again, where)
    if check.ok:
        shutil.rmtree(where, ignore_errors=True)
    return check


def heading(document: dict) -> list[str]:
    """What the report claims, said before its checks: the implementation, its version and device,
    the profile, seed and versions; each version's verdict; what was asked."""
    certificate, english = document["certificate"], Translator("en")
    version = certificate["implementation_version"] or "(version not stated)"
    device = f" on {certificate['device']}" if certificate["device"] else ""
    seed = certificate["seed"] if certificate["seed"] is not None else \
        english("derandomized") if certificate["profile"] == CERTIFY else "none recorded"
    verdicts = "; ".join(f"ArgMin-{v['version']} {v['verdict'].upper()}" + (f" ({causes_line(v['causes'])})"
                                                                            if v["causes"] else "")
                         for v in document["versions"])
    return [f"report of {certificate['implementation']} {version}{device}: profile {certificate['profile']}, seed "
            f"{seed}, ArgMin-{', '.join(map(str, certificate['versions']))}",
            f"verdicts: {verdicts}",
            f"asked: {certificate['cases']:,} cases judged, {certificate['census_inputs']:,} census inputs"]


def answer(checks: list[Check], unfinished: bool = False) -> str:
    """The last line of verify: VERIFIED where every check that counts holds, else NOT VERIFIED
    naming the checks that failed (or that not every check could be made)."""
    failed = [check.name for check in checks if check.counts and not check.ok]
    if failed:
        return f"NOT VERIFIED: the {', '.join(failed)} check{'s' * (len(failed) > 1)} failed"
    if unfinished or not checks:
        return "NOT VERIFIED: not every check could be made (the error above says why)"
    certificate = next((check for check in checks if check.name == "certificate"), None)
    what = "the report is a certificate" if certificate and certificate.ok else \
        "the report is no certificate (NOTE certificate above)"
    return f"VERIFIED: every check holds; {what}"


def verify(path: Path, rerun: bool = False, here: Checkout | None = None, confirm: Confirm | None = None,
           say: Callable[[str], None] = print, shard: str | None = None,
           certificate: bool = False, confirm_only: bool = False) -> Iterator[Check]:
    """The checks of one report (its folder or its report.json), in order. ``rerun`` runs the
    implementation the report names, only when every integrity check held, after showing it
    (``say``) and, unless ``confirm`` is None, asking; with ``shard`` (K/N), only that part of
    the run, compared with the report's results of that part's tests; with ``confirm_only``, it
    stops once that is confirmed (nox installs what the rerun needs, then asks for it). ``certificate``:
    a report that is no certificate fails (otherwise that is only said)."""
    path = Path(path)
    if path.is_symlink():  # as no file of a report is read through a link
        raise CannotVerify(f"{path} is a symbolic link (to {os.readlink(path)}); verify follows no link: name the "
                           f"report folder itself")
    folder = path if path.is_dir() else path.parent
    report = folder / "report.json" if path.is_dir() else path
    try:
        document = read_json(report)
    except Unreadable as exc:
        raise CannotVerify(str(exc)) from None
    except OSError as exc:
        raise CannotVerify(f"{report}: cannot read the file ({exc.strerror}); name a report folder or its "
                           f"report.json") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CannotVerify(f"{report}: not a JSON file ({exc}); name a report folder or its report.json") from None
    if not isinstance(document, dict) or "certificate" not in document:
        raise CannotVerify(f"{report}: not a report with a certificate block; name the report.json a run wrote")
    schema = _schema(document)
    if schema.ok:  # only a report that validates can be read for what it claims
        for line in heading(document):
            say(line)
    yield schema
    if not schema.ok:
        return
    raw_file = raw_path(folder)
    if not raw_file.exists():
        yield Check("results", False, f"no raw results ({raw_file.name}) next to the report: without them nothing "
                                      f"in it can be checked")
        return
    try:
        raw = load(raw_file)
    except Unreadable as exc:
        raise CannotVerify(str(exc)) from None
    checks = [_results(document, raw), _derived(document, raw), _plan(raw), _flakes(raw)]
    yield from checks
    yield _checkout(document, here or this_checkout())
    checks.append(_documents(document, folder))
    yield checks[-1]
    yield _certificate(document, certificate)
    if rerun:
        broken = [check.name for check in checks if not check.ok]
        if broken:
            raise CannotVerify(f"not rerun: the {', '.join(broken)} check(s) failed, so the report cannot be trusted "
                               f"to name what to run")
        check = _rerun(document, raw, confirm, say, shard, confirm_only)
        if check is not None:
            yield check
