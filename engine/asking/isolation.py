"""Fault isolation: call the implementation under test so that its crashes and hangs become
results instead of ending the run.

In ``process`` mode calls go to a worker process over a socket it inherited, a batch of calls
per round trip (replies come back one by one, so a crash or a hang is pinned on its call); large
inputs travel through memory the two processes share (``_Arena``), small ones pickled in the
request. A call that takes longer than ``timeout`` kills the worker (status
``timeout``); a worker that dies mid-call (``os._exit``, abort, segfault) gives ``crash`` with
its exit code or signal; so does an implementation that holds more memory than
``memory_limit`` ("out of memory": the worker checks its peak after each call; here, a call in
progress is watched and its worker killed once over the limit, before it takes the machine).
Either way the next call starts a fresh worker. Calls may also be asked through packed models
(engine.asking.packing: many cases, one compiled model); a pack that crashes or hangs is bisected in
fresh workers until one call, asked alone, is to blame. A packed answer says which model gave it
(``Reply.pack``: its nodes, this process's own arrays, rebuilt from the layout the worker tells),
so that a failure only that model shows can be asked again. Answers are bounded (see ``worker``): the parent
never reads a reply larger than ``protocol.ANSWER_CAP``, and replies are data (``protocol.decode``),
never pickles: the worker runs the implementation's code.

Every worker is a fresh process started in a sandbox of its own where the machine offers one
(``engine.asking.sandbox``: Linux, bubblewrap): it sees the filesystem read-only but for its scratch
folder, sees no process outside the sandbox, has no network, and everything it starts ends with
it. Without a sandbox it still leads a session and process group of its own, ended with it.
``none`` mode calls in-process, for debugging and speed; it cannot survive a crash or enforce a
timeout or a memory limit."""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import mmap
import os
import pickle
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from types import MappingProxyType, TracebackType

import numpy as np

try:
    import fcntl
except ImportError:  # Windows: no process isolation at all
    fcntl = None

from engine import runtimes
from engine.asking import limits, output, protocol, sandbox, worker
from engine.asking.calls import CallArgs, Node, Packed, Reply
from engine.asking.history import History, Ran
from engine.asking.loader import UsageError, check, describe, plugin_file, portable, resolve
from engine.asking.packing import MAX_NODES, Layouts, Planner
from engine.contract.adapters import Schedule
from results.outcomes import CRASH, FAULTS, OK, TIMEOUT, UNASKED
from results.sizes import format_size

ISOLATION_MODES = ("process", "none")
_STARTUP_SECONDS = 120.0  # loading an implementation (imports, JIT warm-up) is not the call's time
_EXIT_GRACE_SECONDS = 1.0
_REPLY_CAP = protocol.ANSWER_CAP + (64 << 10)  # an answer at the cap, with its status and error text
_READY_CAP = 1 << 20  # the worker's first message: what it loaded, or why it did not
_ERROR_CHARS = 4000
_WATCH_SECONDS = 0.05  # how often a call in progress has its worker's memory checked
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _resident(pid: int) -> int:
    """Bytes the process holds in memory now; 0 where the system does not say (no /proc)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _loaded(message: bytes) -> dict:
    """The worker's first message, checked: ``{"ready": description}`` or ``{"error": text}``."""
    try:
        loaded = json.loads(message)
    except (ValueError, RecursionError):
        raise protocol.Malformed("not JSON") from None
    if not isinstance(loaded, dict) or len(loaded) != 1:
        raise protocol.Malformed("not one entry")
    if isinstance(loaded.get("error"), str):
        return {"error": loaded["error"][:_ERROR_CHARS]}
    if not isinstance(loaded.get("ready"), dict):
        raise protocol.Malformed("no description")
    return loaded


def _death(exitcode: int | None) -> str:
    if exitcode is None:
        return "the worker closed its connection without answering"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the worker process died from {name}"
    return f"the worker process exited with code {exitcode}"


class _Arena:
    """Memory shared with one worker for large inputs: an anonymous file (``memfd``) the worker
    inherits, sealed before it starts so that it can neither shrink nor grow it (a worker that
    truncated a plain shared file made this process die of SIGBUS on its next write there) nor
    map it writable again: the worker reads inputs from it, this process never reads it. Where
    the system has no sealed memfd (macOS), there is no arena and every input travels pickled
    in the request (``descriptor`` is None). Nothing is left behind however either process ends."""

    SIZE = 32 << 20

    def __init__(self) -> None:
        self.descriptor: int | None = None
        self.memory: mmap.mmap | None = None
        self.view: np.ndarray | None = None
        if not hasattr(os, "memfd_create") or fcntl is None:
            return
        self.descriptor = os.memfd_create("argmin-arena", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(self.descriptor, self.SIZE)
            self.memory = mmap.mmap(self.descriptor, self.SIZE)
            _seal(self.descriptor)
        except BaseException:
            self.close()
            raise
        self.view = np.frombuffer(self.memory, np.uint8)

    def release(self) -> None:
        """Close the descriptor (once the worker has inherited it): the mapping stays."""
        if self.descriptor is not None:
            os.close(self.descriptor)
            self.descriptor = None

    def close(self) -> None:
        self.release()
        self.view = None
        if self.memory is not None:
            with contextlib.suppress(BufferError, ValueError):
                self.memory.close()

    def pack(self, calls: Sequence[CallArgs], units: Sequence[Sequence[int]],
             refused: Sequence[bool | None], exact: bool = False, schedule: Schedule | None = None) -> list[tuple]:
        """The packs of calls as sent (``units``: the indices of each pack's calls), each as
        ``([data, ...], version, [attributes, ...], form, refused, exact, schedule)``: large inputs
        copied into the arena (their place, dtype and shape sent instead), the rest as they are,
        until the arena is full; ``refused``: per pack, whether its type was refused alone
        (worker.answers)."""
        sent, offset = [], 0
        for unit in units:
            datas = []
            for index in unit:
                data = calls[index][0]
                size = data.nbytes
                if self.view is not None and size >= worker.SHARED_MIN_BYTES and offset + size <= self.SIZE:
                    self.view[offset:offset + size] = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
                    datas.append((offset, data.dtype, data.shape))
                    offset += -(-size // 64) * 64  # aligned for any dtype
                else:
                    datas.append(data)
            _, version, _, form = calls[unit[0]]
            sent.append((datas, version, [dict(calls[index][2]) for index in unit], form, refused[len(sent)], exact,
                         schedule))
        return sent


# How a worker starts: the import path of the process that owns the run (the suite's folder first),
# set before its first import, then engine.asking.worker.main with the descriptors it inherited and its
# settings. The worker gets no PYTHONPATH (engine.asking.sandbox.environment), and needs none.
_BOOT = ("import json, sys; sys.path[:] = json.loads(sys.argv[3])['path']; from engine.asking.worker import main; "
         "main(sys.argv[1:])")
_ROOT = str(Path(__file__).resolve().parents[2])  # the checkout: engine/asking/isolation.py
# What a plug-in fails to import with when it reads a file or module its sandbox does not show.
_UNSEEN = ("FileNotFoundError", "PermissionError", "NotADirectoryError", "ModuleNotFoundError")
_CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid


@dataclass(frozen=True)
class _Launch:
    """What every worker of a Runner is started with."""

    impl: str
    path: list[str]
    cwd: str
    memory_limit: int | None
    log: str | None  # its stdout and stderr (appended, capped: engine.asking.output); None: this process's stderr
    sandbox: sandbox.Sandbox
    writable: tuple[str, ...]  # folders besides its scratch it may write (in a sandbox)
    readable: tuple[str, ...]  # folders its sandbox shows read-only besides the system's (sandbox.view)
    compile_cache: str | None  # the implementation's folder of the compile cache (one of writable), or None
    passed: tuple[str, ...]  # environment variables it gets besides the base ones (names or patterns)
    processes: int  # processes and threads it may run (engine.asking.limits)
    set_env: tuple[tuple[str, str | None], ...]  # variables set (None: cleared) in its environment


# Seals that make a memfd's size fixed and keep any new mapping of it read-only (Linux 5.1 for the
# last; fcntl names it only from Python 3.12). An older kernel refuses it: the size seals hold alone.
_F_SEAL_FUTURE_WRITE = getattr(fcntl, "F_SEAL_FUTURE_WRITE", 0x0010)


def _seal(descriptor: int) -> None:
    fixed = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
    try:
        fcntl.fcntl(descriptor, fcntl.F_ADD_SEALS, fixed | _F_SEAL_FUTURE_WRITE)
    except OSError:
        fcntl.fcntl(descriptor, fcntl.F_ADD_SEALS, fixed)


_SCRATCH_PREFIX = "argmin-worker-"


@functools.cache
def _sweep_scratch() -> None:
    """Remove the scratch folders of unsandboxed workers whose run was killed before it could
    (``argmin-worker-<pid of the process that owned it>-...``): once per process."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_SCRATCH_PREFIX}*-*"):
        owner = folder.name[len(_SCRATCH_PREFIX):].partition("-")[0]
        if owner.isdigit() and not limits.alive(int(owner)):
            shutil.rmtree(folder, ignore_errors=True)


class _Worker:
    """One worker process, started in a sandbox of its own (where there is one) with two
    inherited descriptors, its connection to this process and the memory they share; its
    output is a pipe this process drains (engine.asking.output). In a sandbox, its scratch (HOME,
    TMPDIR, XDG_CACHE_HOME) is the sandbox's own /tmp, gone with it; unsandboxed, a folder of its
    own, removed when it ends (or by the next run, where this one was killed). Where the machine
    lets the suite, it runs in a control group of its own that bounds its memory and processes
    (engine.asking.limits), entered before any of the implementation's code runs."""

    def __init__(self, launch: _Launch, ahead: bool = False) -> None:
        self.ahead = ahead  # started before it was needed (Runner._ready)
        self.sandboxed = launch.sandbox.mechanism is not None
        self.arena = _Arena()
        self.scratch = None if self.sandboxed else tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{os.getpid()}-")
        self.init: int | None = None  # a pidfd of the sandbox's first process, with which everything in it ends
        self.group = _group(launch)
        self._looked = 0.0  # when the group's events were last read (exhausted)
        self.drain: output.Drain | None = None
        parent, child = socket.socketpair()
        if hasattr(socket, "SO_PASSCRED"):  # the worker's first byte says which process it is (_hello)
            parent.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        try:
            self.process = self._spawn(launch, child.fileno())
        except BaseException:  # no worker: nothing left behind
            parent.close()
            self._remove()
            raise
        finally:
            child.close()
            self.arena.release()
        self.pid = self.process.pid  # the worker's own, once it said hello (in a sandbox: not bwrap's)
        self.conn = Connection(parent.detach())
        self.ready = False
        self.description: dict | None = None  # what the worker loaded (loader.describe)

    def _spawn(self, launch: _Launch, conn: int) -> subprocess.Popen:
        settings = {"impl": launch.impl, "path": launch.path, "cwd": launch.cwd, "memory_limit": launch.memory_limit,
                    "compile_cache": launch.compile_cache,
                    "processes": launch.processes if self.group is None and self.sandboxed
                    and limits.counts_processes_per_user_namespace() else None}
        arena = self.arena.descriptor
        argv = [sys.executable, "-c", _BOOT, str(conn), str(-1 if arena is None else arena), json.dumps(settings)]
        home = sandbox.SCRATCH if self.sandboxed else self.scratch
        environment = sandbox.environment(os.environ, launch.passed, home, dict(launch.set_env))
        drained, written = os.pipe()
        pipes: dict[str, tuple[int, int]] = {}
        if self.sandboxed:  # where bwrap tells the sandbox's first process; what it waits on before starting it
            pipes["info-fd"] = os.pipe()
            if self.group is not None:
                pipes["block-fd"] = os.pipe()
        # What bwrap gets of each pipe: the end it writes info to, the end it waits on.
        theirs = {name: ends[1 if name == "info-fd" else 0] for name, ends in pipes.items()}
        mine = {name: ends[0 if name == "info-fd" else 1] for name, ends in pipes.items()}
        try:
            with sandbox.filter_fd(launch.sandbox.seccomp if self.sandboxed else None) as rules:
                fds = {**theirs, **({} if rules is None else {"seccomp": rules})}
                inside = launch.cwd if self.sandboxed and not launch.cwd.startswith((sandbox.SCRATCH, "/dev")) \
                    and launch.cwd != "/" else home
                command = launch.sandbox.wrap(argv, launch.readable, launch.writable, inside, launch.memory_limit, fds)
                # A session of its own: no terminal, no Ctrl-C (this process decides when it ends),
                # and, unsandboxed, a process group that ends with it.
                process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=written, stderr=written,
                                           cwd=launch.cwd, env=environment, start_new_session=True,
                                           pass_fds=[conn, *([] if arena is None else [arena]), *fds.values()])
        except BaseException:
            for fd in (drained, *mine.values()):
                os.close(fd)
            raise
        finally:
            for fd in (written, *theirs.values()):
                os.close(fd)
        self.drain = output.Drain(drained, launch.log)
        try:
            self._enter(process, mine)
        finally:
            for fd in mine.values():
                os.close(fd)
        return process

    def _enter(self, process: subprocess.Popen, mine: dict[str, int]) -> None:
        """Learn the sandbox's first process from bwrap (``--info-fd``, written as soon as it
        exists) and, with a control group, move bwrap and that process into it before letting the
        sandbox go on (``--block-fd``): every process the worker starts is then in the group.
        Unsandboxed, the worker itself goes into the group, before its interpreter has started."""
        first = None
        if "info-fd" in mine:
            self.init, first = _first_process(mine["info-fd"])
        if self.group is None:
            return
        with contextlib.suppress(OSError):
            self.group.adopt(process.pid)
            if first is not None:
                self.group.adopt(first)
        if "block-fd" in mine:
            with contextlib.suppress(OSError):  # bwrap failed and is gone: its death is read later
                os.write(mine["block-fd"], b"\1")

    def wait_ready(self) -> str | None:
        """None when the implementation loaded, else why not. A load error (a bad --impl, a
        module that does not import) is a UsageError, as it would be in-process."""
        deadline = time.monotonic() + _STARTUP_SECONDS
        if not self._hello(deadline):
            return f"{_death(self.stop())} before it started"
        if not self.conn.poll(max(0.0, deadline - time.monotonic())):
            self.kill()
            return f"the worker did not load the implementation within {_STARTUP_SECONDS:g} s"
        try:
            message = _loaded(self.conn.recv_bytes(_READY_CAP))
        except (EOFError, OSError) as exc:
            if str(exc) == "bad message length":
                self.kill()
                return f"the worker sent more than the {format_size(_READY_CAP)} its first message may take"
            return _death(self.stop())
        except protocol.Malformed as exc:
            self.kill()
            return f"the worker sent a malformed first message ({exc})"
        if "error" in message:
            self.stop()
            raise UsageError(message["error"])
        self.ready, self.description = True, message["ready"]
        return None

    def _hello(self, deadline: float) -> bool:
        """Read the byte the worker sends before any of the implementation's code runs: its
        credentials name the worker process as this process sees it (the memory watch reads its
        size). False when it never came."""
        if not self.conn.poll(max(0.0, deadline - time.monotonic())):
            return False
        sock = socket.socket(fileno=self.conn.fileno())
        try:
            byte, ancillary, _, _ = sock.recvmsg(1, socket.CMSG_SPACE(_CREDENTIALS.size))
            if hasattr(socket, "SO_PASSCRED"):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 0)
        except OSError:
            return False
        finally:
            sock.detach()
        for level, kind, data in ancillary:
            if (level, kind) == (socket.SOL_SOCKET, getattr(socket, "SCM_CREDENTIALS", None)):
                self.pid = _CREDENTIALS.unpack_from(data)[0]
        return byte == b"\0"

    def stop(self) -> int | None:
        """Let the worker exit (it does when its connection closes), kill it if it does not,
        and end whatever it started (see ``_end``)."""
        self.conn.close()
        try:
            exitcode = self.process.wait(_EXIT_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            exitcode = self.process.wait()
        self._end()
        # bwrap reports a worker killed by signal N as status 128 + N, as shells do.
        return -(exitcode - 128) if self.sandboxed and 128 < exitcode <= 128 + 64 else exitcode

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self._end()
        self.conn.close()

    def _end(self) -> None:
        """End every process the worker started: in a sandbox, its first process (the kernel
        ends everything in its PID namespace with it, setsid or not), waiting until all are gone;
        unsandboxed, the worker's process group (a child that left it, setsid, is beyond this).
        Then its scratch folder and control group go: nothing is left there to use them."""
        if self.init is not None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self.init, signal.SIGKILL)
            select.select([self.init], [], [], _EXIT_GRACE_SECONDS)  # readable once it is gone
            os.close(self.init)
            self.init = None
        elif hasattr(os, "killpg"):
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, signal.SIGKILL)
        if self.drain is not None:
            self.drain.join(_EXIT_GRACE_SECONDS)  # what it printed last reaches the log
        self._remove()

    def exhausted(self, answered: Reply | None = None) -> str | None:
        """The limit of its control group the worker reached since the last time asked, if any.
        After an ``answered`` call that went well, only where it took a millisecond or more (a
        shorter call cannot start or fill much) or the last look is 50 ms old: a look reads two files."""
        if self.group is None:
            return None
        now = time.monotonic()
        if answered is not None and answered.status == OK and answered.seconds < worker.LOOK_AFTER_SECONDS \
                and now - self._looked < worker.LOOK_EVERY_SECONDS:
            return None
        self._looked = now
        return self.group.exhausted()

    def _remove(self) -> None:
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
        if self.group is not None:
            self.group.remove()
        self.arena.close()


def _group(launch: _Launch) -> limits.Group | None:
    """A control group of its own for a new worker, where this machine lets the suite make one."""
    found, _ = limits.hierarchy()
    if found is None:
        return None
    try:
        return limits.Group(found, launch.memory_limit, launch.processes)
    except OSError:
        return None


def _first_process(info: int) -> tuple[int | None, int | None]:
    """(a pidfd, the process id) of the sandbox's first process, from what bwrap writes to ``info``
    (--info-fd) as soon as that process exists; Nones where it wrote nothing (it failed) or that
    process is already gone."""
    told, deadline = b"", time.monotonic() + _STARTUP_SECONDS
    try:
        while b"}" not in told and len(told) < 4096:
            if not select.select([info], [], [], max(0.0, deadline - time.monotonic()))[0]:
                return None, None
            chunk = os.read(info, 4096)
            if not chunk:
                break
            told += chunk
        pid = json.loads(told or b"{}").get("child-pid")
        return (os.pidfd_open(pid), pid) if isinstance(pid, int) else (None, None)
    except (OSError, ValueError, AttributeError):
        return None, None


_live: weakref.WeakSet[Runner] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """End every worker (and its sandbox) before the interpreter exits."""
    for runner in list(_live):
        runner.close()


class Runner:
    """Calls one implementation, in a worker process or in-process."""

    def __init__(self, impl: str, *, isolation: str = "process", timeout: float = 10.0,
                 memory_limit: int | None = worker.DEFAULT_MEMORY_LIMIT, log: Path | None = None,
                 compile_cache: Path | None = None, sandbox_mode: str = "auto",
                 writable: Sequence[str | Path] = (), readable: Sequence[str | Path] = (),
                 pass_env: Sequence[str] = (), processes: int = limits.PROCESS_LIMIT,
                 set_env: Mapping[str, str | None] = MappingProxyType({})) -> None:
        """``log``: where the worker's stdout and stderr go (process isolation), at most
        engine.asking.output.LOG_CAP of them; None: this process's stderr. ``sandbox_mode``: ``--sandbox``
        (engine.asking.sandbox.MODES). ``compile_cache``: the implementation's folder of the compile cache
        (engine.adapters.compile_cache), which it may write too. ``writable``: folders a sandboxed
        worker may write besides its scratch (created where missing); ``readable``: folders it may
        read besides what it needs to run (``--sandbox-read``). ``pass_env``: environment variables
        the worker gets besides the base ones and those its runtime declares (``--pass-env``).
        ``processes``: the processes and threads one worker may run, where that can be enforced.
        ``set_env``: variables set in the worker's environment (None: cleared), whatever the run's
        environment holds (``--isa``); in-process, in this process's own before the implementation
        loads."""
        if isolation not in ISOLATION_MODES:
            raise UsageError(f"--isolation {isolation!r} is not a mode; use one of: {', '.join(ISOLATION_MODES)}")
        if not timeout > 0:
            raise UsageError(f"--timeout {timeout!r} is not a positive number of seconds; use e.g. --timeout 10")
        self.impl, self.isolation, self.timeout, self.memory_limit = impl, isolation, timeout, memory_limit
        self.limit = timeout  # the run's full --timeout: a pack's (``timeout`` may adapt for single calls)
        self.planner = Planner()  # which models the calls are asked in (engine.asking.packing)
        self.history = History()  # the models the current worker ran (engine.asking.history)
        self._spent = protocol.NONE  # what the in-process adapter had spent on models at the last reply
        check(impl)  # a malformed --impl is a UsageError before any worker starts
        self._worker: _Worker | None = None
        self._spare: _Worker | None = None  # the next worker, started ahead (see _ready)
        self.restarts = 0  # workers started after the first, i.e. after crashes and timeouts
        self._started = 0
        self.description: dict | None = None
        self.sandbox = sandbox.NONE if isolation == "none" else sandbox.choose(sandbox_mode)
        if isolation == "none":
            for name, value in set_env.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            with worker.compile_cache_at(compile_cache):
                self._fn = resolve(impl)
            self.description = describe(impl, self._fn)
        else:
            _sweep_scratch()
            self._launch = self._launch_of(log, writable, readable, compile_cache, pass_env, processes, set_env)
            self._start()  # start loading now, overlapping whatever the caller does next
            _live.add(self)

    def _launch_of(self, log: Path | None, writable: Sequence[str | Path], readable: Sequence[str | Path],
                   compile_cache: Path | None, pass_env: Sequence[str], processes: int,
                   set_env: Mapping[str, str | None]) -> _Launch:
        """How every worker starts. The implementation is imported only in the worker: a plug-in
        that crashes on import, or imports a heavy runtime, never does so in the process owning
        the run. Every worker, even one restarted after the caller changed directory, loads the
        same, and sees the same: the interpreter, every folder on the import path, the suite, the
        plug-in's folder and the working folder (sandbox.view)."""
        if not hasattr(os, "fork"):
            raise UsageError("--isolation process needs Linux or macOS (a worker inherits its connection as a file "
                             "descriptor); use --isolation none here")
        cache = None if compile_cache is None else str(Path(compile_cache).resolve())
        folders = tuple(str(Path(folder).resolve()) for folder in writable) + ((cache,) if cache else ())
        for folder in folders:
            os.makedirs(folder, exist_ok=True)
        plugin = plugin_file(self.impl)
        shown = (*sys.path, sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, _ROOT, os.getcwd(),
                 # The plug-in's folder, and the file itself where the folder cannot be shown (/tmp).
                 *([] if plugin is None else [str(plugin.parent), str(plugin)]), *map(str, readable))
        found = runtimes.find(self.impl)
        declared = found[0].environment if found else ()
        path = list(dict.fromkeys([_ROOT, *sys.path]))
        return _Launch(portable(self.impl), path, os.getcwd(), self.memory_limit,
                       None if log is None else str(Path(log).resolve()), self.sandbox, folders,
                       tuple(str(Path(path).resolve()) for path in shown if path), cache,
                       (*declared, *pass_env), processes, tuple(set_env.items()))

    def record(self) -> dict[str, object]:
        """Where and how the implementation runs, for the run's environment (and certificate):
        the sandbox (sandbox.Sandbox.record) with each bound and how it is enforced, and the names
        of the environment variables its workers get."""
        if self.isolation == "none":
            return self.sandbox.record()
        launch = self._launch
        passed = sandbox.environment(os.environ, launch.passed, sandbox.SCRATCH, dict(launch.set_env))
        return self.sandbox.record(self.bounds(), [name for name in passed if name not in sandbox.OWN_ENVIRONMENT])

    def bounds(self) -> list[dict[str, object]]:
        """Each bound on a worker: what it bounds, its limit and what enforces it (None: nothing
        here, ``reason`` says why)."""
        sandboxed, memory = self.sandbox.mechanism is not None, self.memory_limit
        found, why = limits.hierarchy()
        by = found.mechanism if found else None
        nproc = "rlimit" if sandboxed and limits.counts_processes_per_user_namespace() else None
        return [
            {"what": "memory", "limit": memory, "by": None if memory is None else by or "watch",
             "reason": "--memory-limit none" if memory is None else why},
            {"what": "processes", "limit": self._launch.processes, "by": by or nproc,
             "reason": None if by or nproc else f"{why}; RLIMIT_NPROC does not bound root, nor a worker outside a "
                                                f"sandbox"},
            {"what": "tmpfs", "limit": memory, "by": "bubblewrap" if sandboxed else None,
             "reason": None if sandboxed else "no sandbox: the worker writes where its user may"},
            {"what": "output", "limit": output.LOG_CAP, "by": "pipe", "reason": None},
        ]

    def load(self) -> dict:
        """Wait until the implementation has loaded and return what it is (``loader.describe``);
        raise UsageError with the worker's one-line message when it does not load."""
        if self.description is not None:
            return self.description
        if self._worker is None:
            self._start()
        try:
            problem = self._worker.wait_ready()
        except UsageError as exc:
            self._worker = None
            raise UsageError(self._unseen(str(exc))) from None
        if problem is not None:
            self._worker = None
            raise UsageError(f"--impl {self.impl!r}: {problem} while loading the implementation; "
                             f"try --isolation none to see it fail in this process")
        self.description = self._worker.description
        return self.description

    def _unseen(self, message: str) -> str:
        """A load error as a sandboxed worker meets it: a plug-in that does not import for want of
        a file or module most likely reads one outside what its sandbox shows, so the line says
        what the sandbox shows and names --sandbox-read."""
        if self.sandbox.mechanism is None or not any(f"does not import ({name}:" in message for name in _UNSEEN):
            return message
        plugin = plugin_file(self.impl)
        folder = "" if plugin is None else f" and the plug-in's folder ({plugin.parent})"
        return (f"{message}; it runs in a sandbox that shows it only the system's files, the interpreter and its "
                f"import path, the suite, the working folder{folder}: name each other folder it reads with "
                f"--sandbox-read DIR (several separated by '{os.pathsep}')")

    def _start(self) -> None:
        """Make the worker for the next calls: the spare, where one was started ahead (_ready)."""
        self._worker, self._spare = self._spare or _Worker(self._launch), None
        self.restarts += self._started > 0
        self._started += 1
        self.history.restart()

    def fresh(self) -> None:
        """A new worker for the next calls, which has run nothing (in-process, the same process)."""
        if self.isolation == "none":
            return
        if self._worker is not None:
            self._worker.stop()
        self._start()

    def _ran(self, calls: Sequence[CallArgs], unit: Sequence[int], replies: Mapping[int, Reply]) -> None:
        """Add the models that answered ``unit`` to the worker's history, in the order they ran,
        and give each reply the models run before its own. A pack's signature models (those with
        dummy nodes: engine.adapters.signatures) ran before the packed model of its other calls."""
        models: dict[int, tuple[Ran, list[int]]] = {}  # each model, by what identifies it, with its calls
        for index in unit:
            reply = replies[index]
            data, version, attributes, form = calls[index]
            if reply.nodes == 1:
                models[id(reply)] = (Ran(version, form, node=Node(data, attributes)), [index])
            elif reply.pack is not None:
                models.setdefault(id(reply.pack.model), (Ran(version, form, packed=reply.pack), []))[1].append(index)
        for ran, answered in sorted(models.values(), key=lambda m: not (m[0].packed and m[0].packed.dummies)):
            before = self.history.add(ran, sum(calls[index][0].size for index in answered))
            for index in answered:
                replies[index] = replace(replies[index], before=before)

    def call(self, data: np.ndarray, version: int, attributes: Mapping[str, int], form: str | None = None) -> Reply:
        """One call; ``form``: the model form for model-based implementations (engine.contract.forms)."""
        return self.call_many([(data, version, attributes, form)])[0]

    def call_many(self, calls: Sequence[CallArgs], pack: bool = False,
                  units: Sequence[Sequence[int]] | None = None, faults: int | None = None,
                  exact: bool = False, schedule: Schedule | None = None) -> list[Reply]:
        """The replies to several calls, made in order. In a worker they travel as one request
        and the replies come back one by one; after a crash or a timeout the calls left are
        made in a fresh worker. With ``pack``, calls in a packed form are asked through packed
        models (``packs``); a pack that crashes or hangs its worker is bisected, in fresh workers,
        until the crash or hang is pinned on one call asked alone. ``units``: the packs to ask
        (``packs`` of calls with the same signatures), instead of cutting them afresh. ``faults``:
        once that many calls crashed or hung, the calls left are not made (their replies say
        UNASKED): a batch of hanging inputs costs no more timeouts than its test may judge.
        ``exact``: each unit is exactly one model of its calls, in order (a recorded pack, or a
        one-node model for a unit of one, asked again: worker.answers), never split, and what it
        fails with is every call's reply.
        ``schedule``: the signatures the calls were drawn within (engine.contract.adapters.Schedule),
        which the adapter serves from one compiled model of them all."""
        if units is None:
            units = self.planner.packs(calls) if pack else [[index] for index in range(len(calls))]
        units = deque(list(unit) for unit in units)
        replies: dict[int, Reply] = {}
        if self.isolation == "none":
            for unit in units:
                self._in_process(calls, unit, replies, exact, schedule)
            return [replies[index] for index in range(len(calls))]
        while units and (faults is None or sum(r.status in FAULTS for r in replies.values()) < faults):
            self._call_worker(calls, units, replies, exact, schedule)
        return [replies.get(index) or Reply(UNASKED, None, "not asked: its batch had crashed or hung as often as "
                                                           "its test may", 0.0) for index in range(len(calls))]

    def _in_process(self, calls: Sequence[CallArgs], unit: list[int], replies: dict[int, Reply],
                    exact: bool = False, schedule: Schedule | None = None) -> None:
        # A copy, as the worker gets: an implementation that writes into its input must not
        # change the caller's array in one mode and not in the other.
        # The answer reaches the judge as the same data as from a worker (a copy, objects as
        # their descriptions: protocol.detached).
        _, version, _, form = calls[unit[0]]
        datas = [np.array(calls[index][0], copy=True) for index in unit]
        outcomes = worker.answers(self._fn, datas, version, [calls[index][2] for index in unit], form,
                                  self.planner.refused(calls, unit), exact, schedule)
        layouts = Layouts(calls)
        for at, (index, answered) in enumerate(zip(unit, outcomes, strict=True)):
            spent = worker.models_of(self._fn)
            reply = protocol.detached(protocol.charged(answered, spent - self._spent))
            replies[index] = replace(reply, pack=layouts.packed(reply.layout, reply.position, unit, at))
            self._spent = spent
        self._ran(calls, unit, replies)
        if not exact:
            self.planner.answered(calls, unit, replies)

    def _call_worker(self, calls: Sequence[CallArgs], units: deque[list[int]], replies: dict[int, Reply],
                     exact: bool, schedule: Schedule | None) -> None:
        try:
            self._exchange(calls, units, replies, exact, schedule)
        except BaseException:
            # Ctrl-C (or anything else) mid-call leaves answers in flight: never read them as the
            # next calls' answers. The worker ignores SIGINT, so end it here.
            if self._worker is not None:
                self._worker.kill()
                self._worker = None
            raise

    def _exchange(self, calls: Sequence[CallArgs], units: deque[list[int]], replies: dict[int, Reply],
                  exact: bool, schedule: Schedule | None) -> None:
        """Replies to the packs in ``units``, taken off it as they are answered: all of them, or up
        to the pack that crashed or hung; that one is then cut down for the next worker (``exact``:
        not cut: the crash or hang is every unanswered call's reply)."""
        if self._worker is None:
            self._start()
        current = self._worker
        assert current is not None
        start = time.perf_counter()
        if not current.ready:
            problem = self._ready(current)
            if problem is not None:
                self._worker = None
                unit = units.popleft()
                replies[unit[0]] = Reply(CRASH, None, f"{problem} while loading the implementation",
                                         time.perf_counter() - start)
                if unit[1:]:
                    units.appendleft(unit[1:])
                return
            current, start = self._worker, time.perf_counter()
        refused = [self.planner.refused(calls, unit) for unit in units]
        request = pickle.dumps(current.arena.pack(calls, units, refused, exact, schedule),
                               protocol=pickle.HIGHEST_PROTOCOL)
        with contextlib.suppress(OSError):  # the worker died before or while reading it: read its death below
            current.conn.send_bytes(request)
        layouts = Layouts(calls)
        while units:
            unit = units[0]
            for position, index in enumerate(unit):
                left = len(unit) - position
                # A pack may compile and bisect before it answers: it has the run's full timeout.
                reply = self._reply(current, start, self.timeout if len(unit) == 1 else self.limit, left,
                                    functools.partial(layouts.packed, unit=unit, at=position))
                if reply.nodes > MAX_NODES:  # what the worker says, within what a model holds
                    reply = replace(reply, nodes=MAX_NODES)
                start = time.perf_counter()
                if exact and reply.status in FAULTS:  # the model as recorded, or nothing: never halved
                    replies.update((rest, reply) for rest in unit[position:])
                    units.popleft()
                    return
                if reply.status in FAULTS and reply.nodes > 1 and left > 1:
                    # Somewhere in a pack: ask its unanswered calls again as two halves, in a fresh worker.
                    half = position + left // 2
                    units.popleft()
                    units.extendleft([unit[half:], unit[position:half]])
                    self.planner.adapt(calls, unit, True)
                    return
                if reply.status in FAULTS:
                    reply = replace(reply, nodes=1)  # pinned on this call
                replies[index] = reply
                if reply.status in FAULTS:
                    units.popleft()
                    if unit[position + 1:]:
                        units.appendleft(unit[position + 1:])
                    return
            self._ran(calls, unit, replies)
            units.popleft()
            if not exact:
                self.planner.answered(calls, unit, replies)

    def _ready(self, current: _Worker) -> str | None:
        """Wait until ``current``, the worker, has loaded the implementation: None, or why it did
        not. A worker started ahead that did not load is replaced by one started now: it loaded
        while another worker lived, which held what the implementation takes only once (a device).
        Once the implementation has crashed or hung, the next worker is started ahead as soon as
        this one has loaded, and loads in its sandbox while this one works: a fresh interpreter
        takes up to a second to load a runtime, which a crash then no longer costs."""
        try:
            problem = current.wait_ready()
        except UsageError:
            if not current.ahead:
                raise
            self._worker = current = _Worker(self._launch)
            problem = current.wait_ready()
        self.description = self.description or current.description
        if problem is None and self.restarts and self._spare is None:
            self._spare = _Worker(self._launch, ahead=True)
        return problem

    def _reply(self, current: _Worker, start: float, timeout: float, nodes: int = 1,
               packed: Callable[[worker.Layout | None, int], Packed | None] = lambda *_: None) -> Reply:
        """The worker's reply to its next call, or what happened to the worker instead (with
        ``nodes``: the calls of the pack in flight that are still unanswered); ``packed`` makes
        the model the reply's layout names (``Layouts.packed``)."""
        try:
            first = min(timeout, _WATCH_SECONDS)  # most calls answer within it: one poll, as with no limit
            waited = "answered" if current.conn.poll(first) else self._wait(current, first, timeout)
        except OSError:  # the worker is gone: reading says how
            waited = "answered"
        if waited != "answered":
            held = _resident(current.pid)
            current.kill()
            self._worker = None
            error = f"no answer within {timeout:g} s" if waited == TIMEOUT else \
                f"{worker.out_of_memory(held, self.memory_limit)} during the call"
            return Reply(waited, None, f"{error}; the worker process was killed", time.perf_counter() - start,
                         nodes=nodes)
        try:
            reply = current.conn.recv_bytes(_REPLY_CAP)
        except (EOFError, OSError) as exc:
            elapsed = time.perf_counter() - start
            self._worker = None
            if str(exc) == "bad message length":
                # Past the worker's own bound (protocol.ANSWER_CAP): the implementation wrote to
                # the pipe itself. Nothing of it is read.
                current.kill()
                return Reply(CRASH, None, f"the worker sent more than the {format_size(_REPLY_CAP)} a "
                                            f"reply may take; the worker process was killed", elapsed, nodes=nodes)
            exhausted = current.exhausted()  # before stop(), which removes its control group
            death = _death(current.stop())
            return Reply(CRASH, None, f"{exhausted} ({death})" if exhausted else death, elapsed, nodes=nodes)
        try:
            outcome = protocol.decode(reply)
            outcome = replace(outcome, pack=packed(outcome.layout, outcome.position))
        except protocol.Malformed as exc:  # the implementation wrote to the pipe itself
            current.kill()
            self._worker = None
            return Reply(CRASH, None, f"the worker sent a malformed reply ({exc}); the worker process was killed",
                         time.perf_counter() - start, nodes=nodes)
        if exhausted := current.exhausted(outcome):
            # A process of its sandbox killed at the memory limit, or a fork refused at the process
            # limit, during this call: a crash, whatever the implementation made of it.
            current.kill()
            self._worker = None
            return Reply(CRASH, None, f"{exhausted}; the worker process was killed", outcome.seconds,
                         nodes=outcome.nodes)
        if outcome.status == CRASH:  # out of memory or sys.exit: the worker has ended itself
            current.stop()
            self._worker = None
        return outcome

    def _wait(self, current: _Worker, waited: float, timeout: float) -> str:
        """Go on waiting for the worker's reply after ``waited`` seconds: 'answered', 'timeout',
        or 'crash' once the worker holds more memory than its limit (checked every
        _WATCH_SECONDS)."""
        while True:
            if waited >= timeout:
                return TIMEOUT
            if self.memory_limit is not None and _resident(current.pid) > self.memory_limit:
                return CRASH
            step = min(timeout - waited, _WATCH_SECONDS)
            if current.conn.poll(step):
                return "answered"
            waited += step

    def close(self) -> None:
        if self._spare is not None:
            self._spare.kill()
            self._spare = None
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
        _live.discard(self)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
