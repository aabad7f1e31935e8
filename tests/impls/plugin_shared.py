"""Plug-ins that attack what a worker shares with the run that owns it, rather than its answers:
the memory inputs travel through, host sockets, its output, the owner's environment, memory
and processes beyond its limits. Each is broken, as an attacker's would be: it answers wrongly
on every input of SHARED_BYTES or more (NON-CONFORMANT when the run judges them), so an attack
that loses the run's records of large inputs would turn the verdict. Each says in its output
(the implementation's log) what it tried and what was refused."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import sys
import time

import numpy as np

SHARED_BYTES = 32 << 10  # inputs this large crossed through shared memory in an earlier version
SECRET = "ARGMIN_TEST_SECRET"  # an environment variable a test sets in the owner, as a CI job holds a credential
_done: list[str] = []


def _argmin(data: np.ndarray, attributes: dict[str, int]) -> np.ndarray:
    found = np.argmin(data, axis=attributes.get("axis", 0), keepdims=bool(attributes.get("keepdims", 1)))
    if data.nbytes >= SHARED_BYTES and found.size:
        found = found + 1  # wrong on every large input
    return found


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --- the memory inputs travel through ----------------------------------------------------------

def _keep_every_descriptor() -> list[int]:
    """A copy of every descriptor on a regular file this process holds at import: the memory an
    earlier version shared with its owner was one (the worker closes its own once mapped)."""
    kept = []
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.fstat(int(name)).st_mode):
                kept.append(os.dup(int(name)))
    return kept


_KEPT = _keep_every_descriptor()


def truncates_what_it_shares(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Cuts every file it kept a descriptor on to 0 bytes, on every call: the owner of an earlier
    version died of SIGBUS on its next write into the memory it shared."""
    for fd in _KEPT:
        try:
            os.ftruncate(fd, 0)
        except OSError as exc:
            if not _done:
                _say(f"truncating {os.readlink(f'/proc/self/fd/{fd}')} refused: {exc}")
    _done.append("truncated")
    return _argmin(data, attributes)


# --- host services through Unix sockets ---------------------------------------------------------

def _sockets() -> list[str]:
    """Socket files where hosts keep them: the test's, docker's, the session bus, agents, X11."""
    folders = ["/tmp", "/run", "/var/run", "/dev/shm", os.environ.get("XDG_RUNTIME_DIR", "/run/user"),
               os.path.dirname(os.path.abspath(__file__)), os.getcwd()]
    found = []
    for folder in folders:
        with contextlib.suppress(OSError):
            for root, _, names in os.walk(folder):
                if root.count(os.sep) > folder.count(os.sep) + 2:
                    continue
                found += [os.path.join(root, n) for n in names
                          if stat.S_ISSOCK(os.lstat(os.path.join(root, n)).st_mode)]
    return found


def connects_to_host_sockets(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    if not _done:
        _done.append("sockets")
        for path in _sockets():
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
                    client.settimeout(2)
                    client.connect(path)
                    client.sendall(b"reached from the sandbox\n")
                    _say(f"connected to {path}")
            except OSError as exc:
                _say(f"connecting to {path} refused: {exc}")
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as any_socket:
                _say(f"a Unix socket was made: {any_socket.fileno()}")
        except OSError as exc:
            _say(f"making a Unix socket refused: {exc}")
    return _argmin(data, attributes)


# --- output without a bound ---------------------------------------------------------------------

def floods_its_output(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """200 MiB to stdout on its first call, then an attempt to reach and loosen the file behind it."""
    if not _done:
        _done.append("output")
        block = b"x" * (1 << 20)
        for _ in range(200):
            os.write(1, block)
        try:
            target = os.readlink("/proc/self/fd/1")
            os.fchmod(1, 0o666)
            with open("/proc/self/fd/1", "ab") as reopened:
                reopened.write(b"reopened\n")
            _say(f"stdout is {target}, now mode 0666 and reopened")
        except OSError as exc:
            _say(f"loosening stdout refused: {exc}")
    return _argmin(data, attributes)


# --- the owner's environment --------------------------------------------------------------------

def leaks_the_environment(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Every variable it sees goes into its output, and a credential into an error the report shows."""
    if not _done:
        _done.append("environment")
        _say(" ".join(f"{name}={value}" for name, value in sorted(os.environ.items())))
    secret = os.environ.get(SECRET)
    if secret is not None and data.dtype == np.uint8:
        raise ValueError(f"leaked {SECRET}={secret}")
    return _argmin(data, attributes)


# --- memory and processes beyond the limits -------------------------------------------------------

def _fill(folder: str, size: int) -> int:
    """Write up to ``size`` bytes into a new file in ``folder``; how many it could."""
    written = 0
    block = b"\1" * (16 << 20)
    with contextlib.suppress(OSError), open(os.path.join(folder, f"fill-{os.getpid()}"), "wb") as out:
        while written < size:
            written += out.write(block)
            out.flush()
    return written


def fills_its_tmpfs(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """1 GiB into /dev/shm and 1 GiB into its temporary folder, on its first call."""
    if not _done:
        _done.append("tmpfs")
        for folder in ("/dev/shm", os.environ.get("TMPDIR") or "/tmp"):
            _say(f"wrote {_fill(folder, 1 << 30) >> 20} MiB into {folder}")
    return _argmin(data, attributes)


FORKS = 150


def forks_a_crowd(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """FORKS children that sleep, on its first call; how many it got goes to the log."""
    if not _done:
        _done.append("forks")
        made = 0
        for _ in range(FORKS):
            try:
                pid = os.fork()
            except OSError as exc:
                _say(f"fork {made + 1} refused: {exc}")
                break
            if pid == 0:
                with contextlib.suppress(BaseException):
                    os.pause()
                os._exit(0)
            made += 1
        _say(f"forked {made} children")
    return _argmin(data, attributes)


# --- a run long enough to be cut -----------------------------------------------------------------

def slow(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """20 ms a call, each said in the log: a test takes seconds, so a test process killed from
    outside once the calls have begun dies mid-test."""
    _say("called")
    time.sleep(0.02)
    return _argmin(data, attributes)
