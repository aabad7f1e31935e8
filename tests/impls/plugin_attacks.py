"""Plug-ins that attack the run from outside their answers, as an earlier version of the suite let
them: each is broken (int32 indices for uint8 inputs: an honest run is NON-CONFORMANT, exit 1),
makes its attack on its first call, and says in its output (the implementation's log) what was
refused. The run's report folder, where an attack needs it, is $ARGMIN_FORGE_DIR (an unsandboxed
plug-in finds it in its ancestors' command lines anyway)."""

from __future__ import annotations

import ctypes
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

FORGED_LINE = "  ArgMin-13: CONFORMANT; scope: all 12 types of T implemented (FORGED)"
# Files an attack replaces with links, and where they point (outside the report folder).
LINKED = ("report.json", "report.html", "junit.xml", "raw.json.gz")
_done: list[str] = []


def broken(data: np.ndarray, attributes: dict[str, int]) -> np.ndarray:
    found = np.argmin(data, axis=attributes.get("axis", 0), keepdims=bool(attributes.get("keepdims", 1)))
    return found.astype(np.int32) if data.dtype == np.uint8 else found


def _once(attack: Callable[[], None]) -> None:
    """Make ``attack`` on this worker's first call; what refuses it goes to the log."""
    if _done:
        return
    _done.append(attack.__name__)
    try:
        attack()
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"{attack.__name__} refused: {exc}", file=sys.stderr, flush=True)


def _report_dir() -> Path:
    return Path(os.environ["ARGMIN_FORGE_DIR"])


# --- a poisoned checkout -------------------------------------------------------------------------

def _poison() -> None:
    """Edit a tracked file of the checkout the run started in (its current folder) and hide the
    edit from ``git status`` with skip-worktree."""
    with open("reports/folders/verify.py", "a", encoding="utf-8") as module:
        module.write("\n# poisoned\n")
    subprocess.run(["git", "update-index", "--skip-worktree", "reports/folders/verify.py"], check=True,
                   capture_output=True)


def poison(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    _once(_poison)
    return broken(data, attributes)


# --- a detached forger ---------------------------------------------------------------------------

def _daemon() -> None:
    """A double-forked, setsid daemon: once the run has written its report and gone (its stream
    removed), it rewrites the verdict in report.json; it gives up after a minute."""
    if os.fork():
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    report = _report_dir() / "report.json"
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            time.sleep(0.1)
            if report.exists() and not (_report_dir() / ".stream").exists():
                time.sleep(0.5)  # the owner has exited by now
                report.write_text(report.read_text().replace('"non-conformant"', '"conformant"'))
                break
    finally:
        os._exit(0)


def detached_forger(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    _once(_daemon)
    return broken(data, attributes)


# --- nox's stdout and memory ---------------------------------------------------------------------

def _ancestors() -> list[int]:
    """This process's ancestors, as far as its /proc shows them (not the first process)."""
    found, pid = [], os.getppid()
    while pid > 1:
        found.append(pid)
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            break
        pid = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
    return found


def _exit_zero(pid: int) -> None:
    """Make process ``pid`` exit with status 0 through ptrace (x86-64): stop it where it waits in
    a system call, point it at that syscall instruction again with exit_group(0), let it go."""
    libc = ctypes.CDLL(None, use_errno=True)
    attach, getregs, setregs, detach = 16, 12, 13, 17  # PTRACE_ATTACH, _GETREGS, _SETREGS, _DETACH
    if libc.ptrace(attach, pid, None, None) != 0:
        raise OSError(ctypes.get_errno(), f"ptrace of {pid}: {os.strerror(ctypes.get_errno())}")
    os.waitpid(pid, 0x40000000)  # __WALL: it is stopped
    regs = (ctypes.c_ulonglong * 27)()  # struct user_regs_struct
    libc.ptrace(getregs, pid, None, regs)
    rax, rip, orig_rax, rdi = 10, 16, 15, 14
    regs[rip] -= 2  # back onto its `syscall` instruction
    regs[rax], regs[orig_rax], regs[rdi] = 231, 2**64 - 1, 0  # exit_group(0), no restart of the old call
    libc.ptrace(setregs, pid, None, regs)
    libc.ptrace(detach, pid, None, 0)


def _nox() -> None:
    """Write a forged verdict line to the standard output of every ancestor that lets it, and make
    the one running nox exit 0."""
    for pid in _ancestors():
        try:
            with open(f"/proc/{pid}/fd/1", "w") as out:
                out.write(f"{FORGED_LINE}\n")
        except OSError as exc:
            print(f"stdout of {pid} refused: {exc}", file=sys.stderr, flush=True)
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:3]  # nox ..., or python -m nox ...
        if b"nox" in {os.path.basename(word) for word in words} and platform.machine() == "x86_64":
            _exit_zero(pid)
            os.kill(os.getppid(), signal.SIGKILL)  # and the owner goes, so nothing contradicts it


def nox_stdout(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    _once(_nox)
    return broken(data, attributes)


# --- links planted in the report folder ----------------------------------------------------------

def _links() -> None:
    """Replace the files the run will write with links to a folder beside the report folder."""
    elsewhere = Path(f"{_report_dir()}-elsewhere")
    for name in LINKED:
        link = _report_dir() / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(elsewhere / name)


def plants_links(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    _once(_links)
    return broken(data, attributes)
