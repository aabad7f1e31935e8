"""What the nox sessions share: the virtualenv of each set of installs, running the suite and the
report tools in it from the user's folder, stopping them as Ctrl-C would, and the system
commands some runtimes need. noxfile.py holds the sessions themselves."""

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

from engine.asking.loader import UsageError, check, located, runtime_distributions
from engine.asking.sandbox import undumpable
from engine.config.isa import parse as parse_isa
from engine.runtimes import find, split_release
from results.terminal import error

from .installs import pip_failure

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = nox.project.load_toml(ROOT / "pyproject.toml")["project"]["dependencies"]

# How the suite and the report tools start in the user's folder: the checkout first on the path,
# so a folder of theirs named like one of the suite's packages shadows nothing.
_FROM_CHECKOUT = f"import sys; sys.path[0:0] = [{str(ROOT)!r}]; from {{}} import main; sys.exit(main())"
# nox's --no-install (and -R, which implies it): reuse a run's virtualenv without pip. nox keeps
# the flag on no public attribute, so it is read from nox's own command line.
NO_INSTALL = any(arg in ("--no-install", "-R") for arg in sys.argv)


def debian(session: nox.Session, commands: list[str], why: str) -> None:
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


# --- the suite's own virtualenvs and processes ------------------------------------------------

def stop(message: str) -> None:
    """End the session as the suite ends a run it cannot carry out: one line, exit status 2 (nox's
    own session.error would exit 1, which here means non-conformant)."""
    error(message)
    sys.exit(2)


def checked(impl: str, isa: str | None = None) -> str:
    """``impl`` once the suite's own checks that import nothing hold (a release the built-in
    supports, among others, and a cap it offers for ``isa``): before any virtualenv is made for it."""
    try:
        check(impl)
        parse_isa(impl, isa)
    except UsageError as exc:
        stop(str(exc))
    return impl


def label(impl: str) -> str:
    """What names a built-in's virtualenv at one release (``openvino-2024.4.0``); "" otherwise."""
    found, release = find(impl), split_release(impl)[1]
    return f"{found[0].word}-{release}" if found and release else ""


def venv(session: nox.Session, installs: list[str], label: str = "") -> Path | str:
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
    if NO_INSTALL:
        return python if os.path.exists(python) else "python"  # one this user may not even see is none
    if not python.exists():
        session.log(f"creating {where} for: {' '.join(wanted)}")
        session.run(sys.executable, "-m", "virtualenv", "-q", str(where), external=True)
    if not marker.exists() or json.loads(marker.read_text()) != wanted or any(map(os.path.exists, wanted)):
        session.log(f"pip install {' '.join(wanted)}")
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", *wanted], capture_output=True, text=True)
        if done.returncode:
            log = where / "pip.log"
            log.write_text(done.stdout + done.stderr)
            stop(f"{pip_failure(done.stdout + done.stderr)} (pip's output: {log})")
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


def run(session: nox.Session, python: Path | str, package: str, args: list[str]) -> int:
    """``package``'s command line (suites, reports, or a module such as engine.judging.replays) in
    ``python``, in the folder nox was started in: its exit status, with SIGTERM to nox taken as
    Ctrl-C. The suite's 0/1/2 is the contract (nox would make every failure 1), and its verdict
    lines are the last thing printed."""
    command = [str(python), "-c", _FROM_CHECKOUT.format(package if "." in package else f"{package}.__main__"), *args]
    session.log(f"{package} {' '.join(args)}")
    previous = signal.signal(signal.SIGTERM, _sigterm_as_ctrl_c)
    try:
        return interruptible(command, session.invoked_from)
    finally:
        signal.signal(signal.SIGTERM, previous)


def interruptible(command: list[str], cwd: str) -> int:
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


def options(session: nox.Session, *declared: tuple[str, dict]) -> tuple[argparse.Namespace, list[str]]:
    """The session's own options among its arguments (each ``(name, argparse keywords)``), and
    the others, for the command it runs."""
    parser = argparse.ArgumentParser(prog=f"nox -s {session.name} --", add_help=False, allow_abbrev=False)
    for name, keywords in declared:
        parser.add_argument(name, **keywords)
    return parser.parse_known_args(session.posargs)


@contextlib.contextmanager
def inside(where: str) -> Iterator[None]:
    """Inside folder ``where`` for a while (nox changed into the checkout)."""
    before = os.getcwd()
    os.chdir(where)
    try:
        yield
    finally:
        os.chdir(before)


def one_after_another(session: nox.Session, runs: list[tuple[str, Path, list[str]]], profile: str, seed: str,
                      args: list[str]) -> tuple[dict[str, Path | str], list[str]]:
    """Each (``--impl``, report folder, its own options) of ``runs``, in the implementation's own
    virtualenv, one at a time (each run uses the machine's cores itself): the folders of the runs
    carried out, each with the Python it ran in, and the implementations that could not be."""
    carried, failed = {}, []
    for impl, folder, own in runs:
        try:
            python = venv(session, [*RUNTIME, *runtime_distributions(impl)], label(impl))
        except SystemExit:  # pip failed: said above, and the next implementation runs
            failed.append(impl)
            continue
        code = run(session, python, "suites", ["--impl", impl, "--profile", profile, "--seed", seed,
                                               "--report-dir", str(folder), *own, *args])
        if code in (0, 1):
            carried[str(folder)] = python
        else:
            failed.append(impl)
    return carried, failed


def several(session: nox.Session, runs: list[tuple[str, Path, list[str]]], profile: str, seed: str, args: list[str],
             page: tuple[str, Path]) -> None:
    """The runs one after another; then each run's implementation asked the others'
    counterexamples, in its own virtualenv and sandbox (engine.judging.replays); then the page
    (``matrix`` or ``history``) of the runs carried out. Exit status 2 where one could not be
    (its column is missing from the page)."""
    carried, failed = one_after_another(session, runs, profile, seed, args)
    for folder, python in carried.items() if len(carried) > 1 else ():
        if run(session, python, "engine.judging.replays", [folder, "--from", *carried, "--sandbox", "auto"]):
            failed.append(f"the replays in {folder}")
    if carried and run(session, venv(session, RUNTIME), "reports", [page[0], *carried, "--out", str(page[1])]):
        failed.append(f"the {page[0]} page")
    if failed:
        session.log(f"could not be carried out: {', '.join(failed)} (see the output above)")
        sys.exit(2)


_REPORT_CAP = 256 << 20  # bytes of a report.json read for its implementation word


def recorded_impl(report: Path) -> str:
    """The --impl value a report's certificate names (read bounded: the report is untrusted), as
    the process started in the current folder loads it (engine.asking.loader.located: a plug-in
    file by a relative path from here, else from the folder the run was started in)."""
    path = report / "report.json" if report.is_dir() else report
    try:
        with open(path, "rb") as file:
            text = file.read(_REPORT_CAP + 1)
        document = json.loads(text) if len(text) <= _REPORT_CAP else {}
        impl = document["certificate"]["implementation"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        impl = None
    if not isinstance(impl, str):
        stop(f"{path}: names no implementation to run again; pass the report.json a run wrote")
    run = document.get("run")
    started_in = run.get("started_in") if isinstance(run, dict) else None  # absent from older reports
    try:
        return located(impl, started_in if isinstance(started_in, str) else None)
    except UsageError as exc:
        stop(str(exc))
