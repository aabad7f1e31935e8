"""Plug-ins that attack what a worker shares with the run that owns it, rather than its answers:
the memory inputs travel through, host sockets, its output, the owner's environment, memory
and processes beyond its limits. Each is broken, as an attacker's would be: it answers wrongly
on every input of SHARED_BYTES or more (NON-CONFORMANT when the run judges them), so an attack
that loses the run's records of large inputs would turn the verdict. Each says in its output
(the implementation's log) what it tried and what was refused."""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
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


# System call numbers the attacks below make themselves (libc's wrappers would pass clean arguments).
_NUMBERS = {"x86_64": {"socket": 41, "keyctl": 250, "add_key": 248, "request_key": 249},
            "aarch64": {"socket": 198, "keyctl": 219, "add_key": 217, "request_key": 218}}
_HIGH_BITS = 1 << 32
KEY_DESCRIPTION = "argmin-test-credential"  # a key a test puts in the session keyring, as a login holds a ticket
PLANTED = "argmin-planted"  # the key the plug-in tries to leave behind
_SESSION_KEYRING = -3  # KEY_SPEC_SESSION_KEYRING
_KEYCTL_READ = 11


def _syscall(name: str, *arguments: object) -> int:
    """The raw system call, its result, or OSError with the errno it set."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    result = libc.syscall(ctypes.c_long(_NUMBERS[platform.machine()][name]), *arguments)
    if result < 0:
        raise OSError(ctypes.get_errno(), f"{name}: {os.strerror(ctypes.get_errno())}")
    return result


def connects_through_high_bits(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """socket() with AF_UNIX spelled with a high bit set (0x1_00000001): a filter that compares
    all 64 bits lets it through, the kernel reads the low 32. Then connect to every socket file."""
    if not _done:
        _done.append("high bits")
        for path in _sockets():
            try:
                fd = _syscall("socket", ctypes.c_long(_HIGH_BITS | socket.AF_UNIX), ctypes.c_long(socket.SOCK_STREAM),
                              ctypes.c_long(0))
                with socket.socket(fileno=fd) as client:
                    client.settimeout(2)
                    client.connect(path)
                    client.sendall(b"reached from the sandbox\n")
                    _say(f"connected to {path} through the high bits")
            except OSError as exc:
                _say(f"connecting to {path} through the high bits refused: {exc}")
    return _argmin(data, attributes)


def reaches_the_keyring(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Reads the credential key from the session keyring it inherited, and plants one there."""
    if not _done:
        _done.append("keyring")
        try:
            key = _syscall("request_key", b"user", KEY_DESCRIPTION.encode(), None, ctypes.c_long(0))
            buffer = ctypes.create_string_buffer(256)
            size = _syscall("keyctl", ctypes.c_long(_KEYCTL_READ), ctypes.c_long(key), buffer, ctypes.c_long(256))
            _say(f"read the credential: {buffer.raw[:size].decode()}")
        except OSError as exc:
            _say(f"reading the credential refused: {exc}")
        try:
            _syscall("add_key", b"user", PLANTED.encode(), b"forged", ctypes.c_long(6),
                     ctypes.c_long(_SESSION_KEYRING))
            _say("planted a key")
        except OSError as exc:
            _say(f"planting a key refused: {exc}")
    return _argmin(data, attributes)


def calls_kernel_interfaces(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Every system call the sandbox refuses outright, made with arguments that are all invalid
    (-1: no pointer, descriptor or flag it could act on), so only whether the kernel reached its
    checks shows: ENOSYS where it did not. Each errno goes to the log."""
    import pyseccomp

    from engine.asking.sandbox import REFUSED

    if not _done:
        _done.append("interfaces")
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        for name in REFUSED:
            try:
                number = pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)
            except OSError:
                continue  # not a system call of this architecture
            result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(-1)] * 6)
            _say(f"interface {name}: errno {ctypes.get_errno() if result < 0 else 0}")
            if result >= 0:
                os.close(result)  # a descriptor (fanotify, userfaultfd) made after all
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
