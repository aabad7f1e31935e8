"""Fault isolation: call the implementation under test so that its crashes and hangs become
results instead of ending the run. ``Runner`` is its face: what the rest of the engine calls.

In ``process`` mode calls go to a worker process over a socket it inherited, a batch of calls
per round trip (replies come back one by one, so a crash or a hang is pinned on its call); large
inputs travel through memory the two processes share (engine.asking.arena), small ones pickled in
the request. A call that takes longer than ``timeout`` kills the worker (status ``timeout``); a
worker that dies mid-call (``os._exit``, abort, segfault) gives ``crash`` with its exit code or
signal; so does an implementation that holds more memory than ``memory_limit`` ("out of memory":
the worker checks its peak after each call; the owner watches a call in progress:
engine.asking.exchange). Either way the next call starts a fresh worker (engine.asking.pool).
Calls may also be asked through packed models (engine.asking.packing: many cases, one compiled
model); a pack that crashes or hangs is bisected in fresh workers until one call, asked alone, is
to blame. A packed answer says which model gave it (``Reply.pack``: its nodes, this process's own
arrays, rebuilt from the layout the worker tells), so that a failure only that model shows can be
asked again. Answers are bounded (see ``worker``): the parent never reads a reply larger than
``protocol.ANSWER_CAP``, and replies are data (``protocol.decode``), never pickles: the worker
runs the implementation's code.

Every worker is a fresh process (engine.asking.launch says how each starts,
engine.asking.worker_process holds one) in a sandbox of its own where the machine offers one
(``engine.asking.sandbox``: Linux, bubblewrap): it sees the filesystem read-only but for its scratch
folder, sees no process outside the sandbox, has no network, and everything it starts ends with
it. Without a sandbox it still leads a session and process group of its own, ended with it.
``none`` mode calls in-process, for debugging and speed; it cannot survive a crash or enforce a
timeout or a memory limit."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import pickle
import time
import weakref
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType, TracebackType

import numpy as np

from engine.asking import limits, output, protocol, sandbox, worker
from engine.asking.calls import CallArgs, Node, Reply
from engine.asking.exchange import next_reply
from engine.asking.history import History, Ran
from engine.asking.launch import launch_of, sweep_scratch
from engine.asking.loader import UsageError, check, describe, plugin_file, resolve
from engine.asking.packing import MAX_NODES, Layouts, Planner
from engine.asking.pool import Pool
from engine.asking.worker_process import WorkerProcess
from engine.contract.adapters import Schedule, schedule_compiles
from engine.contract.forms import SYMBOLIC
from results.outcomes import CRASH, FAULTS, OK, UNASKED

ISOLATION_MODES = ("process", "none")
# What a plug-in fails to import with when it reads a file or module its sandbox does not show.
_UNSEEN = ("FileNotFoundError", "PermissionError", "NotADirectoryError", "ModuleNotFoundError")
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
        self.unprepared: set[Schedule] = set()  # schedules whose models did not compile in time: asked without
        self.history = History()  # the models the current worker ran (engine.asking.history)
        self._spent = protocol.NONE  # what the in-process adapter had spent on models at the last reply
        check(impl)  # a malformed --impl is a UsageError before any worker starts
        self.pool: Pool | None = None  # its worker processes (process isolation)
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
            sweep_scratch()
            self.pool = Pool(launch_of(impl, memory_limit, self.sandbox, log, writable, readable, compile_cache,
                                       pass_env, processes, set_env))
            self._start()  # start loading now, overlapping whatever the caller does next
            _live.add(self)

    def record(self) -> dict[str, object]:
        """Where and how the implementation runs, for the run's environment (and certificate):
        the sandbox (sandbox.Sandbox.record) with each bound and how it is enforced, and the names
        of the environment variables its workers get."""
        if self.isolation == "none":
            return self.sandbox.record()
        launch = self.pool.launch
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
            {"what": "processes", "limit": self.pool.launch.processes, "by": by or nproc,
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
        current = self.pool.current or self._start()
        try:
            problem = current.wait_ready()
        except UsageError as exc:
            self.pool.current = None
            raise UsageError(self._unseen(str(exc))) from None
        if problem is not None:
            self.pool.current = None
            raise UsageError(f"--impl {self.impl!r}: {problem} while loading the implementation; "
                             f"try --isolation none to see it fail in this process")
        self.description = current.description
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

    @property
    def restarts(self) -> int:
        """Workers started after the first, i.e. after crashes and timeouts (none in-process)."""
        return 0 if self.pool is None else self.pool.restarts

    def _start(self) -> WorkerProcess:
        """Make the worker for the next calls, which has run nothing yet."""
        self.history.restart()
        return self.pool.start()

    def fresh(self) -> None:
        """A new worker for the next calls, which has run nothing (in-process, the same process)."""
        if self.isolation == "none":
            return
        if self.pool.current is not None:
            self.pool.current.stop()
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
            self.pool.kill()
            raise

    def _exchange(self, calls: Sequence[CallArgs], units: deque[list[int]], replies: dict[int, Reply],
                  exact: bool, schedule: Schedule | None) -> None:
        """Replies to the packs in ``units``, taken off it as they are answered: all of them, or up
        to the pack that crashed or hung; that one is then cut down for the next worker (``exact``:
        not cut: the crash or hang is every unanswered call's reply)."""
        ready = self._loaded(units, replies)
        if ready is None:
            return
        current, start = ready
        start = self._sent(current, start, calls, units, exact, schedule)
        if start is None:
            return
        layouts = Layouts(calls)
        while units:
            unit = units[0]
            for position, index in enumerate(unit):
                left = len(unit) - position
                # A pack may compile and bisect before it answers: it has the run's full timeout.
                reply = next_reply(current, start, self.timeout if len(unit) == 1 else self.limit, self.memory_limit,
                                   left, functools.partial(layouts.packed, unit=unit, at=position))
                if current.ended:
                    self.pool.current = None
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
                    replies[index] = replace(reply, nodes=1)  # pinned on this call
                    units.popleft()
                    if unit[position + 1:]:
                        units.appendleft(unit[position + 1:])
                    return
                replies[index] = reply
            self._ran(calls, unit, replies)
            units.popleft()
            if not exact:
                self.planner.answered(calls, unit, replies)

    def _sent(self, current: WorkerProcess, start: float, calls: Sequence[CallArgs], units: deque[list[int]],
              exact: bool, schedule: Schedule | None) -> float | None:
        """Send the worker the request of ``units`` and wait until it has compiled the models of
        a schedule new to it (``_prepared``): when the first reply's time starts, or None where
        the schedule did not compile in time (the units are then asked again without it)."""
        schedule = None if schedule in self.unprepared else schedule
        prepare = [] if exact or schedule is None else _to_prepare(calls, units, schedule, current.prepared)
        refused = [self.planner.refused(calls, unit) for unit in units]
        request = pickle.dumps((prepare, current.arena.pack(calls, units, refused, exact, schedule)),
                               protocol=pickle.HIGHEST_PROTOCOL)
        with contextlib.suppress(OSError):  # the worker died before or while reading it: read its death below
            current.conn.send_bytes(request)
        if not prepare:
            return start
        return time.perf_counter() if self._prepared(current, start, prepare, schedule) else None

    def _prepared(self, current: WorkerProcess, start: float, prepare: list[tuple], schedule: Schedule) -> bool:
        """Whether the worker compiled the models of the schedules ``prepare`` lists within a
        --timeout per compile they may take (worker.prepared). Where it hung or crashed instead,
        no case is charged with it: the schedule is dropped for the rest of the run, and the calls
        are asked again, through packs, in a fresh worker."""
        reply = next_reply(current, start, self.limit * schedule_compiles(schedule), self.memory_limit)
        if reply.status == OK:
            current.prepared.update(prepare)
            return True
        if not current.ended:  # (not read: replies it may still send would be taken for the calls')
            current.kill()
        self.pool.current = None
        self.unprepared.add(schedule)
        return False

    def _loaded(self, units: deque[list[int]], replies: dict[int, Reply]) -> tuple[WorkerProcess, float] | None:
        """The current worker (started where there is none) once it has loaded the implementation,
        and when it was ready; None where it did not load: the first call of ``units`` then gets
        why, as a crash, and the next calls a fresh worker."""
        current = self.pool.current or self._start()
        start = time.perf_counter()
        if current.ready:
            return current, start
        problem = self.pool.ready(current)
        self.description = self.description or self.pool.current.description
        if problem is None:
            return self.pool.current, time.perf_counter()
        self.pool.current = None
        unit = units.popleft()
        replies[unit[0]] = Reply(CRASH, None, f"{problem} while loading the implementation",
                                 time.perf_counter() - start)
        if unit[1:]:
            units.appendleft(unit[1:])
        return None

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
        _live.discard(self)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _to_prepare(calls: Sequence[CallArgs], units: Iterable[Sequence[int]], schedule: Schedule,
                prepared: set[tuple]) -> list[tuple]:
    """The schedules ``(version, dtype, schedule)`` of the symbolic calls in ``units`` that the
    worker has not compiled yet (``prepared``)."""
    wanted = dict.fromkeys((calls[index][1], calls[index][0].dtype, schedule) for unit in units for index in unit
                           if calls[index][3] == SYMBOLIC)
    return [item for item in wanted if item not in prepared]
