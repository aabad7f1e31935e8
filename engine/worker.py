"""One call of the implementation under test, and the worker process that makes such calls.

``call`` is shared by both isolation modes so that a verdict never depends on the mode: the
same exceptions map to the same statuses. ``serve`` is the worker's main loop; it loads the
implementation itself from the ``--impl`` string (functions are never pickled) and answers one
pickled request per call over a multiprocessing connection."""

from __future__ import annotations

import os
import pickle
import signal
import sys
import time
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

# (status, value, error, seconds): a plain tuple, so the worker needs nothing from isolation.py.
Outcome = tuple[str, "np.ndarray | None", "str | None", float]


def _as_array(result: Any) -> tuple[np.ndarray | None, str | None]:
    """numpy's view of a return value. A value numpy can hold only as objects is still an
    answer (a wrong one), so it is kept; only a value numpy refuses outright is an error."""
    try:
        return np.asarray(result), None
    except Exception:
        pass
    try:
        return np.asarray(result, dtype=object), None
    except Exception:
        return None, f"TypeError: returned {type(result).__name__}, which numpy.asarray does not accept"


def _describe(exc: BaseException) -> str:
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def call(fn: Callable[..., Any], data: np.ndarray, version: int, attributes: Mapping[str, int]) -> Outcome:
    """Call ``fn(data, *, opset=version, **attributes)`` and classify what happened. (``opset``
    is the plug-in contract's name for the ArgMin version: the opset the node is imported at.)"""
    start = time.perf_counter()
    try:
        result = fn(data, opset=version, **attributes)
    except NotImplementedError as exc:
        return "unsupported", None, _describe(exc), time.perf_counter() - start
    except SystemExit as exc:
        # sys.exit() inside the implementation ends a worker; report it the same way in-process.
        return "crash", None, f"the implementation called sys.exit({exc.code!r})", time.perf_counter() - start
    except Exception as exc:
        return "raised", None, _describe(exc), time.perf_counter() - start
    seconds = time.perf_counter() - start
    value, error = _as_array(result)
    return ("ok" if error is None else "raised"), value, error, seconds


def _encode(outcome: Outcome) -> bytes:
    try:
        return pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        value = outcome[1]
        kind = type(value.flat[0]).__name__ if value is not None and value.size else "value"
        error = (f"TypeError: returned {kind} objects, which cannot be sent back from the worker process "
                 f"({_describe(exc)})")
        return pickle.dumps(("raised", None, error, outcome[3]), protocol=pickle.HIGHEST_PROTOCOL)


def serve(conn: Connection, impl: str, path: list[str], cwd: str) -> None:
    """Worker main: load ``impl`` (only here: the parent never imports it), send back what it
    is or why it did not load, then answer requests ``(data, version, attributes)`` until the
    parent closes the connection."""
    # Ctrl-C reaches the whole process group: the parent decides what happens, not the worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.path[:] = path
    os.chdir(cwd)
    from engine.plugins import UsageError, describe, resolve

    try:
        fn = resolve(impl)
        description = describe(impl)
    except UsageError as exc:
        conn.send_bytes(pickle.dumps(("error", str(exc))))
        return
    conn.send_bytes(pickle.dumps(("ready", description)))
    while True:
        try:
            request = conn.recv_bytes()
        except (EOFError, OSError):
            return
        data, version, attributes = pickle.loads(request)
        conn.send_bytes(_encode(call(fn, data, version, attributes)))
