"""Fault isolation: call the implementation under test so that its crashes and hangs become
results instead of ending the run.

In ``process`` mode calls go to a worker process over a multiprocessing pipe, a batch of calls
per round trip (replies come back one by one, so a crash or a hang is pinned on its call); large
inputs travel through memory the two processes share (``_Arena``), small ones pickled in the
request. A call that takes longer than ``timeout`` kills the worker (status
``timeout``); a worker that dies mid-call (``os._exit``, abort, segfault) gives ``crash`` with
its exit code or signal; so does an implementation that holds more memory than
``memory_limit`` ("out of memory": the worker checks its peak after each call; here, a call in
progress is watched and its worker killed once over the limit, before it takes the machine).
Either way the next call starts a fresh worker. Calls may also be asked through packed models
(``Runner.packs``: many cases, one compiled model); a pack that crashes or hangs is bisected in
fresh workers until one call, asked alone, is to blame. Answers are bounded (see ``worker``): the parent
never reads a reply larger than ``worker.ANSWER_CAP``, and replies are data (``worker.decode``),
never pickles: the worker runs the implementation's code. The worker leads its own process
group, which ends with it.
``none`` mode calls in-process, for debugging and speed; it cannot survive a crash or enforce a
timeout or a memory limit."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import mmap
import multiprocessing
import os
import pickle
import shutil
import signal
import statistics
import sys
import tempfile
import time
import weakref
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from engine import worker
from engine.forms import INITIALIZER, STATIC, SYMBOLIC
from engine.plugins import UsageError, check, describe, portable, resolve

ISOLATION_MODES = ("process", "none")
_STARTUP_SECONDS = 120.0  # loading an implementation (imports, JIT warm-up) is not the call's time
_EXIT_GRACE_SECONDS = 1.0
_REPLY_CAP = worker.ANSWER_CAP + (64 << 10)  # an answer at the cap, with its status and error text
_PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER = 4, 36  # linux/prctl.h
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


Call = tuple[np.ndarray, int, Mapping[str, int], "str | None"]  # data, version, attributes, model form
# A packed model holds at most this many input elements and nodes: large enough that compiling
# it costs a fraction of a millisecond per node (a batch of the largest cases a profile draws
# fits in a few packs), small enough that a failing pack is bisected in a few steps
# (engine.worker.answers) and a crashing one in a few fresh workers.
PACK_ELEMENTS = 1 << 20
PACK_NODES = 64
MAX_NODES = 1024  # no model the suite builds has more nodes (a signature model of rank 8 has 153)
PACKED_FORMS = (SYMBOLIC, STATIC, INITIALIZER)


FAULTS = worker.FAULTS
UNASKED = "unasked"  # a call that Runner.call_many did not make: its batch's fault budget was spent


@dataclass
class Reply:
    """What one call did. ``seconds`` is the implementation's own time where it answered (the
    worker measures it, so the two modes agree) and the wall time of a crash or timeout."""

    status: str  # 'ok' | 'unsupported' | 'raised' | 'crash' | 'timeout' | 'oversize'
    value: np.ndarray | None  # np.asarray(return value) when status == 'ok'
    error: str | None  # 'ExceptionType: message', what happened to the worker, or the oversize answer's shape
    seconds: float
    by_value: bool = False  # the answer was no numpy array or scalar: judged by its values
    declared: tuple | None = None  # the output shape a model-based implementation declared (int or None per dim)
    nodes: int = 1  # nodes of the model that answered: 1 a one-node model (or a function), more a packed one
    split: bool = False  # its pack failed as a whole and was split to answer it (worker.Answered)
    # Models the implementation compiled for this call (a pack's are on its first reply), loaded
    # from the compile cache instead, and the seconds both took (worker.Models).
    compiles: int = 0
    loaded: int = 0
    model_seconds: float = 0.0


def _context() -> multiprocessing.context.BaseContext:
    """forkserver where the platform has it: a fresh worker is a fork of a small, thread-free
    server that already imported numpy, so restarts after a crash are cheap and onnxruntime's
    threads in this process are never forked. spawn elsewhere."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["engine.worker"])
        return context
    return multiprocessing.get_context("spawn")


def _loaded(message: bytes) -> dict:
    """The worker's first message, checked: ``{"ready": description}`` or ``{"error": text}``."""
    try:
        loaded = json.loads(message)
    except (ValueError, RecursionError):
        raise worker.Malformed("not JSON") from None
    if not isinstance(loaded, dict) or len(loaded) != 1:
        raise worker.Malformed("not one entry")
    if isinstance(loaded.get("error"), str):
        return {"error": loaded["error"][:_ERROR_CHARS]}
    if not isinstance(loaded.get("ready"), dict):
        raise worker.Malformed("no description")
    return loaded


def _forkserver_gone() -> bool:
    """Whether the forkserver that starts workers (and reports their exit status) has died."""
    from multiprocessing import forkserver

    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    if pid is None:
        return False
    try:  # WNOWAIT: multiprocessing reaps it itself when it starts a new one
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except (ChildProcessError, AttributeError):
        return False


_LOST = -1000  # an exit status nobody could read (see _Worker.stop)


def _death(exitcode: int | None) -> str:
    if exitcode is None:
        return "the worker closed its connection without answering"
    if exitcode == _LOST:
        return ("the worker process ended, with an exit status no one can tell: the forkserver process that "
                "started it (and reports it) was killed")
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the worker process died from {name}"
    return f"the worker process exited with code {exitcode}"


class _Arena:
    """Memory shared with one worker for large inputs: a file in /dev/shm (the temporary folder
    where there is none) that both processes map. Its name is removed as soon as the worker has
    mapped it, so nothing is left behind however either process ends."""

    SIZE = 32 << 20

    def __init__(self) -> None:
        shm = "/dev/shm"
        descriptor, self.path = tempfile.mkstemp(prefix="argmin-arena-", dir=shm if os.path.isdir(shm) else None)
        try:
            os.ftruncate(descriptor, self.SIZE)
            self.memory = mmap.mmap(descriptor, self.SIZE)
        finally:
            os.close(descriptor)
        self.view = np.frombuffer(self.memory, np.uint8)

    def unlink(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    def close(self) -> None:
        self.unlink()
        self.view = None
        with contextlib.suppress(BufferError, ValueError):
            self.memory.close()

    def pack(self, calls: Sequence[Call], units: Sequence[Sequence[int]],
             refused: Sequence[bool | None]) -> list[tuple]:
        """The packs of calls as sent (``units``: the indices of each pack's calls), each as
        ``([data, ...], version, [attributes, ...], form, refused)``: large inputs copied into the
        arena (their place, dtype and shape sent instead), the rest as they are, until the arena is
        full; ``refused``: per pack, whether its type was refused alone (worker.answers)."""
        sent, offset = [], 0
        for unit in units:
            datas = []
            for index in unit:
                data = calls[index][0]
                size = data.nbytes
                if size >= worker.SHARED_MIN_BYTES and offset + size <= self.SIZE:
                    self.view[offset:offset + size] = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
                    datas.append((offset, data.dtype, data.shape))
                    offset += -(-size // 64) * 64  # aligned for any dtype
                else:
                    datas.append(data)
            _, version, _, form = calls[unit[0]]
            sent.append((datas, version, [dict(calls[index][2]) for index in unit], form, refused[len(sent)]))
        return sent


class _Worker:
    """One worker process, the parent's end of its pipe and the memory they share."""

    def __init__(self, impl: str, path: list[str], cwd: str, memory_limit: int | None, log: str | None,
                 compile_cache: str | None) -> None:
        context = _context()
        self.conn, child = context.Pipe(duplex=True)
        self.arena = _Arena()
        # The worker's temporary folder (TMPDIR): what its runtime leaves there goes with it, even
        # when it is killed mid-call.
        self.scratch = tempfile.mkdtemp(prefix="argmin-worker-")
        self.process = context.Process(target=worker.serve,
                                       args=(child, impl, path, cwd, memory_limit, self.arena.path, log,
                                             self.scratch, compile_cache),
                                       name="argmin-impl-worker", daemon=False)
        try:
            self.process.start()
        except BaseException:  # no worker (a forkserver that cannot start one): nothing left in /dev/shm
            self.arena.close()
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.conn.close()
            raise
        finally:
            child.close()  # so that the worker's death reads as EOF here
        self.ready = False
        self.description: dict | None = None  # what the worker loaded (plugins.describe)

    def wait_ready(self) -> str | None:
        """None when the implementation loaded, else why not. A load error (a bad --impl, a
        module that does not import) is a UsageError, as it would be in-process."""
        try:
            if not self.conn.poll(_STARTUP_SECONDS):
                self.kill()
                return f"the worker did not load the implementation within {_STARTUP_SECONDS:g} s"
            try:
                message = _loaded(self.conn.recv_bytes(_READY_CAP))
            except (EOFError, OSError) as exc:
                if str(exc) == "bad message length":
                    self.kill()
                    return f"the worker sent more than the {worker.format_size(_READY_CAP)} its first message may take"
                return _death(self.stop())
            except worker.Malformed as exc:
                self.kill()
                return f"the worker sent a malformed first message ({exc})"
        finally:
            self.arena.unlink()  # mapped by now, or never to be
        if "error" in message:
            self.stop()
            raise UsageError(message["error"])
        self.ready, self.description = True, message["ready"]
        return None

    def stop(self) -> int | None:
        """Let the worker exit (it does when its pipe closes), kill it if it does not, and end
        whatever it started (see ``_end_group``)."""
        self.conn.close()
        self.process.join(_EXIT_GRACE_SECONDS)
        if self.process.exitcode is None:
            self.process.kill()
            self.process.join()
        exitcode = self.process.exitcode
        if exitcode == 255 and _forkserver_gone():
            # multiprocessing reads a worker's status from its forkserver, and says 255 when that
            # is gone; the worker is then this process's child (guard_owner made it a subreaper).
            exitcode = self._own_status()
        self._end_group()
        shutil.rmtree(self.scratch, ignore_errors=True)  # after the group: nothing writes there any more
        self.arena.close()
        return exitcode

    def _own_status(self) -> int:
        """The exit status of a worker orphaned by its forkserver, read here; _LOST where this
        process is not its subreaper or it does not end within the grace period."""
        deadline = time.monotonic() + _EXIT_GRACE_SECONDS
        while True:
            try:
                pid, status = os.waitpid(self.process.pid, os.WNOHANG)
            except ChildProcessError:
                return _LOST
            if pid:
                return os.waitstatus_to_exitcode(status)
            if time.monotonic() > deadline:
                return _LOST
            time.sleep(0.01)

    def kill(self) -> None:
        self.process.kill()
        self.process.join()
        self._end_group()
        shutil.rmtree(self.scratch, ignore_errors=True)  # after the group: nothing writes there any more
        self.conn.close()
        self.arena.close()

    def _end_group(self) -> None:
        """The worker leads a process group of its own (worker.serve): its children, which may
        hold the run's stdout open (``nox ... | cat`` would wait for them), end with it. A child
        that left the group (setsid) is beyond this."""
        if not hasattr(os, "killpg") or self.process.pid is None:
            return
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, signal.SIGKILL)
        # Those that became this process's children (a subreaper's: see guard_owner) are reaped.
        deadline = time.monotonic() + 0.1
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-self.process.pid, os.WNOHANG)[0] or time.monotonic() < deadline:
                time.sleep(0.005)


_live: weakref.WeakSet[Runner] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """Workers are not daemons (so implementations may start processes of their own); end them
    before multiprocessing's own exit handler would wait for them."""
    for runner in list(_live):
        runner.close()


def guard_owner() -> bool:
    """Linux: make this process (the one that owns the run) non-dumpable, so that no process of
    the same user without CAP_SYS_PTRACE, the worker running the implementation included, can
    ptrace it or read or write its memory through /proc/PID/mem (its /proc entries other than
    the world-readable ones become root's); and a child subreaper, so that a worker whose
    forkserver was killed becomes its child and its exit status can still be read. Returns
    whether it did both; elsewhere it does nothing."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 and libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _group(call: Call) -> tuple | None:
    """The pack group of a call: version, element type, form and whether its input is empty;
    None where it is not in a packed form."""
    data, version, _, form = call
    return (version, data.dtype, form, data.size == 0) if form in PACKED_FORMS else None


class Runner:
    """Calls one implementation, in a worker process or in-process."""

    def __init__(self, impl: str, *, isolation: str = "process", timeout: float = 10.0,
                 memory_limit: int | None = worker.DEFAULT_MEMORY_LIMIT, log: Path | None = None,
                 compile_cache: Path | None = None) -> None:
        """``log``: where the worker's stdout and stderr go (process isolation); None leaves
        them on the caller's. ``compile_cache``: the implementation's folder of the compile cache
        (engine.adapters.compile_cache), the one place besides its scratch folder it writes to."""
        if isolation not in ISOLATION_MODES:
            raise UsageError(f"--isolation {isolation!r} is not a mode; use one of: {', '.join(ISOLATION_MODES)}")
        if not timeout > 0:
            raise UsageError(f"--timeout {timeout!r} is not a positive number of seconds; use e.g. --timeout 10")
        self.impl, self.isolation, self.timeout, self.memory_limit = impl, isolation, timeout, memory_limit
        self.limit = timeout  # the run's full --timeout: a pack's (``timeout`` may adapt for single calls)
        self._caps: dict[tuple, int] = {}  # node cap per pack group (packs): adapts to failures
        self._refused: set[tuple] = set()  # pack groups refused as unsupported so far (refused)
        self._computed: set[tuple] = set()  # pack groups a call of which was answered otherwise
        self._spent = worker.NONE  # what the in-process adapter had spent on models at the last reply
        check(impl)  # a malformed --impl is a UsageError before any worker starts
        self._worker: _Worker | None = None
        self.restarts = 0  # workers started after the first, i.e. after crashes and timeouts
        self._started = 0
        self.description: dict | None = None
        if isolation == "none":
            with worker.compile_cache_at(compile_cache):
                self._fn = resolve(impl)
            self.description = describe(impl, self._fn)
        else:
            # The implementation is imported only in the worker: a plug-in that crashes on
            # import, or imports a heavy runtime, never does so in the process owning the run.
            # Every worker, even one restarted after the caller changed directory, loads the same.
            self._worker_args = (portable(impl), list(sys.path), os.getcwd(), memory_limit,
                                 None if log is None else str(Path(log).resolve()),
                                 None if compile_cache is None else str(compile_cache))
            self._start()  # start loading now, overlapping whatever the caller does next
            _live.add(self)

    def load(self) -> dict:
        """Wait until the implementation has loaded and return what it is (``plugins.describe``);
        raise UsageError with the worker's one-line message when it does not load."""
        if self.description is not None:
            return self.description
        if self._worker is None:
            self._start()
        try:
            problem = self._worker.wait_ready()
        except UsageError:
            self._worker = None
            raise
        if problem is not None:
            self._worker = None
            raise UsageError(f"--impl {self.impl!r}: {problem} while loading the implementation; "
                             f"try --isolation none to see it fail in this process")
        self.description = self._worker.description
        return self.description

    def _start(self) -> None:
        self._worker = _Worker(*self._worker_args)
        self.restarts += self._started > 0
        self._started += 1

    def call(self, data: np.ndarray, version: int, attributes: Mapping[str, int], form: str | None = None) -> Reply:
        """One call; ``form``: the model form for model-based implementations (engine.forms)."""
        return self.call_many([(data, version, attributes, form)])[0]

    def call_many(self, calls: Sequence[Call], pack: bool = False,
                  units: Sequence[Sequence[int]] | None = None, faults: int | None = None) -> list[Reply]:
        """The replies to several calls, made in order. In a worker they travel as one request
        and the replies come back one by one; after a crash or a timeout the calls left are
        made in a fresh worker. With ``pack``, calls in a packed form are asked through packed
        models (``packs``); a pack that crashes or hangs its worker is bisected, in fresh workers,
        until the crash or hang is pinned on one call asked alone. ``units``: the packs to ask
        (``packs`` of calls with the same signatures), instead of cutting them afresh. ``faults``:
        once that many calls crashed or hung, the calls left are not made (their replies say
        UNASKED): a batch of hanging inputs costs no more timeouts than its test may judge."""
        if units is None:
            units = self.packs(calls) if pack else [[index] for index in range(len(calls))]
        units = deque(list(unit) for unit in units)
        replies: dict[int, Reply] = {}
        if self.isolation == "none":
            for unit in units:
                self._in_process(calls, unit, replies)
            return [replies[index] for index in range(len(calls))]
        while units and (faults is None or sum(r.status in FAULTS for r in replies.values()) < faults):
            self._call_worker(calls, units, replies)
        return [replies.get(index) or Reply(UNASKED, None, "not asked: its batch had crashed or hung as often as "
                                                           "its test may", 0.0) for index in range(len(calls))]

    def packs(self, calls: Sequence[Call]) -> list[list[int]]:
        """The calls' indices cut into packs. Calls in a packed form make groups by version,
        element type and form (``_group``). The first call of a group is asked alone, a one-node
        model (a witness: bugs that show only there keep being sampled), the rest in packs of at
        most PACK_ELEMENTS input elements and the group's node cap (``_caps``), in the order they
        were made. Empty inputs start at a cap of one node: runtimes often refuse them (an empty
        axis has no answer at all), and one refusal fails a whole pack; the cap grows only where
        they are answered."""
        units: list[list[int]] = []
        open_packs: dict[tuple, tuple[list[int], int] | None] = {}
        for index, call in enumerate(calls):
            key = _group(call)
            if key is None:
                units.append([index])
                continue
            if key not in open_packs:
                open_packs[key] = None
                if not key[-1]:
                    units.append([index])
                    continue
            size = call[0].size
            current = open_packs[key]
            if current is None or len(current[0]) >= self._cap(key) or current[1] + size > PACK_ELEMENTS:
                units.append([index])
                open_packs[key] = (units[-1], size)
            else:
                current[0].append(index)
                open_packs[key] = (current[0], current[1] + size)
        return units

    def _adapt(self, calls: Sequence[Call], unit: Sequence[int], failed: bool) -> None:
        """A group's node cap halves when one of its packs failed as a whole (it was bisected)
        and doubles, up to PACK_NODES, when a pack or single call of it answered: a type the
        runtime refuses soon costs no more compiles than without packing."""
        key = _group(calls[unit[0]])
        if key is not None:
            self._caps[key] = max(1, len(unit) // 2) if failed else min(PACK_NODES, 2 * self._cap(key))

    def _cap(self, key: tuple) -> int:
        return self._caps.get(key, 1 if key[-1] else PACK_NODES)

    def _adapted(self, calls: Sequence[Call], unit: Sequence[int], replies: Mapping[int, Reply]) -> None:
        """``_adapt`` after ``unit`` was answered: failed where the pack was split to answer it,
        grown where the pack (or a single call) answered. And whether the unit's group is
        refused: a call asked alone answered "unsupported", and no call of the group was answered (an
        error is no sign either way: an invalid axis fails before a kernel is looked for)."""
        answered = [replies[index] for index in unit]
        if len(unit) > 1 and any(reply.split for reply in answered):
            self._adapt(calls, unit, True)
        elif len(unit) > 1 or answered[0].status == "ok":  # a pack answered (or refused) as a whole
            self._adapt(calls, unit, False)
        key = _group(calls[unit[0]])
        if key is None or key in self._computed:
            return
        if any(reply.status == "ok" for reply in answered):
            self._computed.add(key)
            self._refused.discard(key)
        elif len(unit) == 1 and answered[0].status == "unsupported":
            self._refused.add(key)

    def refused(self, calls: Sequence[Call], unit: Sequence[int]) -> bool | None:
        """Whether ``unit`` belongs to a group refused as unsupported so far (see ``_adapted``):
        a pack of it that the runtime refuses as unsupported is then refused as a whole, each of
        its calls answered "unsupported", instead of being asked call by call (a model each).
        None where nothing is known of the group yet (the worker then goes by what a call asked
        alone earlier in the same request answered: ``worker.Refusals``)."""
        key = _group(calls[unit[0]])
        return True if key in self._refused else False if key in self._computed else None

    def _in_process(self, calls: Sequence[Call], unit: list[int], replies: dict[int, Reply]) -> None:
        # A copy, as the worker gets: an implementation that writes into its input must not
        # change the caller's array in one mode and not in the other.
        # The answer reaches the judge as the same data as from a worker (a copy, objects as
        # their descriptions: worker.detached).
        _, version, _, form = calls[unit[0]]
        datas = [np.array(calls[index][0], copy=True) for index in unit]
        outcomes = worker.answers(self._fn, datas, version, [calls[index][2] for index in unit], form,
                                  self.refused(calls, unit))
        for index, answered in zip(unit, outcomes, strict=True):
            spent = worker.models_of(self._fn)
            replies[index] = Reply(*worker.detached(answered.outcome, answered.nodes, answered.split,
                                                    spent - self._spent))
            self._spent = spent
        self._adapted(calls, unit, replies)

    def _call_worker(self, calls: Sequence[Call], units: deque[list[int]], replies: dict[int, Reply]) -> None:
        try:
            self._exchange(calls, units, replies)
        except BaseException:
            # Ctrl-C (or anything else) mid-call leaves answers in flight: never read them as the
            # next calls' answers. The worker ignores SIGINT, so end it here.
            if self._worker is not None:
                self._worker.kill()
                self._worker = None
            raise

    def _exchange(self, calls: Sequence[Call], units: deque[list[int]], replies: dict[int, Reply]) -> None:
        """Replies to the packs in ``units``, taken off it as they are answered: all of them, or up
        to the pack that crashed or hung; that one is then cut down for the next worker."""
        if self._worker is None:
            self._start()
        current = self._worker
        assert current is not None
        start = time.perf_counter()
        if not current.ready:
            problem = current.wait_ready()
            self.description = self.description or current.description
            if problem is not None:
                self._worker = None
                unit = units.popleft()
                replies[unit[0]] = Reply("crash", None, f"{problem} while loading the implementation",
                                         time.perf_counter() - start)
                if unit[1:]:
                    units.appendleft(unit[1:])
                return
            start = time.perf_counter()
        refused = [self.refused(calls, unit) for unit in units]
        request = pickle.dumps(current.arena.pack(calls, units, refused), protocol=pickle.HIGHEST_PROTOCOL)
        with contextlib.suppress(OSError):  # the worker died before or while reading it: read its death below
            current.conn.send_bytes(request)
        while units:
            unit = units[0]
            for position, index in enumerate(unit):
                left = len(unit) - position
                # A pack may compile and bisect before it answers: it has the run's full timeout.
                reply = self._reply(current, start, self.timeout if len(unit) == 1 else self.limit, left)
                reply.nodes = min(reply.nodes, MAX_NODES)  # what the worker says, within what a model holds
                start = time.perf_counter()
                if reply.status in FAULTS and reply.nodes > 1 and left > 1:
                    # Somewhere in a pack: ask its unanswered calls again as two halves, in a fresh worker.
                    half = position + left // 2
                    units.popleft()
                    units.extendleft([unit[half:], unit[position:half]])
                    self._adapt(calls, unit, True)
                    return
                replies[index] = reply
                if reply.status in FAULTS:
                    reply.nodes = 1  # pinned on this call
                    units.popleft()
                    if unit[position + 1:]:
                        units.appendleft(unit[position + 1:])
                    return
            units.popleft()
            self._adapted(calls, unit, replies)

    def _reply(self, current: _Worker, start: float, timeout: float, nodes: int = 1) -> Reply:
        """The worker's reply to its next call, or what happened to the worker instead (with
        ``nodes``: the calls of the pack in flight that are still unanswered)."""
        try:
            first = min(timeout, _WATCH_SECONDS)  # most calls answer within it: one poll, as with no limit
            waited = "answered" if current.conn.poll(first) else self._wait(current, first, timeout)
        except OSError:  # the worker is gone: reading says how
            waited = "answered"
        if waited != "answered":
            held = _resident(current.process.pid)
            current.kill()
            self._worker = None
            error = f"no answer within {timeout:g} s" if waited == "timeout" else \
                f"{worker.out_of_memory(held, self.memory_limit)} during the call"
            return Reply(waited, None, f"{error}; the worker process was killed", time.perf_counter() - start,
                         nodes=nodes)
        try:
            reply = current.conn.recv_bytes(_REPLY_CAP)
        except (EOFError, OSError) as exc:
            elapsed = time.perf_counter() - start
            self._worker = None
            if str(exc) == "bad message length":
                # Past the worker's own bound (worker.ANSWER_CAP): the implementation wrote to
                # the pipe itself. Nothing of it is read.
                current.kill()
                return Reply("crash", None, f"the worker sent more than the {worker.format_size(_REPLY_CAP)} a "
                                            f"reply may take; the worker process was killed", elapsed, nodes=nodes)
            return Reply("crash", None, _death(current.stop()), elapsed, nodes=nodes)
        try:
            outcome = Reply(*worker.decode(reply))
        except worker.Malformed as exc:  # the implementation wrote to the pipe itself
            current.kill()
            self._worker = None
            return Reply("crash", None, f"the worker sent a malformed reply ({exc}); the worker process was killed",
                         time.perf_counter() - start, nodes=nodes)
        if outcome.status == "crash":  # out of memory or sys.exit: the worker has ended itself
            current.stop()
            self._worker = None
        return outcome

    def _wait(self, current: _Worker, waited: float, timeout: float) -> str:
        """Go on waiting for the worker's reply after ``waited`` seconds: 'answered', 'timeout',
        or 'crash' once the worker holds more memory than its limit (checked every
        _WATCH_SECONDS)."""
        while True:
            if waited >= timeout:
                return "timeout"
            if self.memory_limit is not None and _resident(current.process.pid) > self.memory_limit:
                return "crash"
            step = min(timeout - waited, _WATCH_SECONDS)
            if current.conn.poll(step):
                return "answered"
            waited += step

    def close(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
        _live.discard(self)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def trivial_argmin(data: np.ndarray, *, opset: int, axis: int = 0, keepdims: int = 1, **_: Any) -> np.ndarray:
    """The benchmark's implementation: as cheap as a correct-looking answer gets."""
    return np.argmin(data, axis=axis, keepdims=bool(keepdims))


def benchmark(calls: int = 2000, shape: tuple[int, ...] = (4, 8)) -> dict[str, float]:
    """Median seconds per call of a trivial numpy implementation in each isolation mode, and
    the per-call overhead of process isolation. Prints nothing: callers format the figures."""
    data = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    impl = "engine.isolation:trivial_argmin"
    medians = {}
    for mode in ISOLATION_MODES:
        with Runner(impl, isolation=mode) as runner:
            runner.call(data, 13, {})  # warm-up: worker start and first imports
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                runner.call(data, 13, {"axis": 1})
                times.append(time.perf_counter() - start)
        medians[mode] = statistics.median(times)
    return {"process_s": medians["process"], "none_s": medians["none"],
            "overhead_s": medians["process"] - medians["none"], "ratio": medians["process"] / medians["none"]}


if __name__ == "__main__":
    figures = benchmark()
    print(f"median per call: process {figures['process_s'] * 1e6:.1f} us, in-process {figures['none_s'] * 1e6:.1f} us; "
          f"overhead {figures['overhead_s'] * 1e6:.1f} us ({figures['ratio']:.1f}x)")
