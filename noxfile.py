"""Sessions: ``conformance`` (the front door), ``tests`` (the project's own tests, minutes),
``e2e`` (the long end-to-end runs: every zoo entry through the whole suite, adequacy), ``lint``
(ruff), ``docs`` (the documentation site, built strictly), ``minimums`` (tests at the lowest
dependency versions pyproject allows), and ``compare``, ``matrix``, ``ecosystem``, ``history``,
``merge``, ``verify``, ``adequacy``, ``bench``."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import nox

# The --impl grammar is read from the suite itself (engine.loader imports only the standard
# library); the checkout leaves the import path again so its generic folder names shadow nothing.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine.installs import lowest, pip_failure
from engine.loader import DEFAULT_IMPL, UsageError, check, runtime_commands, runtime_distributions
from engine.runtimes import BUILT_IN, find, split_release
from engine.runtimes.entry import release_key
from engine.sandbox import undumpable

sys.path.pop(0)

nox.options.default_venv_backend = "virtualenv"
nox.options.sessions = ["tests", "lint"]

PYPROJECT = nox.project.load_toml("pyproject.toml")
RUNTIME = PYPROJECT["project"]["dependencies"]


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
    """The long end-to-end runs: every zoo entry through the whole suite, and adequacy."""
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


def _pop_installs(args: list[str]) -> tuple[list[str], list[str]]:
    """Split ``--install X`` pairs (things to pip-install into the session) from the other arguments."""
    installs, rest = [], []
    pending = iter(args)
    for arg in pending:
        if arg == "--install":
            installs.append(next(pending, ""))
        elif arg.startswith("--install="):
            installs.append(arg.split("=", 1)[1])
        else:
            rest.append(arg)
    return [i for i in installs if i], rest


# After Ctrl-C (which the suite receives too) nox waits STOP_S for it to stop, then sends SIGTERM
# (which the suite takes as an interrupt where it has not seen one) and waits REPORT_S for its report
# marked incomplete; by default nox would kill the suite half a second after Ctrl-C.
STOP_S, REPORT_S = 5.0, 120.0


def _sigterm_as_ctrl_c(signum: int, frame: object) -> None:
    """SIGTERM to nox (a CI cancelling the job) stops the suite as Ctrl-C does; once, so that nox
    then waits for the report."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def _pop_option(args: list[str], name: str, default: str) -> tuple[str, list[str]]:
    """The value of ``--name VALUE`` (or ``--name=VALUE``) among ``args``, and the other arguments."""
    value, rest = default, []
    pending = iter(args)
    for arg in pending:
        if arg == name:
            value = next(pending, default)
        elif arg.startswith(f"{name}="):
            value = arg.split("=", 1)[1]
        else:
            rest.append(arg)
    return value, rest


def _local(requirement: str) -> bool:
    """A requirement that names a folder or file here (pip installs the code as it is now)."""
    return os.path.exists(requirement)


def _stop(message: str) -> None:
    """End the session as the suite ends a run it cannot carry out: one line, exit status 2 (nox's
    own session.error would exit 1, which here means non-conformant)."""
    print(f"error: {message}", file=sys.stderr, flush=True)
    sys.exit(2)


def _checked(impl: str) -> str:
    """``impl`` once the suite's own checks that import nothing hold (a release the built-in
    supports, among others): before any virtualenv is made for it."""
    try:
        check(impl)
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
    ``python`` of the environment nox runs in. Raises UsageError (one line) where pip fails."""
    wanted = sorted({str(Path(i).resolve()) if _local(i) else i for i in installs})
    digest = hashlib.sha256(json.dumps(wanted).encode()).hexdigest()[:10]
    where = Path(".nox") / "-".join(part for part in ("conformance", label, digest) if part)
    python = where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    marker = where / "argmin-installs.json"
    # nox keeps its command line's --no-install on the runner's global config (no public accessor).
    if session._runner.global_config.no_install:
        return python if python.exists() else "python"
    if not python.exists():
        session.log(f"creating {where} for: {' '.join(wanted)}")
        session.run(sys.executable, "-m", "virtualenv", "-q", str(where), external=True)
    if not marker.exists() or json.loads(marker.read_text()) != wanted or any(map(_local, wanted)):
        session.log(f"pip install {' '.join(wanted)}")
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", *wanted], capture_output=True, text=True)
        if done.returncode:
            log = where / "pip.log"
            log.write_text(done.stdout + done.stderr)
            raise UsageError(f"{pip_failure(done.stdout + done.stderr)} (pip's output: {log})")
        marker.write_text(json.dumps(wanted))
    else:
        session.log(f"reusing {where} (installed: {' '.join(wanted)})")
    return python


@nox.session(venv_backend="none")
def conformance(session: nox.Session) -> None:
    """Run the suites against one implementation: ``nox -s conformance -- --impl SPEC [options]``.

    ``--install REQUIREMENT_OR_PATH`` (repeatable) pip-installs the implementation under test into
    the session first; a built-in's runtime (openvino, tract) is installed when it is asked for.
    Each set of installs has its own virtualenv, kept between runs. Exit status: 0 conformant,
    1 non-conformant, 2 the run could not be carried out."""
    installs, args = _pop_installs(list(session.posargs))
    impl = _checked(_pop_option(args, "--impl", DEFAULT_IMPL)[0])
    _debian(session, list(runtime_commands(impl)), impl)
    python = _python(session, [*RUNTIME, *installs, *runtime_distributions(impl)], _label(impl))
    command = [str(python), "-m", "suites", *args]
    session.log(" ".join(command))
    sys.exit(_interruptible(command))


def _interruptible(command: list[str]) -> int:
    """The suite's exit status, with SIGTERM to nox taken as Ctrl-C (see _sigterm_as_ctrl_c)."""
    previous = signal.signal(signal.SIGTERM, _sigterm_as_ctrl_c)
    try:
        # The suite's 0/1/2 is the contract (nox would make every failure 1), and its verdict lines
        # are the last thing printed: no "Command ... failed" line after them.
        return _suite(command)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _suite(command: list[str]) -> int:
    """Run the suite; on Ctrl-C (which the suite receives too) or SIGTERM, stop it as nox's own
    ``interrupt_timeout`` would: wait STOP_S, then SIGTERM and wait REPORT_S for its report, then
    SIGKILL. nox itself, like the suite, is made non-dumpable first: an implementation that runs
    unsandboxed cannot trace it, nor write its output through /proc (a sandboxed one sees no
    process outside its sandbox)."""
    undumpable()
    process = subprocess.Popen(command)
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


@nox.session
def compare(session: nox.Session) -> None:
    """What changed between two runs: ``nox -s compare -- OLD.json NEW.json [--html OUT]``; fails on a regression."""
    if len(session.posargs) < 2:
        session.error("usage: nox -s compare -- OLD.json NEW.json [--html OUT.html]")
    session.install(*RUNTIME, *nox.project.dependency_groups(PYPROJECT, "test"))
    session.run("python", "-m", "reports", "compare", *session.posargs)


@nox.session
def matrix(session: nox.Session) -> None:
    """Several runs on one page: ``nox -s matrix -- A/report.json B/report.json ... [--out PAGE.html]``."""
    if not session.posargs:
        session.error("usage: nox -s matrix -- RUN_DIR_OR_REPORT.json [...] [--out PAGE.html]")
    session.install(*RUNTIME)
    session.run("python", "-m", "reports", "matrix", *session.posargs)


def _one_after_another(session: nox.Session, runs: dict[str, Path], profile: str, seed: str,
                       args: list[str]) -> tuple[list[str], list[str]]:
    """Each ``--impl`` of ``runs`` into its report folder, in its own virtualenv, one at a time
    (each run uses the machine's cores itself): the folders of the runs carried out, and the
    implementations that could not be."""
    carried, failed = [], []
    for impl, folder in runs.items():
        try:
            python = _venv(session, [*RUNTIME, *runtime_distributions(impl)], _label(impl))
        except UsageError as exc:
            session.log(f"{impl}: {exc}")
            failed.append(impl)
            continue
        command = [str(python), "-m", "suites", "--impl", impl, "--profile", profile, "--seed", seed,
                   "--report-dir", str(folder), *args]
        session.log(" ".join(command))
        code = _interruptible(command)
        (carried if code in (0, 1) else failed).append(str(folder) if code in (0, 1) else impl)
    return carried, failed


@nox.session(venv_backend="none")
def ecosystem(session: nox.Session) -> None:
    """Every built-in runtime at one profile and seed, each in its own virtualenv, on one page:
    ``nox -s ecosystem -- [--profile quick] [--seed 1] [--only tvm,iree] [--out runs/ecosystem]
    [suite options, e.g. --versions 13]``. Writes OUT/<runtime>/ and OUT/matrix.html. Exit status
    2 when a run could not be carried out (its column is missing from the page), else 0."""
    args = list(session.posargs)
    profile, args = _pop_option(args, "--profile", "quick")
    seed, args = _pop_option(args, "--seed", "1")
    out, args = _pop_option(args, "--out", "runs/ecosystem")
    only, args = _pop_option(args, "--only", ",".join(runtime.word for runtime in BUILT_IN))
    words = [word for word in only.split(",") if word]
    unknown = sorted(set(words) - {runtime.word for runtime in BUILT_IN})
    if unknown:
        session.error(f"--only {unknown[0]!r} is not a built-in; choose from "
                      f"{', '.join(runtime.word for runtime in BUILT_IN)}")
    for word in words:
        _debian(session, list(runtime_commands(word)), word)
    carried, failed = _one_after_another(session, {word: Path(out) / word for word in words}, profile, seed, args)
    if carried:
        session.run(str(_venv(session, RUNTIME)), "-m", "reports", "matrix", *carried, "--out",
                    str(Path(out) / "matrix.html"), external=True)
    if failed:
        session.log(f"could not be carried out: {', '.join(failed)} (see its output above)")
        sys.exit(2)


@nox.session(venv_backend="none")
def history(session: nox.Session) -> None:
    """One built-in across its releases, each in its own virtualenv (as ``--impl WORD@RELEASE``) at
    one profile and seed, on one page: ``nox -s history -- --impl openvino --releases
    2023.1.0,2024.4.0,2026.4.1 [--profile quick] [--seed 1] [--out runs/history/WORD] [suite options,
    e.g. --versions 12,13]``. Writes OUT/<release>/ and OUT/history.html with its data in
    OUT/history.json. Exit status 2 when a release could not be carried out (its column is
    missing from the page), else 0."""
    args = list(session.posargs)
    impl, args = _pop_option(args, "--impl", "")
    releases, args = _pop_option(args, "--releases", "")
    profile, args = _pop_option(args, "--profile", "quick")
    seed, args = _pop_option(args, "--seed", "1")
    found = find(impl)
    if found is None or split_release(impl)[1] is not None or found[0].oldest is None:
        _stop(f"--impl {impl!r} is not a built-in without a release; name one of "
              f"{', '.join(r.word for r in BUILT_IN)} and list its releases with --releases")
    wanted = sorted({release for release in releases.split(",") if release}, key=release_key)
    if not wanted:
        _stop(f"--releases names no release; write e.g. --releases {found[0].oldest},RELEASE")
    out, args = _pop_option(args, "--out", f"runs/history/{found[0].word}")
    for release in wanted:  # every release checked before the first is installed
        _checked(f"{impl}@{release}")
    _debian(session, list(runtime_commands(impl)), impl)
    runs = {f"{impl}@{release}": Path(out) / release for release in wanted}
    carried, failed = _one_after_another(session, runs, profile, seed, args)
    if carried:
        session.run(str(_venv(session, RUNTIME)), "-m", "reports", "history", *carried, "--out",
                    str(Path(out) / "history.html"), external=True)
    if failed:
        session.log(f"could not be carried out: {', '.join(failed)} (see the output above)")
        sys.exit(2)


@nox.session
def merge(session: nox.Session) -> None:
    """One report from a run's ``--shard K/N`` folders: ``nox -s merge -- SHARD_DIR... --out DIR
    [--baseline FILE]``. Exit status as the run's: 0 conformant, 1 not (or, with a baseline, a new
    failure), 2 shards that cannot be merged or a shard missing."""
    if not session.posargs:
        session.error("usage: nox -s merge -- SHARD_DIR [SHARD_DIR ...] --out DIR [--baseline FILE]")
    session.install(*RUNTIME)
    try:
        session.run("python", "-m", "reports", "merge", *session.posargs)
    except nox.command.CommandFailed as failed:
        sys.exit(failed.return_code or 2)  # nox would make every failure 1; 0/1/2 is the contract


@nox.session(venv_backend="none")
def verify(session: nox.Session) -> None:
    """Check a report without the implementation: ``nox -s verify -- REPORT_DIR_OR_JSON
    [--certificate] [--rerun [--yes] [--shard K/N]]``, in the suite's own virtualenv (made once,
    then reused). With --rerun, the implementation the report names is first checked as --impl is;
    then the checks run, and the rerun is shown and confirmed; only then is what it needs installed,
    into a virtualenv of its own, and the run made again, sandboxed. Exit status: 0 every check
    holds, 1 one fails, 2 the report cannot be checked."""
    args = list(session.posargs)
    if not args or args[0].startswith("-"):
        _stop("name a report: nox -s verify -- REPORT_DIR_OR_JSON [--certificate] [--rerun [--yes] [--shard K/N]]")
    args[0] = str(Path(session.invoked_from, args[0]))
    rerun = "--rerun" in args
    impl = _checked(_recorded_impl(Path(args[0]))) if rerun else None  # a word --impl refuses: nothing installed
    command = [str(_python(session, RUNTIME)), "-m", "reports", "verify", *args]
    if impl is None:
        sys.exit(_interruptible(command))
    code = _interruptible([*command, "--confirm-only"])  # the checks, then the rerun shown and confirmed
    if code != 0:
        sys.exit(code)
    python = _python(session, [*RUNTIME, *runtime_distributions(impl)], _label(impl))
    sys.exit(_interruptible([str(python), "-m", "reports", "verify", *(a for a in args if a != "--yes"), "--yes"]))


def _python(session: nox.Session, installs: list[str], label: str = "") -> Path | str:
    """``_venv``, or the one line of exit status 2 where pip fails."""
    try:
        return _venv(session, installs, label)
    except UsageError as exc:
        _stop(str(exc))


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
