"""One call of the implementation under test, and the worker process that makes such calls.

``call`` is shared by both isolation modes so that a verdict never depends on the mode: the
same exceptions map to the same statuses. ``serve`` is the worker's main loop; it loads the
implementation itself from the ``--impl`` string (functions are never pickled) and answers
pickled requests over a multiprocessing connection: each request is a batch of calls, made in
order, with one reply sent as each call ends (so a crash or a hang is still pinned on its call,
and one round trip serves a whole batch).

Bounds. The output of ArgMin holds one int64 index per slice, so its size is known before the
call: an answer far larger than that cannot be right and is judged on its shape alone
(``oversize``), never sent back whole; nothing larger than ``ANSWER_CAP`` crosses to the process
that owns the run, whatever the implementation returns. The worker's memory is limited
(``--memory-limit``, resident memory: what the machine actually gives it, not the address space
that runtimes reserve for thread stacks and arenas without using it): a call after which the
worker's peak is over the limit is a crash, "out of memory", and the worker is replaced (the
parent also watches a call in progress and kills a worker that passes the limit)."""

from __future__ import annotations

import math
import mmap
import os
import pickle
import signal
import sys
import time
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

try:
    import resource
except ImportError:  # Windows: no peak memory to read, so no memory limit
    resource = None

# (status, value, error, seconds, by_value, declared): a plain tuple, so the worker needs nothing
# from isolation.py. ``by_value``: the answer was no numpy array or scalar (a list, a Python int), so
# it has no integer type of its own and is judged by its values (see spec.oracle.read).
# ``declared``: the output shape a model-based implementation declared.
Outcome = tuple[str, "np.ndarray | None", "str | None", float, bool, "tuple | None"]

ANSWER_CAP = 64 << 20  # bytes: no answer larger than this crosses to the process that owns the run
_ALWAYS_KEPT = 1 << 20  # answers up to this size are kept and judged in full, whatever was expected
_SLACK = 16  # beyond that, answers up to this many times the expected output's size are kept
_ERROR_CHARS = 2000  # an exception's text is cut here: a message can be as large as an answer
DEFAULT_MEMORY_LIMIT = 4 << 30  # resident bytes a worker may hold: a leak stops long before the machine does
# The peak is read after every call this long or longer, and at least this often: a shorter call
# cannot touch enough memory to matter on its own (about 10 MB per ms), and the peak never falls.
_PEAK_CHECK_SECONDS = 1e-3
_PEAK_CHECK_EVERY_SECONDS = 0.05


def format_size(size: int) -> str:
    """Bytes as people write them, in binary units: 512 MiB, 2.98 GiB."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} B"


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
    for dtype in (None, object):
        try:
            return np.asarray(result, dtype=dtype), None
        except MemoryError:
            raise  # out of memory is not the answer's fault
        except Exception:
            continue
    return None, _cut(f"TypeError: returned {type(result).__name__}, which numpy.asarray does not accept")


def _cut(text: str) -> str:
    return text if len(text) <= _ERROR_CHARS else f"{text[:_ERROR_CHARS]}... ({len(text)} characters)"


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


def _without_answer(status: str, error: str, seconds: float) -> Outcome:
    return status, None, error, seconds, False, None


def call(fn: Callable[..., Any], data: np.ndarray, version: int, attributes: Mapping[str, int],
         form: str | None = None) -> Outcome:
    """Call ``fn(data, *, opset=version, **attributes)`` and classify what happened. (``opset``
    is the plug-in contract's name for the ArgMin version: the opset the node is imported at.)
    With a model ``form`` (model-based implementations only, see engine.forms) the adapter
    answers through the model of that form, and says which output shape it declared."""
    start = time.perf_counter()
    declared = None
    try:
        if form is None:
            result = fn(data, opset=version, **attributes)
        else:
            answer = fn.answer(form, data, version, attributes)
            result, declared = answer.value, answer.declared
        seconds = time.perf_counter() - start
        value, error = _as_array(result)
    except NotImplementedError as exc:
        return _without_answer("unsupported", _describe(exc), time.perf_counter() - start)
    except MemoryError as exc:  # not a rejection of the input: the implementation could not do its work
        return _without_answer("crash", f"out of memory: {_describe(exc)}", time.perf_counter() - start)
    except SystemExit as exc:
        # sys.exit() inside the implementation ends a worker; report it the same way in-process.
        return _without_answer("crash", _cut(f"the implementation called sys.exit({exc.code!r})"),
                               time.perf_counter() - start)
    except Exception as exc:
        return _without_answer("raised", _describe(exc), time.perf_counter() - start)
    if error is not None:
        return _without_answer("raised", error, seconds)
    too_large = _oversize(value, data, attributes)
    if too_large is not None:
        return _without_answer("oversize", too_large, seconds)
    return "ok", value, None, seconds, not isinstance(result, (np.ndarray, np.generic)), declared


def _encode(outcome: Outcome) -> bytes:
    value = outcome[1]
    try:
        encoded = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        kind = type(value.flat[0]).__name__ if value is not None and value.size else "value"
        error = _cut(f"TypeError: returned {kind} objects, which cannot be sent back from the worker process "
                     f"({_describe(exc)})")
        return pickle.dumps(_without_answer("raised", error, outcome[3]), protocol=pickle.HIGHEST_PROTOCOL)
    if len(encoded) > ANSWER_CAP:  # objects can take far more room than their array's nbytes says (texts are cut)
        error = (f"returned {value.dtype} values of shape {value.shape} taking {format_size(len(encoded))} to send, "
                 f"over the {format_size(ANSWER_CAP)} any answer may take; not kept")
        return pickle.dumps(_without_answer("oversize", error, outcome[3]), protocol=pickle.HIGHEST_PROTOCOL)
    return encoded


# Inputs at least this large travel through a memory area the worker shares with the process that
# owns the run (see isolation._Arena), instead of through the pipe: a pipe holds 64 KiB, so a
# large input would cost a dozen wake-ups of both processes, and pickling copies it twice.
SHARED_MIN_BYTES = 32 << 10


def _shared(arena: mmap.mmap | None, item: Any) -> Any:
    """A call's input: the array sent in the request, or a private copy of one in the arena."""
    if arena is not None and isinstance(item, tuple):
        offset, dtype, shape = item
        count = math.prod(shape)
        return np.frombuffer(arena, dtype=dtype, count=count, offset=offset).reshape(shape).copy()
    return item


def serve(conn: Connection, impl: str, path: list[str], cwd: str, memory_limit: int | None,
          arena_path: str | None = None) -> None:
    """Worker main: load ``impl`` (only here: the parent never imports it), send back what it
    is or why it did not load, then answer batches of calls ``[(data, version, attributes, form), ...]``
    until the parent closes the connection or the implementation crashes (out of memory, sys.exit)."""
    # Ctrl-C and a CI's SIGTERM reach the whole process group: the parent decides what happens
    # (it ends this worker as it stops), not the worker, which would otherwise die mid-call and
    # have the case in flight recorded as a crash.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.path[:] = path
    os.chdir(cwd)
    from engine.plugins import UsageError, describe, resolve

    try:
        fn = resolve(impl)
        description = describe(impl, fn)
    except UsageError as exc:
        conn.send_bytes(pickle.dumps(("error", str(exc))))
        return
    arena = None
    if arena_path is not None:
        with open(arena_path, "r+b") as file:
            arena = mmap.mmap(file.fileno(), 0)
    conn.send_bytes(pickle.dumps(("ready", description)))
    checked = time.monotonic()
    while True:
        try:
            request = conn.recv_bytes()
        except (EOFError, OSError):
            return
        for data, version, attributes, form in pickle.loads(request):  # a batch: one reply per call, as it ends
            outcome = call(fn, _shared(arena, data), version, attributes, form)
            now = time.monotonic()
            if memory_limit is not None and outcome[0] != "crash" and (
                    outcome[3] >= _PEAK_CHECK_SECONDS or now - checked >= _PEAK_CHECK_EVERY_SECONDS):
                checked, peak = now, _peak_resident()
                if peak > memory_limit:
                    outcome = _without_answer("crash", out_of_memory(peak, memory_limit), outcome[3])
            conn.send_bytes(_encode(outcome))
            if outcome[0] == "crash":  # the parent starts a fresh worker: this one may hold what leaked
                return
