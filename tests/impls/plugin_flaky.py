"""Flaky plug-ins: right and wrong answers alternate, as from a runtime with a race or a stale
buffer. The wrong answer is the largest element's index: not a minimum wherever the slice holds
two different values.

- ``argmin`` answers each call (the same input with the same attributes, as given) wrongly the
  first time it is asked, right the second, wrongly the third, and so on.
- ``every_other_call`` alternates over all calls, whatever they are: asked an input wrongly and
  then the same input with the defaults written out, it answers the second right, which reads as
  a defaults bug unless the first call is asked again.
- ``first_ask`` answers an input wrongly the first time it is asked and right ever after: a
  failure that appears once and not when asked again, a flake."""

from __future__ import annotations

from collections import Counter

import numpy as np

_ASKED: Counter = Counter()


def _answer(data: np.ndarray, wrong: bool, axis: int = 0, keepdims: int = 1, select_last_index: int = 0) -> np.ndarray:
    axis %= data.ndim
    if wrong:
        found = np.argmax(data, axis=axis)
    elif select_last_index:
        found = data.shape[axis] - 1 - np.argmin(np.flip(data, axis=axis), axis=axis)
    else:
        found = np.argmin(data, axis=axis)
    return (np.expand_dims(found, axis) if keepdims else found).astype(np.int64)


def argmin(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    key = (opset, data.dtype.str, data.shape, data.tobytes(), tuple(sorted(attributes.items())))
    _ASKED[key] += 1
    return _answer(data, _ASKED[key] % 2 == 1, **attributes)


def every_other_call(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    _ASKED["all calls"] += 1
    return _answer(data, _ASKED["all calls"] % 2 == 1, **attributes)


def first_ask(data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
    key = ("first", opset, data.dtype.str, data.shape, data.tobytes(), tuple(sorted(attributes.items())))
    _ASKED[key] += 1
    return _answer(data, _ASKED[key] == 1, **attributes)
