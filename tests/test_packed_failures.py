"""Packed answers say which model gave them: the worker tells the model's layout (the calls and
dummy inputs of its nodes, and the call's node), and the process that owns the run rebuilds that
model from its own arrays."""

from __future__ import annotations

import numpy as np
import pytest

import spec
from engine import worker
from engine.isolation import Layouts, Packed, Runner
from tests.test_packing import SHAPES, expected, model, static_calls

# --- the wire: a packed reply tells its model once ----------------------------------------------

def test_a_reply_tells_its_packed_model_once_and_strictly() -> None:
    outcome = ("ok", np.array([1], dtype=np.int64), None, 0.001, False, None)
    told = worker.encode(outcome, 3, False, worker.NONE, (2, -5, 0), 2)
    same = worker.encode(outcome, 3, False, worker.NONE, worker.SAME, 1)
    plain = worker.encode(outcome, 3)
    assert worker.decode(told)[-2:] == ((2, -5, 0), 2) and worker.decode(same)[-2:] == (worker.SAME, 1)
    assert worker.detached(outcome, 3, False, worker.NONE, (2, -5, 0), 2)[-2:] == ((2, -5, 0), 2)
    assert worker.decode(plain)[-2:] == (None, 0)
    assert len(told) == len(plain) + 6 and len(same) == len(plain), "two bytes per node, once per model"
    assert worker.decode(worker.encode(outcome, 1, False, worker.NONE, (0,), 0))[-2:] == (None, 0), "one node: none"
    mode = worker._HEADER.size - 3  # the layout's kind (B) and the node (H) end the header
    for offset, forged_bytes in ((mode, b"\3"), (mode + 1, b"\3\0")):  # no such kind; a node past the model's
        forged = bytearray(told)
        forged[offset:offset + len(forged_bytes)] = forged_bytes
        with pytest.raises(worker.Malformed):
            worker.decode(bytes(forged))


def test_a_layout_is_checked_against_the_calls_it_names() -> None:
    calls = static_calls([(2, 2), (3,), (4,)])
    unit = [0, 1, 2]
    layouts = Layouts(calls)
    with pytest.raises(worker.Malformed):
        layouts.packed(worker.SAME, 0, unit, 0)  # no layout told before
    packed = layouts.packed((1, 0, -1), 1, unit, 0)
    assert [node.data is calls[i][0] for node, i in zip(packed.nodes[:2], (1, 0), strict=True)] == [True, True]
    dummy = packed.nodes[2]
    assert dummy.dummy and dummy.data.shape == (1, 1) and dummy.attributes == spec.load(13).signatures(2)[0]
    assert layouts.packed(worker.SAME, 0, unit, 1).nodes is packed.nodes, "a model's nodes are made once"
    for layout, position, at in (((1, 0), 0, 0), ((0, 3), 0, 0), ((0, -10_000), 0, 0), ((0, 1), 2, 0)):
        with pytest.raises(worker.Malformed):  # another call at the node; no such call, signature or node
            layouts.packed(layout, position, unit, at)


# --- the Runner: each packed reply carries the model that answered it ----------------------------

@pytest.fixture(params=["process", "none"])
def isolation(request: pytest.FixtureRequest) -> str:
    return request.param


def _checked(calls: list[tuple], unit: list[int], replies: list) -> list[Packed]:
    """The packs of the replies to ``unit``: each rebuilt from the calls' own arrays, the call at its node."""
    packs = []
    for index in unit:
        reply = replies[index]
        if reply.nodes == 1:
            assert reply.pack is None
            continue
        pack = reply.pack
        assert len(pack.nodes) == reply.nodes and pack.nodes[pack.position].data is calls[index][0]
        assert all(node.dummy or any(node.data is calls[i][0] for i in unit) for node in pack.nodes)
        packs.append(pack)
    return packs


def test_a_bisected_pack_names_the_models_of_its_halves(isolation: str) -> None:
    calls = static_calls(SHAPES)
    calls[4] = (calls[4][0], 13, {"axis": 5}, "static")  # an invalid model fails its whole pack
    with Runner("onnxruntime", isolation=isolation) as runner:
        replies = runner.call_many(calls, pack=True, units=[list(range(len(calls)))])
    packs = _checked(calls, list(range(len(calls))), replies)
    assert packs and all(len(pack.nodes) < len(calls) for pack in packs), "the halves without the invalid call"
    assert {len(pack.nodes) for pack in packs} >= {2}
    for pack in packs:  # the model rebuilt from the pack answers as the reply did
        asked = [(node.data, 13, node.attributes, "static") for node in pack.nodes]
        with Runner("onnxruntime", isolation="none") as again:
            answer = again.call_many(asked, pack=True, units=[list(range(len(asked)))])[pack.position]
        assert answer.value.tolist() == expected(asked[pack.position])


def test_a_signature_model_names_its_dummies(isolation: str) -> None:
    rng = np.random.default_rng(1)
    calls = [(rng.random(n + 1).astype(np.float32), 13, a, "symbolic")
             for n, a in enumerate([{}, {"keepdims": 0}, {"axis": -1, "select_last_index": 1}] * 10)]
    signatures = spec.load(13).signatures(1)
    with Runner(model("correct"), isolation=isolation) as runner:
        runner.call_many(calls, pack=True, units=[list(range(len(calls)))])  # enough rank-1 cases: a model is worth it
        replies = runner.call_many(calls[:3], pack=True, units=[[0, 1, 2]])
    packs = _checked(calls, [0, 1, 2], replies)
    assert len(packs) == 3 and all(len(pack.nodes) == len(signatures) for pack in packs)
    assert all(pack.nodes is packs[0].nodes for pack in packs), "one model, one list of nodes"
    dummies = [node for node in packs[0].nodes if node.dummy]
    assert len(dummies) == len(signatures) - 3 and all(d.data.shape == (1,) and not d.data.any() for d in dummies)
    assert sorted(sorted(n.attributes.items()) for n in packs[0].nodes) == sorted(sorted(s.items()) for s in signatures)
    assert [r.value.tolist() for r in replies] == [expected(call) for call in calls[:3]]
