"""Implementations that fail as programs rather than as ArgMins: they kill their process, hang,
answer with the wrong Python type, or have no kernel for a whole dtype. The suite must survive
them (worker process, timeout) and still judge them. Never call the crashing or hanging ones
in-process on their trigger inputs."""

from __future__ import annotations

import os
import time

import numpy as np

from ._rules import finish, first_min, last_min, parse, reference

LONG_AXIS = 100
HANG_RANK = 4


def exit_on_long_axis(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Kills its process (os._exit) when the reduced axis is longer than 100, like a segfaulting kernel.

    A crash on a valid input: violates the accepts clause at every version."""
    request = parse(data, opset, attributes)
    if data.shape[request.axis] > LONG_AXIS:
        os._exit(139)
    return finish((last_min if request.last else first_min)(data, request.axis), request)


def hang_on_rank4(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Sleeps for an hour on inputs of rank 4 or more, like a deadlocked thread pool.

    A timeout on a valid input: violates the accepts clause at every version."""
    request = parse(data, opset, attributes)
    if data.ndim >= HANG_RANK:
        time.sleep(3600)
    return finish((last_min if request.last else first_min)(data, request.axis), request)


def list_of_floats(data: np.ndarray, *, opset: int, **attributes: int) -> list:
    """Answers a (nested) Python list of floats, which numpy reads as float64.

    Violates the output dtype clause at every version."""
    return reference(data, opset, attributes).astype(float).tolist()


def string_answer(data: np.ndarray, *, opset: int, **attributes: int) -> str:
    """Answers the indices formatted as a string.

    Violates the output dtype clause at every version."""
    return str(reference(data, opset, attributes).tolist())


def no_float16_kernel(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Raises NotImplementedError for every float16 input.

    float16 is in T at every version, refused for every input: not implemented (scope)."""
    parse(data, opset, attributes)
    if data.dtype == np.float16:
        raise NotImplementedError("ArgMin has no float16 kernel")
    return reference(data, opset, attributes)


def abort_on_v1_negative_axis(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Correct, but aborts its process (SIGABRT) on a negative axis at ArgMin-1, like tract's panic.

    ArgMin-1 does not define negative axes, but a crash on any input fails the headline (the
    suite's position): NON-CONFORMANT at v1, where the census records the crashes as crashes, not as
    rejections. Never call it in-process on such an input."""
    if opset == 1 and attributes.get("axis", 0) < 0:
        os.abort()
    return reference(data, opset, attributes)


def abort_on_axis_out_of_range(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    """Correct, but aborts its process (SIGABRT) on an axis outside [-r, r-1], like tract's panic.

    Refusing such an invalid model is strictness, but a crash on any input fails the headline (the
    suite's position): NON-CONFORMANT at every version. Never call it in-process on such an input."""
    axis = attributes.get("axis", 0)
    if data.ndim and not -data.ndim <= axis < data.ndim:
        os.abort()
    return reference(data, opset, attributes)
