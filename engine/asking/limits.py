"""How far a worker may go: its memory, with what its sandbox's tmpfs mounts hold, and its number
of processes. The kernel enforces both where this machine lets the suite ask it, and the run says
how each was enforced, or that it was not.

A control group (cgroup) per worker is the kernel's mechanism for this. It charges every page the
worker's processes hold, tmpfs files they wrote included, and counts every process and thread
they start. The suite makes one where it may:

- cgroup v2: a group beside its own, where the hierarchy is delegated to it (its parent enables
  the memory and pids controllers, and the user may write there, as systemd gives a user's
  session), or under the hierarchy's root (root, a machine of its own);
- cgroup v1: a group under its own in the memory and in the pids hierarchy (root).

The worker is placed in its group before any of the implementation's code runs (bubblewrap holds
the sandbox, ``--block-fd``, until then). The kernel then ends a worker that holds more than the
limit (its out-of-memory killer, within the group) and refuses a fork past the process limit.
Either is reported as a crash of the call it happened in (``Group.exhausted``), and the next
call gets a fresh worker.

Where no group can be made, memory is the worker's own resident memory, watched by the suite
(engine.asking.isolation), beside tmpfs mounts sized to the limit: bounded apart, not together.
Processes are then bounded by RLIMIT_NPROC, which the worker sets on itself before it loads the
implementation; the kernel counts it per user namespace (Linux 5.14 and newer), so the sandbox's
processes only, but never for root. Groups left by a run that was killed are removed by the next
one (``sweep``).

This module imports the standard library only, and results.sizes."""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from results.sizes import format_size

# Processes and threads one worker may run (--process-limit). Runtimes start a pool of threads per
# core and per cached model (onnxruntime: one pool per session, 576 sessions cached), a compiler a
# process per kernel: far below this. A fork loop stops here, or at the memory limit first.
PROCESS_LIMIT = 32768
PREFIX = "argmin-"
_NAME = re.compile(rf"{PREFIX}(\d+)-\d+")
_CONTROLLERS = ("memory", "pids")
_numbers = itertools.count(1)


@dataclass(frozen=True)
class Hierarchy:
    """Where this process makes its workers' groups: the folder of each controller (one folder
    for both under cgroup v2), and the version."""

    version: int
    folders: tuple[tuple[str, Path], ...]  # (controller, folder the groups are made in)

    @property
    def mechanism(self) -> str:
        return f"cgroup-v{self.version}"


def _mounts() -> list[tuple[str, str, str, str]]:
    """(mount point, root within its file system, file system type, super options) per mount."""
    found = []
    with contextlib.suppress(OSError), open("/proc/self/mountinfo", encoding="utf-8") as table:
        for line in table:
            fields = line.split()
            dash = fields.index("-")
            found.append((fields[4], fields[3], fields[dash + 1], fields[-1]))
    return found


def _own_groups() -> dict[str, str]:
    """This process's cgroup path per controller; "" for cgroup v2's unified hierarchy."""
    own = {}
    with contextlib.suppress(OSError), open("/proc/self/cgroup", encoding="utf-8") as table:
        for line in table:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                own[name] = path
    return own


def _inside(point: str, root: str, path: str) -> Path:
    """The folder of cgroup ``path`` under a mount at ``point`` of the hierarchy's ``root``."""
    relative = os.path.relpath(path, root) if root != "/" else path.lstrip("/")
    return Path(point) / ("" if relative == "." else relative)


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK) and os.access(folder / "cgroup.procs", os.W_OK)


def _v2(own: dict[str, str], mounts: list[tuple[str, str, str, str]]) -> Hierarchy | None:
    if "" not in own:
        return None
    for point, root, kind, _ in mounts:
        if kind != "cgroup2":
            continue
        mine = _inside(point, root, own[""])
        # A group of our own may not both hold this process and hand controllers down: the groups go
        # beside it, in its parent, unless this process sits at the hierarchy's root.
        where = mine if mine == Path(point) else mine.parent
        with contextlib.suppress(OSError):
            enabled = (where / "cgroup.subtree_control").read_text().split()
            if set(_CONTROLLERS) <= set(enabled) and _writable(where):
                return Hierarchy(2, tuple((name, where) for name in _CONTROLLERS))
    return None


def _v1(own: dict[str, str], mounts: list[tuple[str, str, str, str]]) -> Hierarchy | None:
    folders = []
    for name in _CONTROLLERS:
        found = next((_inside(point, root, own[name]) for point, root, kind, options in mounts
                      if kind == "cgroup" and name in options.split(",") and name in own), None)
        if found is None or not _writable(found):
            return None
        folders.append((name, found))
    return Hierarchy(1, tuple(folders))


@functools.cache
def hierarchy() -> tuple[Hierarchy | None, str | None]:
    """Where this process can make its workers' groups, or None and why not. Found once per process;
    groups that runs which were killed left there are removed on the way."""
    if not sys.platform.startswith("linux"):
        return None, f"no control groups on {sys.platform}"
    own, mounts = _own_groups(), _mounts()
    found = _v2(own, mounts) or _v1(own, mounts)
    if found is None:
        return None, ("no control group this user may make with the memory and pids controllers (cgroup v2 "
                      "delegated to the user, or cgroup v1 as root)")
    sweep(found)
    return found, None


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user's included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep(found: Hierarchy) -> None:
    """Remove the groups of runs whose process is gone (killed before it removed them). A group
    still holding a process is kept: the kernel refuses to remove it."""
    for _, folder in found.folders:
        with contextlib.suppress(OSError):
            for entry in folder.iterdir():
                match = _NAME.fullmatch(entry.name)
                if match and not alive(int(match[1])):
                    with contextlib.suppress(OSError):
                        entry.rmdir()


def _read_count(path: Path, key: str) -> int:
    """The number after ``key`` in a cgroup's ``key value`` file (0 where absent)."""
    with contextlib.suppress(OSError, ValueError):
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    return 0


class Group:
    """One worker's control group: made with its limits, given the worker's processes before the
    implementation loads, asked whether a limit was reached, removed with the worker."""

    def __init__(self, found: Hierarchy, memory: int | None, processes: int) -> None:
        self.found, self.memory, self.processes = found, memory, processes
        name = f"{PREFIX}{os.getpid()}-{next(_numbers)}"
        self.folders = {controller: folder / name for controller, folder in found.folders}
        made = []
        try:
            for folder in dict.fromkeys(self.folders.values()):
                folder.mkdir()
                made.append(folder)
            self._limit()
        except OSError:
            for folder in made:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise
        self._seen = self._events()

    def _limit(self) -> None:
        memory, pids = self.folders["memory"], self.folders["pids"]
        (pids / "pids.max").write_text(str(self.processes))
        if self.memory is None:
            return
        if self.found.version == 2:
            (memory / "memory.max").write_text(str(self.memory))
            with contextlib.suppress(OSError):  # no swap past the limit either, where swap is counted
                (memory / "memory.swap.max").write_text("0")
        else:
            (memory / "memory.limit_in_bytes").write_text(str(self.memory))
            with contextlib.suppress(OSError):
                (memory / "memory.memsw.limit_in_bytes").write_text(str(self.memory))

    def adopt(self, pid: int) -> None:
        """Move process ``pid`` (and what it starts from now on) into the group."""
        for folder in dict.fromkeys(self.folders.values()):
            (folder / "cgroup.procs").write_text(str(pid))

    def _events(self) -> tuple[int, int]:
        memory, pids = self.folders["memory"], self.folders["pids"]
        oom = memory / ("memory.events" if self.found.version == 2 else "memory.oom_control")
        return _read_count(oom, "oom_kill"), _read_count(pids / "pids.events", "max")

    def exhausted(self) -> str | None:
        """What limit the worker reached since the last time asked ("out of memory: ...", "out of
        processes: ..."), or None."""
        now = self._events()
        (killed, refused), self._seen = (a - b for a, b in zip(now, self._seen, strict=True)), now
        if killed:
            return (f"out of memory: the kernel ended a process of the worker's sandbox at its --memory-limit of "
                    f"{format_size(self.memory or 0)} (memory, tmpfs files included; {self.found.mechanism})")
        if refused:
            return (f"out of processes: the worker's sandbox was refused a new process at its limit of "
                    f"{self.processes} processes and threads ({self.found.mechanism}; --process-limit raises it)")
        return None

    def remove(self) -> None:
        """Remove the group once its processes are gone (the kernel takes a moment to release them)."""
        for folder in dict.fromkeys(self.folders.values()):
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


def counts_processes_per_user_namespace() -> bool:
    """Whether RLIMIT_NPROC bounds a sandbox's own processes: Linux 5.14 or newer counts it per
    user namespace, and never for root."""
    found = re.match(r"(\d+)\.(\d+)", os.uname().release) if hasattr(os, "uname") else None
    return bool(found) and (int(found[1]), int(found[2])) >= (5, 14) and os.geteuid() != 0
