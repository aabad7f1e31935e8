"""Digests that let a reader check a run's results without trusting its report.

Every judged case records two short digests, passing or not: one of its input (the array and
the attributes set on the node) and one of the implementation's answer (the returned array's
dtype, shape and bytes, or the status and error text). The run's results digest is a SHA-256
over every case's input, answer and outcome in a canonical order, so two runs that judged the
same inputs and got the same answers have the same digest, whatever order their processes ran in."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

import numpy as np

from .outcomes import OK, TIMEOUT
from .records import CaseResult, to_json

# 64 bits per case: plenty to tell two answers apart, and small in raw.json.gz (a digest does
# not compress). The run's digest over all of them is a full SHA-256.
CASE_DIGEST_HEX = 16
# Object addresses in exception texts change from run to run without the answer changing.
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def _short(*parts: bytes | np.ndarray) -> str:
    """Each part (bytes, or a 1-d uint8 array) prefixed with its length."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()[:CASE_DIGEST_HEX]


@lru_cache(maxsize=64)  # numpy's dtype.name takes microseconds, and a run sees a few dtypes
def _dtype_name(dtype: np.dtype) -> bytes:
    return dtype.name.encode()


def _bytes(array: np.ndarray) -> bytes | np.ndarray:
    """A contiguous array's bytes as the hash reads them: a view, where tobytes() would copy
    an input of up to megabytes."""
    try:
        return array.reshape(-1).view(np.uint8)
    except (ValueError, TypeError):  # a dtype numpy will not view as bytes
        return array.tobytes()


def _array_parts(array: np.ndarray) -> tuple[bytes, bytes, bytes | np.ndarray]:
    array = np.ascontiguousarray(array)
    # An object array's bytes are pointers: digest what the objects say instead (an answer's
    # objects are texts by now: engine.asking.worker describes them; nothing else is repr()-ed).
    content = "\x1f".join(e if isinstance(e, str) else type(e).__name__ for e in array.reshape(-1)).encode(
        "utf-8", errors="surrogatepass") if array.dtype.hasobject else _bytes(array)
    return _dtype_name(array.dtype), repr(array.shape).encode(), content


def input_digest(data: np.ndarray, attributes: Mapping[str, int]) -> str:
    """The input of one case: element type, shape, bytes and the attributes set on the node."""
    return _short(*_array_parts(data), json.dumps(sorted(attributes.items())).encode())


def answer_digest(status: str, value: np.ndarray | None, error: str | None) -> str:
    """What the implementation did with one input. A timeout digests as its status alone: its
    text names the time limit, which adapts during a run, not anything the implementation said."""
    if status == OK:
        return _short(b"ok", *_array_parts(np.asarray(value)))
    if status == TIMEOUT:
        return _short(b"timeout")
    return _short(status.encode(), _ADDRESS.sub("0x?", error or "").encode())


def counterexample_digest(result: CaseResult) -> str:
    """A failure's counterexample (input, attributes, expected, actual, problem, message, the
    other failing inputs, the packed model it failed in, whether it is a flake and its second
    answer, where it reproduces and the history it needs), so that a changed one fails
    ``verify``'s results check. Texts that vary from run to run without the answer changing
    (object addresses, a timeout's limit) are left out."""
    example = result.counterexample
    if example is None:
        return "-"
    plain = to_json(example)
    if plain["pack"] is None:
        del plain["pack"]  # a counterexample without one digests as it did before packs were recorded
    if not plain["flaky"]:
        del plain["flaky"]  # nor does one that failed again when asked again, before flakes were recorded
    if plain["again"] is None or _comparable(plain["again"]) == _comparable(plain["actual"]):
        del plain["again"]  # nor one whose second answer was the first again (or was not asked)
    for name in ("reproduction", "history", "after_history"):
        if plain[name] is None:
            del plain[name]  # nor one not asked in a fresh worker, before that was recorded
    if example.problem == TIMEOUT:
        plain["actual"], plain["message"] = TIMEOUT, TIMEOUT
    return _short(_comparable(plain).encode("utf-8", errors="surrogatepass"))


def _comparable(value: object) -> str:
    return _ADDRESS.sub("0x?", json.dumps(value, sort_keys=True, ensure_ascii=False))


def case_line(result: CaseResult) -> str:
    """One case as the results digest sees it (durations and test ids left out: they vary)."""
    return "|".join((str(result.version), result.suite, result.kind, result.type_name, result.form or "-",
                     result.outcome, result.clause or "-", result.input_digest, result.answer_digest,
                     counterexample_digest(result)))


def results_digest(results: Iterable[CaseResult]) -> str:
    """SHA-256 over every case's line, sorted: independent of the order cases were judged in."""
    digest = hashlib.sha256()
    for line in sorted(case_line(result) for result in results):
        digest.update(line.encode() + b"\n")
    return digest.hexdigest()
