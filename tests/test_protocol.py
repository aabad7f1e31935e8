"""The wire between the worker and the owner (engine.asking.protocol), through its public
functions: every reply crosses as data and is read back field by field, a packed model's layout
is told once, and whatever breaks the format is Malformed, never a traceback or a pickle."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.asking import protocol
from engine.asking.calls import Reply
from engine.contract.adapters import SAME
from results.outcomes import CRASH, OK, OVERSIZE, RAISED, REPLY_STATUSES, TIMEOUT, UNSUPPORTED


@pytest.mark.parametrize("reply", [
    (OK, np.array([[2], [0]], dtype=np.int64), None, 0.25, False, (2, None)),
    (OK, np.array(3, dtype=np.int32), None, 0.0, True, None),
    (UNSUPPORTED, None, "NotImplementedError: bfloat16", 0.1, False, None),
    (RAISED, None, "ValueError: axis 3 is out of range", 0.0, False, None),
    (CRASH, None, "the worker died: SIGSEGV", 1.5, False, None),
    (TIMEOUT, None, "no answer within 10 s", 10.0, False, None),
    (OVERSIZE, None, "an answer of shape (4096, 4096)", 0.0, False, None),
])
def test_a_reply_reads_back_as_it_was_written_in_either_mode(reply: tuple) -> None:
    models = protocol.Models(2, 1, 0.5, 7)
    sent = protocol.charged(Reply(*reply, nodes=3, split=True, layout=(0, -1, 1), position=2), models)
    crossed = protocol.decode(protocol.encode(sent))
    assert (crossed.status, crossed.error, crossed.seconds, crossed.by_value, crossed.declared) == \
        (reply[0], reply[2], reply[3], reply[4], reply[5])
    assert (crossed.nodes, crossed.split, crossed.compiles, crossed.loaded, crossed.model_seconds,
            crossed.compiled_nodes, crossed.layout, crossed.position) == (3, True, 2, 1, 0.5, 7, (0, -1, 1), 2)
    value = crossed.value
    assert (value is None) == (reply[1] is None)
    if value is not None:
        assert value.dtype == reply[1].dtype and np.array_equal(value, reply[1])
    in_process = protocol.detached(sent)
    assert repr(in_process) == repr(crossed), "in-process calls read the same"


def test_a_layout_is_told_once_then_as_the_same() -> None:
    reply = Reply(OK, np.zeros(1, np.int64), None, 0.0, False, None)
    crossed = protocol.decode(protocol.encode(replace(reply, nodes=2, layout=SAME, position=1)))
    assert (crossed.layout, crossed.position) == (SAME, 1)
    crossed = protocol.decode(protocol.encode(replace(reply, nodes=1, layout=(0,), position=0)))
    assert (crossed.layout, crossed.position) == (None, 0), "a one-node model has no layout to tell"


def test_an_object_answer_crosses_as_bounded_descriptions_never_as_objects() -> None:
    class Loud:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    value = np.array([10 ** 40, Loud(), "x" * 500] * 200, dtype=object)
    reply = protocol.decode(protocol.encode(Reply(OK, value, None, 0.0, True, None)))
    status, crossed = reply.status, reply.value
    assert status == OK and crossed.dtype == object and crossed.shape == value.shape
    assert crossed[0] == repr(10 ** 40) and "unprintable" in crossed[1] and len(crossed[2]) <= 80
    assert crossed[protocol.OBJECT_TEXTS] == "…", "only the first OBJECT_TEXTS elements are described"


@pytest.mark.parametrize("forge", [
    lambda b: b[:10],  # cut short
    lambda b: bytes([len(REPLY_STATUSES)]) + b[1:],  # no such status
    lambda b: b + b"\0",  # bytes that do not fill the answer's shape
    lambda b: b"",
])
def test_a_reply_off_the_format_is_malformed(forge) -> None:
    written = protocol.encode(Reply(OK, np.arange(4, dtype=np.int64), None, 0.0, False, None))
    with pytest.raises(protocol.Malformed):
        protocol.decode(forge(written))
