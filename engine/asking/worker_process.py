"""One worker process as the process that owns the run holds it: started in a sandbox of its own
where the machine offers one (engine.asking.sandbox) and in a control group of its own where the
machine lets the suite make one (engine.asking.limits), with its connection and the memory they
share (engine.asking.arena) inherited; told apart from its sandbox by the first byte it sends;
waited for while it loads the implementation; and stopped or killed with everything it started."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection

from engine.asking import limits, output, protocol, sandbox, worker
from engine.asking.arena import Arena
from engine.asking.calls import Reply
from engine.asking.launch import BOOT, SCRATCH_PREFIX, Launch
from engine.asking.loader import UsageError
from results.outcomes import OK
from results.sizes import format_size

_STARTUP_SECONDS = 120.0  # loading an implementation (imports, JIT warm-up) is not the call's time
_EXIT_GRACE_SECONDS = 1.0
_READY_CAP = 1 << 20  # the worker's first message: what it loaded, or why it did not
_ERROR_CHARS = 4000
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid


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


def death(exitcode: int | None) -> str:
    if exitcode is None:
        return "the worker closed its connection without answering"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the worker process died from {name}"
    return f"the worker process exited with code {exitcode}"


class WorkerProcess:
    """One worker process, started in a sandbox of its own (where there is one) with two
    inherited descriptors, its connection to this process and the memory they share; its
    output is a pipe this process drains (engine.asking.output). In a sandbox, its scratch (HOME,
    TMPDIR, XDG_CACHE_HOME) is the sandbox's own /tmp, gone with it; unsandboxed, a folder of its
    own, removed when it ends (or by the next run, where this one was killed). Where the machine
    lets the suite, it runs in a control group of its own that bounds its memory and processes
    (engine.asking.limits), entered before any of the implementation's code runs."""

    def __init__(self, launch: Launch, ahead: bool = False) -> None:
        self.ahead = ahead  # started before it was needed (pool.Pool.ready)
        self.prepared: set[tuple] = set()  # the schedules whose models it compiled (worker.prepared)
        self.sandboxed = launch.sandbox.mechanism is not None
        self.arena = Arena()
        self.scratch = None if self.sandboxed else tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")
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
        self.ended = False  # stopped or killed: it answers nothing more

    def _spawn(self, launch: Launch, conn: int) -> subprocess.Popen:
        """Start the worker, in its sandbox where it has one, with its connection (``conn``) and
        the arena inherited and its output on a pipe this process drains; then let it enter its
        control group (``_enter``)."""
        arena = self.arena.descriptor
        home = sandbox.SCRATCH if self.sandboxed else self.scratch
        environment = sandbox.environment(os.environ, launch.passed, home, dict(launch.set_env))
        drained, written = os.pipe()
        theirs, mine = self._pipes()
        try:
            with sandbox.filter_fd(launch.sandbox.seccomp if self.sandboxed else None) as rules:
                fds = {**theirs, **({} if rules is None else {"seccomp": rules})}
                command = launch.sandbox.wrap(self._argv(launch, conn), launch.readable, launch.writable,
                                              self._inside(launch, home), launch.memory_limit, fds)
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

    def _argv(self, launch: Launch, conn: int) -> list[str]:
        """The worker's command line: the boot line, its inherited descriptors and its settings."""
        settings = {"impl": launch.impl, "path": launch.path, "cwd": launch.cwd, "memory_limit": launch.memory_limit,
                    "compile_cache": launch.compile_cache,
                    "processes": launch.processes if self.group is None and self.sandboxed
                    and limits.counts_processes_per_user_namespace() else None}
        arena = self.arena.descriptor
        return [sys.executable, "-c", BOOT, str(conn), str(-1 if arena is None else arena), json.dumps(settings)]

    def _pipes(self) -> tuple[dict[str, int], dict[str, int]]:
        """The pipes bwrap is given (none unsandboxed): ``info-fd``, where it tells the sandbox's
        first process, and with a control group ``block-fd``, what it waits on before starting it.
        Returns bwrap's ends (the one it writes info to, the one it waits on) and this process's."""
        pipes: dict[str, tuple[int, int]] = {}
        if self.sandboxed:
            pipes["info-fd"] = os.pipe()
            if self.group is not None:
                pipes["block-fd"] = os.pipe()
        theirs = {name: ends[1 if name == "info-fd" else 0] for name, ends in pipes.items()}
        mine = {name: ends[0 if name == "info-fd" else 1] for name, ends in pipes.items()}
        return theirs, mine

    def _inside(self, launch: Launch, home: str) -> str:
        """The folder the worker starts in: the run's own, where its sandbox shows it; else its home."""
        shown = self.sandboxed and not launch.cwd.startswith((sandbox.SCRATCH, "/dev")) and launch.cwd != "/"
        return launch.cwd if shown else home

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
            return f"{death(self.stop())} before it started"
        if not self.conn.poll(max(0.0, deadline - time.monotonic())):
            self.kill()
            return f"the worker did not load the implementation within {_STARTUP_SECONDS:g} s"
        try:
            message = _loaded(self.conn.recv_bytes(_READY_CAP))
        except (EOFError, OSError) as exc:
            if str(exc) == "bad message length":
                self.kill()
                return f"the worker sent more than the {format_size(_READY_CAP)} its first message may take"
            return death(self.stop())
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
        self.ended = True
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

    def held(self) -> int:
        """Bytes the worker holds in memory now; 0 where the system does not say (no /proc)."""
        try:
            with open(f"/proc/{self.pid}/statm", "rb") as statm:
                return int(statm.read().split()[1]) * _PAGE
        except (OSError, IndexError, ValueError):
            return 0

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


def _group(launch: Launch) -> limits.Group | None:
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
