"""Sessions: ``conformance`` (the front door), ``tests`` (the project's own tests, minutes),
``e2e`` (the long end-to-end runs), ``lint`` (ruff), ``docs`` (the documentation site, built
strictly), ``minimums`` (tests at the lowest dependency versions pyproject allows), the report
tools ``verify``, ``merge``, ``baseline``, ``render``, ``compare`` and ``matrix``, and
``ecosystem``, ``history``, ``adequacy``, ``bench``.

Paths a session is given are the user's: relative ones are read from the folder nox was started
in (``session.invoked_from``), not the checkout nox changes into. The suite and the report tools
run there, with the checkout first on their import path."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import nox

# The --impl grammar is read from the suite itself (engine.loader imports only the standard
# library); the checkout leaves the import path again so its generic folder names shadow nothing.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine.installs import lowest, pip_failure
from engine.isa import parse as parse_isa
from engine.loader import DEFAULT_IMPL, UsageError, check, runtime_commands, runtime_distributions
from engine.runtimes import BUILT_IN, find, split_release
from engine.runtimes.entry import release_key
from engine.sandbox import undumpable

sys.path.pop(0)

ROOT = Path(__file__).resolve().parent
nox.options.default_venv_backend = "virtualenv"
nox.options.sessions = ["tests", "lint"]

PYPROJECT = nox.project.load_toml("pyproject.toml")
RUNTIME = PYPROJECT["project"]["dependencies"]
# How the suite and the report tools start in the user's folder: the checkout first on the path,
# so a folder of theirs named like one of the suite's packages shadows nothing.
_FROM_CHECKOUT = f"import sys; sys.path[0:0] = [{str(ROOT)!r}]; from {{}}.__main__ import main; sys.exit(main())"
# nox's --no-install (and -R, which implies it): reuse a run's virtualenv without pip. nox keeps
# the flag on no public attribute, so it is read from nox's own command line.
_NO_INSTALL = any(arg in ("--no-install", "-R") for arg in sys.argv)


def _debian(session: nox.Session, commands: list[str], why: str) -> None:
    """System commands from Debian's packages of the same name, never a downloaded build: the
    report tests' headless Chromium, tinygrad's clang. Installed here where they are missing and we
    may (root with apt-get); otherwise one line says what to run."""
    missing = [c for c in commands if not (shutil.which(c) or os.path.exists(f"/usr/bin/{c}"))]
    if not missing:
        return
    if not (shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0):
        session.error(f"{why} need{'s' if len(missing) == 1 else ''} {', '.join(missing)}: run "
                      f"`sudo apt-get install -y {' '.join(missing)}` (Debian's packages), then run this session again")
    session.log(f"installing Debian's {', '.join(missing)} for {why}")
    quiet = {"DEBIAN_FRONTEND": "noninteractive"}
    session.run("apt-get", "update", "-qq", external=True, env=quiet)
    session.run("apt-get", "install", "-y", "-qq", *missing, external=True, env=quiet)


# What the built-in runtimes' tests need on PATH (tinygrad compiles its kernels with clang).
_RUNTIME_COMMANDS = sorted({command for runtime in BUILT_IN for command in runtime.commands})


def _pytest(session: nox.Session, marks: str) -> None:
    session.install(*RUNTIME, *nox.project.dependency_groups(PYPROJECT, "test"))
    session.run("pytest", "tests", "-n", "auto", "-m", marks, *session.posargs, env={"ARGMIN_PROFILE": "quick"})


@nox.session
def tests(session: nox.Session) -> None:
    """The project's own tests, at the quick Hypothesis profile (the e2e runs are apart)."""
    _debian(session, ["chromium"], "the report tests")
    _debian(session, _RUNTIME_COMMANDS, "the built-in runtimes' tests")
    _pytest(session, "not e2e")


@nox.session
def e2e(session: nox.Session) -> None:
    """The long end-to-end runs: every zoo entry through the whole suite, adequacy, every command the docs show."""
    _debian(session, ["chromium"], "the report tests")
    _debian(session, _RUNTIME_COMMANDS, "the built-in runtimes' tests")
    _pytest(session, "e2e")


@nox.session
def lint(session: nox.Session) -> None:
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"))
    session.run("ruff", "check", ".")


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site from docs/ into site/; strict, so a broken link or anchor fails."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "docs"))
    session.run("mkdocs", "build", "--strict", *session.posargs)


# --- the suite's own virtualenvs and processes ------------------------------------------------

def _stop(message: str) -> None:
    """End the session as the suite ends a run it cannot carry out: one line, exit status 2 (nox's
    own session.error would exit 1, which here means non-conformant)."""
    print(f"error: {message}", file=sys.stderr, flush=True)
    sys.exit(2)


def _checked(impl: str, isa: str | None = None) -> str:
    """``impl`` once the suite's own checks that import nothing hold (a release the built-in
    supports, among others, and a cap it offers for ``isa``): before any virtualenv is made for it."""
    try:
        check(impl)
        parse_isa(impl, isa)
    except UsageError as exc:
        _stop(str(exc))
    return impl


def _label(impl: str) -> str:
    """What names a built-in's virtualenv at one release (``openvino-2024.4.0``); "" otherwise."""
    found, release = find(impl), split_release(impl)[1]
    return f"{found[0].word}-{release}" if found and release else ""


def _venv(session: nox.Session, installs: list[str], label: str = "") -> Path | str:
    """The Python of the virtualenv for exactly this set of installs, ``.nox/conformance-<hash>``
    (``conformance-<label>-<hash>`` for a built-in at one release): created once and reused, so
    switching between implementations does not reinstall them. pip runs again only when the
    virtualenv is new or an install is a local path (its code may have changed since). With nox's
    --no-install (or -R) nothing is created or installed: the virtualenv if it exists, else the
    ``python`` of the environment nox runs in. Stops with one line (exit status 2) where pip fails."""
    wanted = sorted({str(Path(i).resolve()) if os.path.exists(i) else i for i in installs})
    digest = hashlib.sha256(json.dumps(wanted).encode()).hexdigest()[:10]
    where = ROOT / ".nox" / "-".join(part for part in ("conformance", label, digest) if part)
    python = where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    marker = where / "argmin-installs.json"
    if _NO_INSTALL:
        return python if python.exists() else "python"
    if not python.exists():
        session.log(f"creating {where} for: {' '.join(wanted)}")
        session.run(sys.executable, "-m", "virtualenv", "-q", str(where), external=True)
    if not marker.exists() or json.loads(marker.read_text()) != wanted or any(map(os.path.exists, wanted)):
        session.log(f"pip install {' '.join(wanted)}")
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", *wanted], capture_output=True, text=True)
        if done.returncode:
            log = where / "pip.log"
            log.write_text(done.stdout + done.stderr)
            _stop(f"{pip_failure(done.stdout + done.stderr)} (pip's output: {log})")
        marker.write_text(json.dumps(wanted))
    else:
        session.log(f"reusing {where} (installed: {' '.join(wanted)})")
    return python


# After Ctrl-C (which the suite receives too) nox waits STOP_S for it to stop, then sends SIGTERM
# (which the suite takes as an interrupt where it has not seen one) and waits REPORT_S for its report
# marked incomplete; by default nox would kill the suite half a second after Ctrl-C.
STOP_S, REPORT_S = 5.0, 120.0


def _sigterm_as_ctrl_c(signum: int, frame: object) -> None:
    """SIGTERM to nox (a CI cancelling the job) stops the suite as Ctrl-C does; once, so that nox
    then waits for the report."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def _run(session: nox.Session, python: Path | str, package: str, args: list[str]) -> int:
    """``package``'s command line (suites or reports) in ``python``, in the folder nox was started
    in: its exit status, with SIGTERM to nox taken as Ctrl-C. The suite's 0/1/2 is the contract (nox
    would make every failure 1), and its verdict lines are the last thing printed."""
    command = [str(python), "-c", _FROM_CHECKOUT.format(package), *args]
    session.log(f"{package} {' '.join(args)}")
    previous = signal.signal(signal.SIGTERM, _sigterm_as_ctrl_c)
    try:
        return _interruptible(command, session.invoked_from)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interruptible(command: list[str], cwd: str) -> int:
    """Run the command; on Ctrl-C (which it receives too) or SIGTERM, stop it as nox's own
    ``interrupt_timeout`` would: wait STOP_S, then SIGTERM and wait REPORT_S for its report, then
    SIGKILL. nox itself, like the suite, is made non-dumpable first: an implementation that runs
    unsandboxed cannot trace it, nor write its output through /proc (a sandboxed one sees no
    process outside its sandbox)."""
    undumpable()
    process = subprocess.Popen(command, cwd=cwd)
    try:
        return process.wait()
    except KeyboardInterrupt:
        for wait, then in ((STOP_S, process.terminate), (REPORT_S, process.kill)):
            try:
                process.wait(wait)
                break
            except subprocess.TimeoutExpired:
                then()
        return 2  # the suite's status for an interrupted run


def _options(session: nox.Session, *declared: tuple[str, dict]) -> tuple[argparse.Namespace, list[str]]:
    """The session's own options among its arguments (each ``(name, argparse keywords)``), and
    the others, for the command it runs."""
    parser = argparse.ArgumentParser(prog=f"nox -s {session.name} --", add_help=False, allow_abbrev=False)
    for name, keywords in declared:
        parser.add_argument(name, **keywords)
    return parser.parse_known_args(session.posargs)


@nox.session(venv_backend="none")
def conformance(session: nox.Session) -> None:
    """Run the suites against one implementation: ``nox -s conformance -- --impl SPEC [options]``.

    ``--install REQUIREMENT_OR_PATH`` (repeatable) pip-installs the implementation under test into
    the session first; a built-in's runtime (openvino, tract) is installed when it is asked for.
    Each set of installs has its own virtualenv, kept between runs. Exit status: 0 conformant,
    1 non-conformant, 2 the run could not be carried out."""
    own, args = _options(session, ("--install", {"action": "append", "default": []}),
                         ("--impl", {"default": DEFAULT_IMPL}))
    installs = [str(Path(session.invoked_from, i)) if os.path.exists(Path(session.invoked_from, i)) else i
                for i in own.install if i]
    with _in(session.invoked_from):  # a plug-in file is the user's
        impl = _checked(own.impl)
    _debian(session, list(runtime_commands(impl)), impl)
    python = _venv(session, [*RUNTIME, *installs, *runtime_distributions(impl)], _label(impl))
    sys.exit(_run(session, python, "suites", ["--impl", impl, *args]))


@contextlib.contextmanager
def _in(where: str) -> Iterator[None]:
    """Inside folder ``where`` for a while (nox changed into the checkout)."""
    before = os.getcwd()
    os.chdir(where)
    try:
        yield
    finally:
        os.chdir(before)


def _one_after_another(session: nox.Session, runs: list[tuple[str, Path, list[str]]], profile: str, seed: str,
                       args: list[str]) -> tuple[list[str], list[str]]:
    """Each (``--impl``, report folder, its own options) of ``runs``, in the implementation's own
    virtualenv, one at a time (each run uses the machine's cores itself): the folders of the runs
    carried out, and the implementations that could not be."""
    carried, failed = [], []
    for impl, folder, own in runs:
        try:
            python = _venv(session, [*RUNTIME, *runtime_distributions(impl)], _label(impl))
        except SystemExit:  # pip failed: said above, and the next implementation runs
            failed.append(impl)
            continue
        code = _run(session, python, "suites", ["--impl", impl, "--profile", profile, "--seed", seed,
                                                "--report-dir", str(folder), *own, *args])
        (carried if code in (0, 1) else failed).append(str(folder) if code in (0, 1) else impl)
    return carried, failed


def _several(session: nox.Session, runs: list[tuple[str, Path, list[str]]], profile: str, seed: str, args: list[str],
             page: tuple[str, Path]) -> None:
    """The runs one after another, then the page (``matrix`` or ``history``) of those carried out;
    exit status 2 where one could not be (its column is missing from the page)."""
    carried, failed = _one_after_another(session, runs, profile, seed, args)
    if carried and _run(session, _venv(session, RUNTIME), "reports", [page[0], *carried, "--out", str(page[1])]):
        failed.append(f"the {page[0]} page")
    if failed:
        session.log(f"could not be carried out: {', '.join(failed)} (see the output above)")
        sys.exit(2)


@nox.session(venv_backend="none")
def ecosystem(session: nox.Session) -> None:
    """Every built-in runtime at one profile and seed, each in its own virtualenv, on one page:
    ``nox -s ecosystem -- [--profile quick] [--seed 1] [--only tvm,iree] [--out runs/ecosystem]
    [suite options, e.g. --versions 13]``. Writes OUT/<runtime>/ and OUT/matrix.html. Exit status
    2 when a run could not be carried out (its column is missing from the page), else 0."""
    words = [runtime.word for runtime in BUILT_IN]
    own, args = _options(session, ("--profile", {"default": "quick"}), ("--seed", {"default": "1"}),
                         ("--only", {"default": ",".join(words)}), ("--out", {"default": "runs/ecosystem"}))
    chosen = [word for word in own.only.split(",") if word]
    unknown = sorted(set(chosen) - set(words))
    if unknown:
        _stop(f"--only {unknown[0]!r} is not a built-in; choose from {', '.join(words)}")
    for word in chosen:
        _debian(session, list(runtime_commands(word)), word)
    out = Path(session.invoked_from, own.out)
    _several(session, [(word, out / word, []) for word in chosen], own.profile, own.seed, args,
             ("matrix", out / "matrix.html"))


@nox.session(venv_backend="none")
def history(session: nox.Session) -> None:
    """One built-in across its releases, each in its own virtualenv (as ``--impl WORD@RELEASE``) at
    one profile and seed, on one page: ``nox -s history -- --impl openvino --releases
    2023.1.0,2024.4.0,2026.4.1 [--isas avx2,native] [--profile quick] [--seed 1] [--out runs/history/WORD]
    [suite options, e.g. --versions 12,13]``. Writes OUT/<release>/ (OUT/<release>-<isa>/, a column each,
    with --isas: each release under each cap, ``--isa``) and OUT/history.html with its data in
    OUT/history.json. Exit status 2 when a release could not be carried out (its column is
    missing from the page), else 0. Without --impl, the page from report folders already made:
    ``nox -s history -- DIR DIR ... --out PAGE.html``."""
    if session.posargs and not any(a.split("=")[0] == "--impl" for a in session.posargs):
        sys.exit(_run(session, _venv(session, RUNTIME), "reports", ["history", *session.posargs]))
    own, args = _options(session, ("--impl", {"default": ""}), ("--releases", {"default": ""}), ("--isas", {}),
                         ("--profile", {"default": "quick"}), ("--seed", {"default": "1"}), ("--out", {}))
    found = find(own.impl)
    if found is None or split_release(own.impl)[1] is not None or found[0].oldest is None:
        _stop(f"--impl {own.impl!r} is not a built-in without a release; name one of "
              f"{', '.join(r.word for r in BUILT_IN)} and list its releases with --releases")
    wanted = sorted({release for release in own.releases.split(",") if release}, key=release_key)
    if not wanted:
        _stop(f"--releases names no release; write e.g. --releases {found[0].oldest},RELEASE")
    out = Path(session.invoked_from, own.out or f"runs/history/{found[0].word}")
    isas = [isa for isa in (own.isas or "").split(",") if isa] or [None]
    runs = [(_checked(f"{own.impl}@{release}", isa), out / "-".join(filter(None, (release, isa))),
             ["--isa", isa] if isa else []) for release in wanted for isa in isas]  # all checked before installing
    _debian(session, list(runtime_commands(own.impl)), own.impl)
    _several(session, runs, own.profile, own.seed, args, ("history", out / "history.html"))


# --- the report tools: each runs `python -m reports COMMAND` in the suite's own virtualenv -------

# Each tool: (its arguments, what it does; its exit status is the session's).
_REPORT_TOOLS = {
    "merge": ("SHARD_DIR [SHARD_DIR ...] --out DIR [--baseline FILE]",
              "One report from a run's --shard K/N folders: exit status as the run's: 0 conformant, 1 not "
              "(or, with a baseline, a new failure), 2 shards that cannot be merged or a shard missing."),
    "baseline": ("REPORT_DIR_OR_JSON --out FILE", "A --baseline expectations file from a report: its failures."),
    "render": ("RAW_OR_REPORT --out DIR [--lang zh-TW]",
               "A report's HTML, JSON and JUnit again, from its raw results or report.json (another language, say)."),
    "compare": ("OLD NEW [--html OUT.html]", "What changed between two runs; exit status 1 on a regression."),
    "matrix": ("RUN_DIR_OR_REPORT.json [...] [--out PAGE.html]", "Several runs on one page."),
    "rebuild": ("REPORT_DIR", "Reports marked incomplete for a run that died before its end, from what it streamed."),
}


def _report_tool(command: str, usage: str, doc: str) -> None:
    """Register ``nox -s COMMAND``: ``python -m reports COMMAND`` with the session's arguments, in
    the suite's own virtualenv (made once, then reused), in the folder nox was started in."""
    def tool(session: nox.Session) -> None:
        if not session.posargs:
            _stop(f"usage: nox -s {command} -- {usage}")
        sys.exit(_run(session, _venv(session, RUNTIME), "reports", [command, *session.posargs]))
    tool.__doc__ = f"{doc} ``nox -s {command} -- {usage}``"
    nox.session(name=command, venv_backend="none")(tool)


for _command, (_usage, _doc) in _REPORT_TOOLS.items():
    _report_tool(_command, _usage, _doc)


@nox.session(venv_backend="none")
def verify(session: nox.Session) -> None:
    """Check a report without the implementation: ``nox -s verify -- REPORT_DIR_OR_JSON
    [--certificate] [--rerun [--yes] [--shard K/N]]``. With --rerun, the implementation the report
    names is first checked as --impl is; then the checks run, and the rerun is shown and confirmed;
    only then is what it needs installed, into a virtualenv of its own, and the run made again,
    sandboxed. Exit status: 0 every check holds, 1 one fails, 2 the report cannot be checked."""
    args = list(session.posargs)
    if not args or args[0].startswith("-"):
        _stop("name a report: nox -s verify -- REPORT_DIR_OR_JSON [--certificate] [--rerun [--yes] [--shard K/N]]")
    if "--rerun" not in args:
        sys.exit(_run(session, _venv(session, RUNTIME), "reports", ["verify", *args]))
    impl = _checked(_recorded_impl(Path(session.invoked_from, args[0])))  # a word --impl refuses: nothing installed
    code = _run(session, _venv(session, RUNTIME), "reports", ["verify", *args, "--confirm-only"])
    if code != 0:  # the checks failed, or the rerun was not confirmed: nothing installed
        sys.exit(code)
    python = _venv(session, [*RUNTIME, *runtime_distributions(impl)], _label(impl))
    sys.exit(_run(session, python, "reports", ["verify", *(a for a in args if a != "--yes"), "--yes"]))


_REPORT_CAP = 256 << 20  # bytes of a report.json read for its implementation word


def _recorded_impl(report: Path) -> str:
    """The --impl value a report's certificate names (read bounded: the report is untrusted)."""
    path = report / "report.json" if report.is_dir() else report
    try:
        with open(path, "rb") as file:
            text = file.read(_REPORT_CAP + 1)
        impl = json.loads(text)["certificate"]["implementation"] if len(text) <= _REPORT_CAP else None
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        impl = None
    if not isinstance(impl, str):
        _stop(f"{path}: names no implementation to run again; pass the report.json a run wrote")
    return impl


# --- the project's own measurements --------------------------------------------------------------

# The tests `minimums` runs: those whose code leans on numpy, onnx, ml_dtypes, Hypothesis and the
# report libraries directly (the spec, generators, oracle, census and reports, with whole runs of
# onnxruntime); the rest, and the other runtimes' own tests, are left to `tests`.
MINIMUM_TESTS = ("test_generators", "test_oracle", "test_spec_files", "test_census", "test_reports", "test_history",
                 "test_installs")


@nox.session
def minimums(session: nox.Session) -> None:
    """The suite's own dependencies at the lowest versions pyproject allows (``numpy>=1.26`` is
    installed as ``numpy==1.26``), with onnxruntime as the implementation the tests run: the
    tests in MINIMUM_TESTS at the quick profile, so a lower bound that no longer works is found."""
    session.install(*lowest(RUNTIME), "onnxruntime")
    # python -m puts the checkout on the path before pytest 8.0 loads the report plugin (addopts),
    # which pytest 8.0 does ahead of the pythonpath setting.
    session.run("python", "-m", "pytest", *(f"tests/{name}.py" for name in MINIMUM_TESTS), "-n", "auto",
                "-m", "not e2e", *session.posargs, env={"ARGMIN_PROFILE": "quick"})


@nox.session
def adequacy(session: nox.Session) -> None:
    """The suite scored on the zoo next to ONNX's own cases: ``nox -s adequacy -- [--profile quick] [--jobs N]``."""
    session.install(*RUNTIME)
    session.run("python", "-m", "zoo.adequacy", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """The project's speed figures, each next to its target: the suite's own costs, certify against
    onnxruntime, the seven built-in runtimes side by side at the standard profile (all versions:
    an hour), and where a judged case's time goes per runtime: ``nox -s bench -- [--repeat N]
    [--skip-runs] [--runtimes onnxruntime,tvm] [--runtimes-profile certify] [--impls
    +tvm,tinygrad,iree] [--versions 13] [--profile quick]``."""
    _debian(session, _RUNTIME_COMMANDS, "the built-in runtimes")
    session.install(*RUNTIME, *nox.project.dependency_groups(PYPROJECT, "test"))
    session.run("python", "benchmarks/bench_all.py", *session.posargs)
