"""Plug-ins that attack the process running them through what they return or allocate: the
suite must judge them and carry on with its own memory intact. Each answers correctly except
for its one misbehaviour."""

from __future__ import annotations

import gc
import os
import signal
import time
from multiprocessing.connection import Connection

import numpy as np

LEAK_BYTES = 32 << 20
_leaked: list[np.ndarray] = []
_children: list[int] = []


def _argmin(data: np.ndarray, attributes: dict[str, int]) -> np.ndarray:
    return np.argmin(data, axis=attributes.get("axis", 0), keepdims=bool(attributes.get("keepdims", 1)))


def huge_for_uint8(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """20000 x 20000 int64 indices (3.2 GB) for any uint8 input. np.zeros leaves the pages
    untouched until something reads them, so only a process that copies the answer pays."""
    if data.dtype == np.uint8:
        return np.zeros((20000, 20000), dtype=np.int64)
    return _argmin(data, attributes)


def leak(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Keeps LEAK_BYTES of memory it has written to on every call."""
    _leaked.append(np.ones(LEAK_BYTES, dtype=np.uint8))
    return _argmin(data, attributes)


def hog(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Takes ever more memory within one call, 64 MB at a time, up to 1 GB (so that a suite
    that fails to stop it still leaves the machine usable), then answers."""
    _held = [np.ones(64 << 20, dtype=np.uint8) for _ in range(16)]
    return _argmin(data, attributes)


def long_message(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    raise ValueError("x" * 10_000_000)


def heavy_objects(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """One element, as objects: 8 bytes of array holding 80 MB of text."""
    return np.array(["x" * 80_000_000], dtype=object)


def flood_the_pipe(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """For uint8 inputs, writes 80 MB into the worker's own connection to the parent first."""
    if data.dtype == np.uint8:
        for thing in gc.get_objects():
            if isinstance(thing, Connection) and not thing.closed:
                thing.send_bytes(bytes(80_000_000))
    return _argmin(data, attributes)



class _RunsOnUnpickle:
    """An element whose unpickling runs code: ``pickle.loads`` calls ``exec(CODE)``. CODE marks
    the process it runs in (a file named by its pid under $ARGMIN_HOSTILE_MARKS)."""

    CODE = ("import os, pathlib; pathlib.Path(os.environ['ARGMIN_HOSTILE_MARKS'], str(os.getpid()))"
            ".write_text('ran')")

    def __reduce__(self) -> tuple:
        return exec, (self.CODE,)


def runs_code_where_unpickled(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """For uint8 inputs an object answer whose element runs code wherever it is unpickled."""
    if data.dtype == np.uint8:
        return np.array([_RunsOnUnpickle()], dtype=object)
    return _argmin(data, attributes)


def huge_python_int(data: np.ndarray, *, opset: int, **attributes: int) -> object:
    """For uint8 inputs the Python int 10**5000: numpy holds it only as an object, and its repr()
    raises (more digits than Python converts to text by default)."""
    if data.dtype == np.uint8:
        return [10**5000]
    return _argmin(data, attributes)


def same_objects(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """The right indices, always, but held as Python objects: deterministic, and wrong only in type."""
    return _argmin(data, attributes).astype(object)


def writes_into_its_input(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """The right answer, then its input overwritten (allowed: the input is the plug-in's copy)."""
    found = _argmin(data, attributes)
    data[...] = 0
    return found


def answers_in_its_input(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """For int64 inputs the right indices written into the input's own memory, returned as a view of it."""
    found = _argmin(data, attributes)
    if data.dtype != np.int64 or data.size < found.size:
        return found
    view = data.reshape(-1)[:found.size].reshape(found.shape)
    view[...] = found
    return view


def forks_a_lingering_child(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Forks a child that sleeps for ten minutes holding stdout and stderr open (a test finds it
    by the environment it inherits). One child per worker process."""
    if not _children:
        pid = os.fork()
        if pid == 0:
            time.sleep(600)
            os._exit(0)
        _children.append(pid)
    return _argmin(data, attributes)


def kills_its_parent_and_exits_3(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """For uint8 inputs sends SIGKILL to the process that started this worker, then exits with
    status 3. (Unsandboxed that is the process that owns the run; in a sandbox, the sandbox's
    first process, which no process inside can kill.)"""
    if data.dtype == np.uint8:
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(0.2)
        os._exit(3)
    return _argmin(data, attributes)


class _SlowToPrint:
    def __repr__(self) -> str:
        time.sleep(600)
        return "never"


def slow_to_print(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """An object answer whose repr() takes ten minutes: it hung the process that owns the run."""
    return np.array([_SlowToPrint()], dtype=object)
