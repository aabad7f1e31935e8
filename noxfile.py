"""Sessions: ``conformance`` (the front door), ``tests`` (the project's own tests, minutes),
``e2e`` (the long end-to-end runs: every zoo entry through the whole suite, adequacy), ``lint``
(ruff), ``docs`` (the documentation site, built strictly), and ``compare``, ``matrix``,
``ecosystem``, ``merge``, ``verify``, ``adequacy``, ``bench``."""

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

# The --impl grammar is read from the suite itself (engine.plugins imports only the standard
# library); the checkout leaves the import path again so its generic folder names shadow nothing.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine.plugins import DEFAULT_IMPL, runtime_commands, runtime_distributions
from engine.runtimes import BUILT_IN
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


def _venv(session: nox.Session, installs: list[str]) -> Path | str:
    """The Python of the virtualenv for exactly this set of installs, ``.nox/conformance-<hash>``:
    created once and reused, so switching between implementations does not reinstall them. pip
    runs again only when the virtualenv is new or an install is a local path (its code may have
    changed since). With nox's --no-install (or -R) nothing is created or installed: the
    virtualenv if it exists, else the ``python`` of the environment nox runs in."""
    wanted = sorted({str(Path(i).resolve()) if _local(i) else i for i in installs})
    digest = hashlib.sha256(json.dumps(wanted).encode()).hexdigest()[:10]
    where = Path(".nox") / f"conformance-{digest}"
    python = where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    marker = where / "argmin-installs.json"
    # nox keeps its command line's --no-install on the runner's global config (no public accessor).
    if session._runner.global_config.no_install:
        return python if python.exists() else "python"
    if not python.exists():
        session.log(f"creating {where} for: {' '.join(wanted)}")
        session.run(sys.executable, "-m", "virtualenv", "-q", str(where), external=True)
    if not marker.exists() or json.loads(marker.read_text()) != wanted or any(map(_local, wanted)):
        session.run(str(python), "-m", "pip", "install", "-q", *wanted, external=True)
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
    impl = _pop_option(args, "--impl", DEFAULT_IMPL)[0]
    _debian(session, list(runtime_commands(impl)), impl)
    python = _venv(session, [*RUNTIME, *installs, *runtime_distributions(impl)])
    command = [str(python), "-m", "suites", *args]
    session.log(" ".join(command))
    previous = signal.signal(signal.SIGTERM, _sigterm_as_ctrl_c)
    try:
        code = _suite(command)
    finally:
        signal.signal(signal.SIGTERM, previous)
    # The suite's 0/1/2 is the contract (nox would make every failure 1), and its verdict lines are
    # the last thing printed: no "Command ... failed" line after them.
    sys.exit(code)


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
    carried, failed = [], []
    for word in words:  # one at a time: each run uses the machine's cores itself
        _debian(session, list(runtime_commands(word)), word)
        python = _venv(session, [*RUNTIME, *runtime_distributions(word)])
        folder = Path(out) / word
        command = [str(python), "-m", "suites", "--impl", word, "--profile", profile, "--seed", seed,
                   "--report-dir", str(folder), *args]
        session.log(" ".join(command))
        code = _suite(command)
        (carried if code in (0, 1) else failed).append(str(folder) if code in (0, 1) else word)
    if carried:
        session.run(str(_venv(session, RUNTIME)), "-m", "reports", "matrix", *carried, "--out",
                    str(Path(out) / "matrix.html"), external=True)
    if failed:
        session.log(f"could not be carried out: {', '.join(failed)} (see its output above)")
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


@nox.session
def verify(session: nox.Session) -> None:
    """Check a report without the implementation: ``nox -s verify -- REPORT_DIR_OR_JSON [--rerun [--yes]]``.
    Exit status: 0 every check holds, 1 one fails, 2 the report cannot be checked."""
    if not session.posargs:
        session.error("usage: nox -s verify -- REPORT_DIR_OR_JSON [--rerun [--yes]]")
    session.install(*RUNTIME)
    try:
        session.run("python", "-m", "reports", "verify", *session.posargs)
    except nox.command.CommandFailed as failed:
        sys.exit(failed.return_code or 2)  # nox would make every failure 1; 0/1/2 is the contract


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
