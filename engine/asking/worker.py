"""One call of the implementation under test, and the worker process that makes such calls.

``call`` is shared by both isolation modes so that a verdict never depends on the mode: the
same exceptions map to the same statuses. ``serve`` is the worker's main loop; it loads the
implementation itself from the ``--impl`` string (functions are never pickled) and answers
pickled requests over a multiprocessing connection: each request is a batch of calls, made in
order, with one reply sent as each call ends (so a crash or a hang is still pinned on its call,
and one round trip serves a whole batch). Calls may come in packs, asked through one packed
model (``answers``), their replies sent once the pack ran. Replies are data, never pickles: the worker runs the
implementation's code, so the process that owns the run reads only a dtype, a shape, bytes and
bounded texts from it (``encode``/``decode``), and repr()s nothing it returned.

Bounds. The output of ArgMin holds one int64 index per slice, so its size is known before the
call: an answer far larger than that cannot be right and is judged on its shape alone
(``oversize``), never sent back whole; nothing larger than ``ANSWER_CAP`` crosses to the process
that owns the run, whatever the implementation returns. The worker's memory is limited
(``--memory-limit``, resident memory: what the machine actually gives it, not the address space
that runtimes reserve for thread stacks and arenas without using it): a call after which the
worker's peak is over the limit is a crash, "out of memory", and the worker is replaced (the
parent also watches a call in progress and kills a worker that passes the limit)."""

from __future__ import annotations

import contextlib
import json
import math
import mmap
import multiprocessing
import os
import pickle
import signal
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from engine.asking.protocol import (
    ANSWER_CAP,
    ERROR_CHARS,
    NONE,
    Models,
    charged,
    encode,
    tellable,
    typeless,
)
from engine.contract.adapters import COMPILE_CACHE_ENV, SAME, Layout, NotPackable, Schedule
from engine.contract.forms import SYMBOLIC
from engine.contract.replies import Reply
from results.outcomes import CRASH, OK, OVERSIZE, RAISED, UNSUPPORTED
from results.sizes import format_size

try:
    import resource
except ImportError:  # Windows: no peak memory to read, so no memory limit
    resource = None

_ALWAYS_KEPT = 1 << 20  # answers up to this size are kept and judged in full, whatever was expected
_SLACK = 16  # beyond that, answers up to this many times the expected output's size are kept
DEFAULT_MEMORY_LIMIT = 4 << 30  # resident bytes a worker may hold: a leak stops long before the machine does
# The peak (here) and the limits of a worker's control group (engine.asking.worker_process) are looked at after
# every call this long or longer, and at least this often: a shorter call cannot touch enough memory
# (about 10 MB per ms) or start enough processes to matter on its own, and neither count falls.
LOOK_AFTER_SECONDS = 1e-3
LOOK_EVERY_SECONDS = 0.05


def expected_elements(shape: tuple[int, ...], attributes: Mapping[str, int]) -> int:
    """Elements of the output for an input of ``shape``: one index per slice along the axis (0
    when omitted, at every version). Where no axis is valid (rank 0, an axis out of range), the
    input's own size with empty dimensions counted as 1, which no reading of any axis exceeds."""
    rank, axis = len(shape), attributes.get("axis", 0)
    if rank and isinstance(axis, int) and -rank <= axis < rank:
        return math.prod(side for i, side in enumerate(shape) if i != axis % rank)
    return math.prod(max(side, 1) for side in shape)


def answer_limit(shape: tuple[int, ...], attributes: Mapping[str, int]) -> int:
    """Bytes an answer to this input may have and still be kept: far more than the int64
    output it should be, and never more than ANSWER_CAP."""
    return min(ANSWER_CAP, max(_ALWAYS_KEPT, _SLACK * 8 * expected_elements(shape, attributes)))


def _as_array(result: Any) -> tuple[np.ndarray | None, str | None]:
    """numpy's view of a return value. A value numpy can hold only as objects is still an
    answer (a wrong one), so it is kept; only a value numpy refuses outright is an error."""
    for read in (_numpy_view, lambda value: np.asarray(value, dtype=object)):
        try:
            return read(result), None
        except MemoryError:
            raise  # out of memory is not the answer's fault
        except Exception:
            continue
    return None, _cut(f"TypeError: returned {type(result).__name__}, which numpy.asarray does not accept")


def _numpy_view(result: Any) -> np.ndarray:
    """``numpy.asarray(result)``, or for a DLPack tensor it can read only as an object (it knows
    __array__ and the buffer protocol, not DLPack) ``numpy.from_dlpack``."""
    array = np.asarray(result)
    return np.from_dlpack(result) if array.dtype.hasobject and hasattr(result, "__dlpack__") else array


def _cut(text: str) -> str:
    return text if len(text) <= ERROR_CHARS else f"{text[:ERROR_CHARS]}... ({len(text)} characters)"


def _describe(exc: BaseException) -> str:
    message = " ".join(_cut(str(exc)).split())
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _oversize(value: np.ndarray, data: np.ndarray, attributes: Mapping[str, int]) -> str | None:
    """Why ``value`` is too large to keep, or None."""
    size = value.nbytes
    if size <= _ALWAYS_KEPT or size <= answer_limit(data.shape, attributes):  # the first test spares most calls
        return None
    expected = expected_elements(data.shape, attributes)
    return (f"returned {value.dtype} values of shape {value.shape} ({format_size(size)}), far larger than "
            f"the expected output ({expected} int64 element{'s' * (expected != 1)}); not kept")


def out_of_memory(held: int, limit: int) -> str:
    """A crash's description when the worker held ``held`` bytes under a ``limit``."""
    return (f"out of memory: the worker process held {format_size(held)}, over its --memory-limit of "
            f"{format_size(limit)}")


def _peak_resident() -> int:
    """The most memory this process has held resident so far, in bytes (0 where unknown)."""
    if resource is None:
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # macOS counts bytes, others KiB


def _failed(exc: BaseException, seconds: float) -> Reply:
    """What a call that raised ``exc`` did: unsupported, a crash (out of memory is not a rejection
    of the input; sys.exit ends a worker, and is reported the same way in-process) or raised."""
    if isinstance(exc, NotImplementedError):
        return Reply(UNSUPPORTED, None, _describe(exc), seconds)
    if isinstance(exc, MemoryError):
        return Reply(CRASH, None, f"out of memory: {_describe(exc)}", seconds)
    if isinstance(exc, SystemExit):
        return Reply(CRASH, None, _cut(f"the implementation called sys.exit({exc.code!r})"), seconds)
    return Reply(RAISED, None, _describe(exc), seconds)


def _unkept(answered: Reply, status: str, error: str, seconds: float) -> Reply:
    """``answered`` without its answer: ``status`` and why (the model that answered stays told)."""
    return replace(answered, status=status, value=None, error=error, seconds=seconds, by_value=False, declared=None)


def _kept(answered: Reply, value: np.ndarray | None, error: str | None, data: np.ndarray,
          attributes: Mapping[str, int], seconds: float) -> Reply:
    """``answered`` (the adapter's reply, or a plain function's return value in one) as it crosses
    to the judge: numpy's view of what came back (``value``; ``error``: why numpy refused it),
    unless it is far too large to keep (oversize), timed ``seconds``."""
    if error is not None:
        return _unkept(answered, RAISED, error, seconds)
    too_large = _oversize(value, data, attributes)
    if too_large is not None:
        return _unkept(answered, OVERSIZE, too_large, seconds)
    return replace(answered, value=value, seconds=seconds, by_value=typeless(answered.value))


def call(fn: Callable[..., Any], data: np.ndarray, version: int, attributes: Mapping[str, int],
         form: str | None = None) -> Reply:
    """Call ``fn(data, *, opset=version, **attributes)`` and classify what happened. (``opset``
    is the plug-in contract's name for the ArgMin version: the opset the node is imported at.)
    With a model ``form`` (model-based implementations only, see engine.contract.forms) the adapter
    answers through the model of that form, and says which output shape it declared."""
    start = time.perf_counter()
    try:
        answered = Reply(OK, fn(data, opset=version, **attributes)) if form is None else \
            fn.answer(form, data, version, attributes)
        seconds = time.perf_counter() - start
        value, error = _as_array(answered.value)
    except (Exception, SystemExit) as exc:
        return _failed(exc, time.perf_counter() - start)
    return _kept(answered, value, error, data, attributes, seconds)


def models_of(fn: Any) -> Models:
    """What a model-based adapter has spent on models so far; nothing for a plain function."""
    counts = [getattr(fn, name, 0) for name in ("compiles", "loaded", "model_seconds", "compiled_nodes")]
    if not all(type(n) is int for n in (*counts[:2], counts[3])) or type(counts[2]) not in (int, float):
        return NONE
    return Models(*counts)


def _unpacked(answered: Reply, data: np.ndarray, attributes: Mapping[str, int], seconds: float) -> Reply:
    """One node's reply of a packed model, read as ``call`` reads a whole call's."""
    value, error = _as_array(answered.value)
    return _kept(answered, value, error, data, attributes, seconds)


def _shifted(layout: Layout | None, start: int) -> Layout | None:
    """A half's layout counted from the first call of the whole: the calls move, dummies do not."""
    return layout if layout is None or not start else tuple(i + start if i >= 0 else i for i in layout)


def answers(fn: Callable[..., Any], datas: list[np.ndarray], version: int, attributes: list[Mapping[str, int]],
            form: str | None, refused: bool = False, exact: bool = False,
            schedule: Schedule | None = None) -> Iterator[Reply]:
    """The replies to a pack of calls, in order, each with the nodes of the model that answered
    it (1: a one-node model, or a plain function), whether its pack was split to get it (the pack
    failed as a whole: the process that owns the run makes the next packs of its kind smaller),
    and for a packed model its Layout and the call's node in it. One call is a plain ``call``. Several are asked
    as one packed model (``answer_pack``, each node's time its share of the whole; in the symbolic
    form some may come from signature models, engine.adapters.signatures); where that raises, the
    pack is split in halves and each half asked the same way, down to single calls, so that every
    call gets the answer of the smallest pack that works, or its own one-node model's. A pack the
    runtime refuses as unsupported is asked call by call at once (halving would compile every
    model twice), unless its type was ``refused`` alone already (engine.asking.packing.Planner.refused): then
    every call of it is answered "unsupported", one compile for the pack instead of one per call.
    ``schedule``: the signatures the calls were drawn within, which an adapter that compiles per
    node serves from one model of them all (engine.adapters.signatures), a call asked alone included:
    a one-node model is then compiled only for what the schedule's models do not answer. A unit
    of one asked ``exact`` is a one-node model, as its card's snippets are."""
    if len(datas) == 1 and (exact or not (schedule and form == SYMBOLIC)):
        yield call(fn, datas[0], version, attributes[0], form)
        return
    if exact:
        yield from _exactly(fn, datas, version, attributes, form)
        return
    start = time.perf_counter()
    try:
        packed = fn.answer_pack(form, datas, version, attributes, schedule) if schedule else \
            fn.answer_pack(form, datas, version, attributes)
    except NotImplementedError as exc:
        if refused:
            share = (time.perf_counter() - start) / len(datas)
            why = f"{_describe(exc)} (a packed model of {len(datas)} nodes, of a type refused alone too)"
            for _ in datas:
                yield Reply(UNSUPPORTED, None, why, share, nodes=len(datas))
            return
        yield from _one_by_one(fn, datas, version, attributes, form)
        return
    except NotPackable:
        yield from _one_by_one(fn, datas, version, attributes, form)
        return
    except (Exception, SystemExit):  # anything a single call would classify: bisected down to it
        if len(datas) == 1:  # a scheduled call its schedule's model did not answer: its own model's answer
            yield from _one_by_one(fn, datas, version, attributes, form)
            return
        half = len(datas) // 2
        for begin, part in ((0, slice(None, half)), (half, slice(half, None))):
            for answered in answers(fn, datas[part], version, attributes[part], form, schedule=schedule):
                yield replace(answered, split=True, layout=_shifted(answered.layout, begin))
        return
    share = (time.perf_counter() - start) / len(datas)
    for answered, data, attrs in zip(packed, datas, attributes, strict=True):
        yield _unpacked(answered, data, attrs, share)


def prepared(fn: Any, schedules: list[tuple[int, np.dtype, Schedule]]) -> Reply:
    """Compile the models of each schedule (an adapter's ``prepare``, where it has one) before its
    cases are asked: the process that owns the run allows this reply a --timeout per compile
    (engine.contract.adapters.schedule_compiles), where a case's reply gets one. What fails here
    fails again when a case asks it, and is that case's answer; the models' cost is charged to
    the first case's reply."""
    start = time.perf_counter()
    for version, dtype, schedule in schedules:
        with contextlib.suppress(Exception):
            getattr(fn, "prepare", lambda *_: None)(version, dtype, schedule)
    return Reply(OK, np.zeros(0, np.int64), None, time.perf_counter() - start)  # (an answer of no call)


def _exactly(fn: Callable[..., Any], datas: list[np.ndarray], version: int, attributes: list[Mapping[str, int]],
             form: str | None) -> Iterator[Reply]:
    """The replies of exactly the packed model of these nodes (``answer_model``), never split: a
    recorded pack asked again. Where it fails as a whole, every call gets what failed."""
    start = time.perf_counter()
    try:
        packed = fn.answer_model(form, datas, version, attributes)
    except (Exception, SystemExit) as exc:
        failed = _failed(exc, time.perf_counter() - start)
        for _ in datas:
            yield replace(failed, nodes=len(datas))
        return
    share = (time.perf_counter() - start) / len(datas)
    for answered, data, attrs in zip(packed, datas, attributes, strict=True):
        yield _unpacked(answered, data, attrs, share)


def _one_by_one(fn: Callable[..., Any], datas: list[np.ndarray], version: int, attributes: list[Mapping[str, int]],
                form: str | None) -> Iterator[Reply]:
    for data, attrs in zip(datas, attributes, strict=True):
        yield replace(call(fn, data, version, attrs, form), split=True)


def _shared(arena: mmap.mmap | None, item: Any) -> Any:
    """A call's input: a private, writable copy, as ``Runner`` gives in-process (unpickled small
    arrays are read-only views of the request's bytes, and a verdict must not depend on the mode);
    a large one read from the memory the process that owns the run shares with this worker
    (engine.asking.arena), where it was sent as its place, dtype and shape."""
    if isinstance(item, tuple):
        offset, dtype, shape = item
        count = math.prod(shape)
        return np.frombuffer(arena, dtype=dtype, count=count, offset=offset).reshape(shape).copy()
    return item if item.flags.writeable else item.copy()


class Refusals:
    """Which groups of calls (version, element type, form) a request's calls asked alone showed
    refused as unsupported, and none answered: where the process that owns the run knew nothing
    of a group when it sent the request (engine.asking.packing.Planner.refused), a pack after its witness
    goes by what the witness answered."""

    def __init__(self) -> None:
        self._refused: dict[tuple, bool] = {}

    def refused(self, group: tuple, known: bool | None) -> bool:
        return known if known is not None else self._refused.get(group, False)

    def saw(self, group: tuple, status: str, calls: int) -> None:
        if status == OK:
            self._refused[group] = False
        elif calls == 1 and status == UNSUPPORTED:
            self._refused.setdefault(group, True)


@contextlib.contextmanager
def compile_cache_at(folder: Path | str | None) -> Iterator[None]:
    """While loading an implementation: the compile cache folder its adapter reads
    (engine.adapters.compile_cache.ENV), or none."""
    previous = os.environ.pop(COMPILE_CACHE_ENV, None)
    if folder is not None:
        os.environ[COMPILE_CACHE_ENV] = str(folder)
    try:
        yield
    finally:
        os.environ.pop(COMPILE_CACHE_ENV, None)
        if previous is not None:
            os.environ[COMPILE_CACHE_ENV] = previous


def main(argv: list[str]) -> None:
    """The worker process's entry (``python -c BOOT ...``, see engine.asking.worker_process): ``argv`` holds
    the inherited descriptors of its connection to the parent and of the shared memory, then
    the settings as JSON. It tells the parent it is up (one byte, before any of the
    implementation's code runs: its credentials say which process this is, seen from the
    parent, even inside a sandbox's PID namespace), then serves."""
    conn_fd, arena_fd, settings = int(argv[0]), int(argv[1]), json.loads(argv[2])
    try:
        os.write(conn_fd, b"\0")
    except OSError:  # the parent is gone already (it closed this worker before it started)
        return
    multiprocessing.current_process().name = "argmin-impl-worker"
    if settings.get("processes") and resource is not None:
        # Where no control group bounds them (engine.asking.limits): the kernel counts this limit in the
        # sandbox's own user namespace, and nothing inside may raise it again.
        resource.setrlimit(resource.RLIMIT_NPROC, (settings["processes"], settings["processes"]))
    serve(Connection(conn_fd), settings["impl"], settings["path"], settings["cwd"], settings["memory_limit"],
          arena_fd, settings.get("compile_cache"))


def serve(conn: Connection, impl: str, path: list[str], cwd: str, memory_limit: int | None, arena_fd: int,
          compile_cache: str | None = None) -> None:
    """Worker main: load ``impl`` (only here: the parent never imports it), send back what it
    is or why it did not load, then answer requests ``(prepare, packs)`` until the parent closes
    the connection or the implementation crashes (out of memory, sys.exit): first, where
    ``prepare`` lists schedules ``(version, dtype, schedule)``, their models compiled (``prepared``),
    then the packs of calls ``[([data, ...], version, [attributes, ...], form, refused, exact,
    schedule), ...]`` (see ``answers``).
    What it compiles goes to ``compile_cache`` (its runtime's folder of the compile cache), where
    it has one. The parent set up everything else: stdout and stderr (the implementation's log),
    the temporary folder, the sandbox, the process group."""
    # Ctrl-C and a CI's SIGTERM are for the parent: it decides what happens (it ends this
    # worker as it stops), not the worker, which would otherwise die mid-call and have the case
    # in flight recorded as a crash.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.path[:] = path
    os.chdir(cwd)
    from engine.asking.loader import UsageError, describe, resolve

    try:
        with compile_cache_at(compile_cache):
            fn = resolve(impl)
        description = describe(impl, fn)
    except UsageError as exc:
        conn.send_bytes(json.dumps({"error": str(exc)}).encode())
        return
    arena = None
    if arena_fd >= 0:  # read-only: the process that owns the run sealed it against writable mappings
        arena = mmap.mmap(arena_fd, 0, access=mmap.ACCESS_READ)
        os.close(arena_fd)  # the mapping keeps the memory
    conn.send_bytes(json.dumps({"ready": description}, default=str).encode())
    checked, spent = time.monotonic(), NONE
    while True:
        try:
            request = conn.recv_bytes()
        except (EOFError, OSError):
            return
        # A batch of packs (a pack of one is a plain call): one reply per call, in order, as its pack ends.
        # A packed model's layout is sent with its first reply in the batch, the next ones say SAME.
        refusals, told = Refusals(), None
        prepare, packs = pickle.loads(request)
        if prepare:
            conn.send_bytes(encode(prepared(fn, prepare)))
        for datas, version, attributes, form, refused, exact, schedule in packs:
            datas = [_shared(arena, data) for data in datas]
            group = (version, datas[0].dtype.str, form)
            for reply in answers(fn, datas, version, attributes, form, refusals.refused(group, refused), exact,
                                 schedule):
                refusals.saw(group, reply.status, len(datas))
                now = time.monotonic()
                if memory_limit is not None and reply.status != CRASH and (
                        reply.seconds >= LOOK_AFTER_SECONDS or now - checked >= LOOK_EVERY_SECONDS):
                    checked, peak = now, _peak_resident()
                    if peak > memory_limit:
                        # In a pack the parent cannot tell which call held it (nodes > 1): it bisects.
                        reply = _unkept(reply, CRASH, out_of_memory(peak, memory_limit), reply.seconds)
                now_spent = models_of(fn)
                reply = charged(reply, now_spent - spent)
                if tellable(reply.layout, reply.nodes, reply.position):
                    if reply.layout == told:
                        reply = replace(reply, layout=SAME)
                    else:
                        told = reply.layout
                conn.send_bytes(encode(reply))
                spent = now_spent
                if reply.status == CRASH:  # the parent starts a fresh worker: this one may hold what leaked
                    return
