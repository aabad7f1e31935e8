"""The wire between the worker and the process that owns the run: how one reply
(engine.contract.replies.Reply) is written (``encode``, in the worker) and read back
(``decode``, in the owner; ``detached`` for a call made in-process), and the bounds on what
crosses. Replies are data, never pickles: the worker runs the implementation's code, so the
owner reads only a dtype, a shape, bytes and bounded texts from it, and repr()s nothing it
returned. Both sides import this module; neither reads the other's internals to speak it."""

from __future__ import annotations

import functools
import math
import struct
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from engine.contract.adapters import SAME, Layout
from engine.contract.replies import Reply
from results.outcomes import REPLY_STATUSES

ANSWER_CAP = 64 << 20  # bytes: no answer larger than this crosses to the process that owns the run
ERROR_CHARS = 2000  # an exception's text is cut here: a message can be as large as an answer


class Models(NamedTuple):
    """What a model-based implementation spent on models: how many it compiled, how many it
    loaded from the compile cache instead, the seconds both took, and the nodes the compiled
    ones held (ModelArgMin counts them)."""

    compiled: int = 0
    loaded: int = 0
    seconds: float = 0.0
    nodes: int = 0

    def __sub__(self, earlier: tuple) -> Models:
        return Models(*(now - then for now, then in zip(self, earlier, strict=True)))


NONE = Models()


def charged(reply: Reply, models: Models) -> Reply:
    """``reply`` with what was spent on ``models`` since the previous reply."""
    if not any(models):
        return reply
    return replace(reply, compiles=models.compiled, loaded=models.loaded, model_seconds=models.seconds,
                   compiled_nodes=models.nodes)


# The wire format of a reply: data only, never a pickled object. The process that owns the run
# parses it strictly (``decode``): a worker runs the implementation's code, so whatever it sends
# is untrusted. A fixed header (status, by_value, seconds, the lengths that follow, the answer's
# rank, the declared output's rank or -1, the nodes of the model that answered, whether its pack
# was split, the ``Models`` since the previous reply, what it tells of a packed model's layout
# and the call's node in it), the answer's shape and the declared shape (-1 for
# an unknown dimension), the layout (one int16 per node), the error text, the dtype as ``str|name``
# and the answer's bytes. An object answer crosses as a short text per element (at most
# OBJECT_TEXTS of them), joined by ``_SEPARATOR``: what numpy holds as objects is a wrong answer,
# shown, never rebuilt.
_HEADER = struct.Struct("<BBdIHBbHBIIdIBH")
_NO_LAYOUT, _SAME_LAYOUT, _LAYOUT = range(3)  # a layout: none told, the previous reply's, its own (it follows)
OBJECT_TEXTS = 256  # elements of an object answer described; the rest read as "…"
_OBJECT_CHARS = 80  # each element's description is cut here
_SEPARATOR = "\x1f"
_MAX_DIMS = 64  # numpy's own limit
_ELLIPSIS = "…"
_NUMBERS = [struct.Struct(f"<{count}q") for count in range(2 * _MAX_DIMS + 1)]  # the shapes, by their length


_TYPELESS_ELEMENTS = 1 << 22  # elements ``typeless`` looks at; a larger list is read by numpy's dtype


def typeless(answer: Any) -> bool:
    """Whether an answer has no element type of its own: a plain Python int, or a list or tuple
    (nested, empty ones included) holding nothing else. Anything that carries a type (an ndarray
    or a subclass, a numpy scalar, the buffer protocol, ``__array__``, ``__array_interface__``,
    DLPack, a list of numpy scalars) is judged by the dtype ``numpy.asarray`` gives it: a JAX
    array's int32 indices are int32, whatever container holds them. Only exact types are looked
    at, so nothing of the implementation's code runs here."""
    pending, looked = [answer], 0
    while pending:
        item = pending.pop()
        if type(item) is int:
            continue
        if type(item) is not list and type(item) is not tuple:
            return False
        looked += len(item)
        if looked > _TYPELESS_ELEMENTS:
            return False
        pending.extend(item)
    return True


class Malformed(ValueError):
    """A reply that does not follow the wire format: the worker wrote to its pipe itself."""


def _element_text(element: Any) -> str:
    """A bounded description of one element of an object answer, made in the worker (its repr
    is the implementation's code, which may raise or, for a Python int of 10**5000 digits, refuse)."""
    try:
        text = repr(element)
        if not isinstance(text, str):
            raise TypeError("__repr__ returned no str")
    except Exception as exc:
        text = f"<{type(element).__name__[:40]}: unprintable, {type(exc).__name__}>"
    text = "".join(c if c.isprintable() and c != _SEPARATOR else "?" for c in text[:_OBJECT_CHARS + 1])
    return text if len(text) <= _OBJECT_CHARS else text[:_OBJECT_CHARS - 1] + _ELLIPSIS


def _object_texts(value: np.ndarray) -> str:
    return _SEPARATOR.join(_element_text(e) for e in value.reshape(-1)[:OBJECT_TEXTS])


def tellable(layout: Layout | None, nodes: int, position: int) -> bool:
    """Whether ``layout`` describes a packed model of ``nodes``, the call's node among them."""
    return layout is not None and nodes > 1 and 0 <= position < nodes and (layout == SAME or len(layout) == nodes)


def encode(reply: Reply) -> bytes:
    """One reply as bytes (see _HEADER): its status, answer and error, the nodes of the model that
    answered (1: a one-node model, or a plain function), whether its pack was split to answer it
    (worker.answers), what was spent on models since the previous reply (``charged``), and the
    packed model's layout (SAME: the previous reply's) with the call's node in it."""
    value, declared, nodes, layout, position = reply.value, reply.declared, reply.nodes, reply.layout, reply.position
    told = _NO_LAYOUT if not tellable(layout, nodes, position) else _SAME_LAYOUT if layout == SAME else _LAYOUT
    nodes_told = layout if told == _LAYOUT else ()
    shape: tuple[int, ...] = ()
    dtype, payload = b"", b""
    if value is not None:
        shape = value.shape
        if value.dtype.hasobject:  # records with object fields included: described as objects
            dtype, payload = b"|O|object", _object_texts(value).encode("utf-8")
        else:
            dtype, payload = _dtype_text(value.dtype), np.ascontiguousarray(value).tobytes()
    marks = () if declared is None else tuple(d if isinstance(d, int) and d >= 0 else -1 for d in declared)
    text = (reply.error or "").encode("utf-8", errors="replace")
    compiled, loaded, compiled_nodes = (min(max(n, 0), 0xFFFFFFFF) for n in (reply.compiles, reply.loaded,
                                                                              reply.compiled_nodes))
    header = _HEADER.pack(REPLY_STATUSES.index(reply.status), bool(reply.by_value), reply.seconds, len(text),
                          len(dtype), len(shape), -1 if declared is None else len(marks), nodes, reply.split, compiled,
                          loaded, reply.model_seconds, compiled_nodes, told, position if told else 0)
    return b"".join((header, struct.pack(f"<{len(shape) + len(marks)}q", *shape, *marks),
                     struct.pack(f"<{len(nodes_told)}h", *nodes_told), text, dtype, payload))


@functools.lru_cache(maxsize=64)  # numpy's dtype.name takes microseconds, and a run sees a few dtypes
def _dtype_text(dtype: np.dtype) -> bytes:
    return f"{dtype.str}|{dtype.name}".encode()


@functools.lru_cache(maxsize=64)
def _dtype(text: str) -> np.dtype:
    """The dtype a reply names, numpy's own or one of ml_dtypes' (bfloat16, float8: their ``str``
    is only a size, so their name says which)."""
    # Imported here, not with this module: a worker process needs ml_dtypes only for such inputs
    # (unpickling them imports it), and importing it takes about half a second.
    import ml_dtypes

    code, _, name = text.rpartition("|")
    found = getattr(ml_dtypes, name, None) if name and not name.startswith("_") else None
    dtype = np.dtype(found) if isinstance(found, type) and issubclass(found, np.generic) else np.dtype(code)
    if dtype.str != code:
        raise Malformed(f"dtype {text[:40]!r} names two types")
    return dtype


def decode(reply: bytes) -> Reply:
    """A reply read back as plain data, checked field by field; Malformed when anything is off."""
    try:
        status, by_value, seconds, errors, dtypes, ndim, marks, nodes, split, compiled, loaded, model_seconds, \
            compiled_nodes, told, position = _header(reply)
        numbers = _NUMBERS[ndim + max(marks, 0)].unpack_from(reply, _HEADER.size)
        start = _HEADER.size + 8 * len(numbers)
        layout = None if told == _NO_LAYOUT else SAME if told == _SAME_LAYOUT else \
            struct.unpack_from(f"<{nodes}h", reply, start)
        start += 2 * len(layout or ())
        error = reply[start:start + errors].decode("utf-8", errors="replace")[:2 * ERROR_CHARS] or None
        start += errors
        kind = reply[start:start + dtypes].decode("ascii")
        declared = None if marks < 0 else tuple(None if d < 0 else d for d in numbers[ndim:])
        value = _answer(reply, start + dtypes, kind, numbers[:ndim], status)
        return Reply(REPLY_STATUSES[status], value, error, seconds, bool(by_value), declared, nodes, bool(split),
                     compiled, loaded, model_seconds, compiled_nodes, layout, position)
    except Malformed:
        raise
    except (struct.error, UnicodeDecodeError, TypeError, ValueError) as exc:
        raise Malformed(f"{type(exc).__name__}") from None


def _header(reply: bytes) -> tuple:
    """The fields of a reply's header (see _HEADER), each checked to be in its range."""
    fields = _HEADER.unpack_from(reply)
    status, _, seconds, _, _, ndim, marks, nodes, split, _, _, model_seconds, _, told, position = fields
    if status >= len(REPLY_STATUSES) or ndim > _MAX_DIMS or marks > _MAX_DIMS or not math.isfinite(seconds) \
            or nodes < 1 or split > 1 or not math.isfinite(model_seconds) or told > _LAYOUT \
            or (told and (nodes < 2 or position >= nodes)) or (position and not told):
        raise Malformed("a header out of range")
    return fields


def _answer(reply: bytes, start: int, kind: str, shape: tuple[int, ...], status: int) -> np.ndarray | None:
    """The answer a reply carries from ``start`` on, of dtype ``kind`` (none where it is empty)
    and ``shape``: its bytes, or for an object answer its elements' descriptions."""
    size = len(reply) - start
    if not kind:
        if size or shape or status == 0:  # REPLY_STATUSES[0] == "ok" always has an answer
            raise Malformed("an answer without a dtype")
        return None
    if min(shape, default=0) < 0:
        raise Malformed("a negative dimension")
    dtype = _dtype(kind)
    if dtype.hasobject:
        return _described(reply[start:].decode("utf-8", errors="replace"), shape)
    if dtype.itemsize * math.prod(shape) != size:
        raise Malformed("an answer whose bytes do not fill its shape")
    return np.frombuffer(reply, dtype, size // dtype.itemsize if dtype.itemsize else 0, start).reshape(shape).copy()


def detached(reply: Reply) -> Reply:
    """What ``decode(encode(reply))`` gives, without the bytes (in-process calls): the answer as
    a copy, objects as their descriptions, a layout only where it is told."""
    value = reply.value
    if value is not None:
        value = _described(_object_texts(value), value.shape) if value.dtype.hasobject else np.array(value, order="C")
    told = tellable(reply.layout, reply.nodes, reply.position)
    return replace(reply, value=value, layout=reply.layout if told else None, position=reply.position if told else 0)


def _described(texts: str, shape: tuple[int, ...]) -> np.ndarray:
    """An object answer as this process holds it: an array of the element descriptions (str)."""
    size = math.prod(shape)
    described = [text[:_OBJECT_CHARS] for text in texts.split(_SEPARATOR)[:OBJECT_TEXTS]] if size else []
    if len(described) != min(size, OBJECT_TEXTS):
        raise Malformed("an object answer with the wrong number of descriptions")
    value = np.empty(size, dtype=object)
    value.fill(_ELLIPSIS)  # one object for all (np.full would make one per element)
    value[:len(described)] = described
    return value.reshape(shape)
