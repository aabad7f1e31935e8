"""Failures only packed models show, recorded so that a vendor can reproduce them: the worker
tells which model answered a packed call (its layout: the calls and dummy inputs of its nodes,
and the call's node), the process that owns the run rebuilds that model from its own arrays, the
session asks smaller packs until the smallest that still fails is found (engine.asking.packing), the
counterexample records it node by node, and both replay snippets rebuild it and fail while the
runtime still gets it wrong. Fake model-level runtimes with packing bugs:
tests/impls/model_packing.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import spec
from engine.adapters import models
from engine.asking import protocol, worker
from engine.asking.calls import Node, Packed, Reply
from engine.asking.isolation import Runner
from engine.asking.loader import portable
from engine.asking.packing import Layouts
from engine.config.options import run_info
from engine.judging.pack_search import ASKS, LIGHTER_ASKS, lighter, smallest
from engine.judging.run import run_all
from reports.document import replay
from reports.document.aggregate import aggregate
from reports.document.replay import snippet, standalone
from reports.pages.render import render_report
from results import CaseResult, Counterexample, Pack, PackNode, RawRun, Tensor, dumps, from_json
from results.digest import counterexample_digest
from results.records import REPRODUCES_ALONE
from results.verdict import verdicts
from tests.impls.model_packing import DUMMIES
from tests.test_packing import SCHEMA, SHAPES, expected, model, settings, static_calls

CHECKOUT = Path(__file__).resolve().parent.parent


# --- the wire: a packed reply tells its model once ----------------------------------------------

def test_a_reply_tells_its_packed_model_once_and_strictly() -> None:
    outcome = Reply("ok", np.array([1], dtype=np.int64), None, 0.001, False, None, nodes=3)

    def told_of(reply: Reply) -> tuple:
        return reply.layout, reply.position

    told = protocol.encode(replace(outcome, layout=(2, -5, 0), position=2))
    same = protocol.encode(replace(outcome, layout=worker.SAME, position=1))
    plain = protocol.encode(outcome)
    assert told_of(protocol.decode(told)) == ((2, -5, 0), 2) and told_of(protocol.decode(same)) == (worker.SAME, 1)
    assert told_of(protocol.detached(replace(outcome, layout=(2, -5, 0), position=2))) == ((2, -5, 0), 2)
    assert told_of(protocol.decode(plain)) == (None, 0)
    assert len(told) == len(plain) + 6 and len(same) == len(plain), "two bytes per node, once per model"
    one = protocol.encode(replace(outcome, nodes=1, layout=(0,), position=0))
    assert told_of(protocol.decode(one)) == (None, 0), "one node: none"
    mode = protocol._HEADER.size - 3  # the layout's kind (B) and the node (H) end the header
    for offset, forged_bytes in ((mode, b"\3"), (mode + 1, b"\3\0")):  # no such kind; a node past the model's
        forged = bytearray(told)
        forged[offset:offset + len(forged_bytes)] = forged_bytes
        with pytest.raises(protocol.Malformed):
            protocol.decode(bytes(forged))


def test_a_layout_is_checked_against_the_calls_it_names() -> None:
    calls = static_calls([(2, 2), (3,), (4,)])
    unit = [0, 1, 2]
    layouts = Layouts(calls)
    with pytest.raises(protocol.Malformed):
        layouts.packed(worker.SAME, 0, unit, 0)  # no layout told before
    first_of_rank_2 = -1 - len(spec.load(13).signatures(1))  # a dummy's code counts every rank's signatures
    packed = layouts.packed((1, 0, first_of_rank_2, -1), 1, unit, 0)
    assert [node.data is calls[i][0] for node, i in zip(packed.nodes[:2], (1, 0), strict=True)] == [True, True]
    dummy, other = packed.nodes[2:]
    assert dummy.dummy and dummy.data.shape == (1, 1) and dummy.attributes == spec.load(13).signatures(2)[0]
    assert other.dummy and other.data.shape == (1,) and other.attributes == spec.load(13).signatures(1)[0], \
        "a model's dummies may be of other ranks than its calls (a schedule's model holds every rank)"
    assert layouts.packed(worker.SAME, 0, unit, 1).nodes is packed.nodes, "a model's nodes are made once"
    for layout, position, at in (((1, 0), 0, 0), ((0, 3), 0, 0), ((0, -10_000), 0, 0), ((0, 1), 2, 0)):
        with pytest.raises(protocol.Malformed):  # another call at the node; no such call, signature or node
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


# --- engine.asking.packing: the smallest pack that still fails ---------------------------------------------

def _smallest_pack(count: int, position: int, dummies: int = 0) -> Packed:
    nodes = [Node(np.array([float(i)]), {"axis": 0}) for i in range(count)]
    nodes += [Node(np.zeros(1), {"keepdims": 0}, True) for _ in range(dummies)]
    return Packed(tuple(nodes), position)


def test_the_smallest_pack_keeps_the_node_the_failure_needs() -> None:
    found, asked = _smallest_pack(40, 17), []

    def ask(nodes, position):  # fails where node 29 (the value 29.0) is still there
        asked.append(len(nodes))
        return Packed(tuple(nodes), position) if any(n.data[0] == 29.0 for n in nodes) else None

    shown = smallest(found, ask)
    assert [n.data[0] for n in shown.nodes] == [17.0, 29.0] and shown.position == 0
    assert len(asked) <= ASKS and asked[0] == 40, "the pack it was found in first"


def test_the_smallest_pack_is_asked_within_its_budget() -> None:
    asked = []

    def ask(nodes, position):  # fails at node 3 or later: the nodes before it must stay
        asked.append(len(nodes))
        return Packed(tuple(nodes), position) if position >= 3 else None

    shown = smallest(_smallest_pack(64, 40), ask)
    assert len(asked) <= ASKS and len(shown.nodes) == 4 and shown.position == 3
    asked.clear()
    assert len(smallest(_smallest_pack(64, 40), ask, asks=5).nodes) < 64 and len(asked) == 5
    assert smallest(_smallest_pack(64, 40), lambda nodes, position: None) is None, "not reproduced: no pack made up"


def test_the_other_nodes_inputs_are_made_small_while_the_pack_still_fails() -> None:
    """A pack that fails whatever its nodes hold keeps one element in each; one that needs the
    other node's axis to be at least 8 long keeps 8 zeros there, on one row; the case's node goes
    last."""
    case, other = Node(np.arange(5.0), {"axis": 0}), Node(np.linspace(1, 2, 300).reshape(3, 100), {"axis": 1})
    shown = lighter(Packed((case, other), 0), lambda nodes, position: Packed(tuple(nodes), position))
    assert shown.nodes[0].data.shape == (1,) and shown.nodes[1].data.shape == (1, 1)

    asked = []

    def ask(nodes, position):  # fails while the other input keeps 8 or more along its longest axis
        asked.append((nodes[0].data.shape, nodes[1].data.shape))
        return Packed(tuple(nodes), position) if max(nodes[1].data.shape) >= 8 else None

    shown = lighter(Packed((case, other), 0), ask)
    assert shown.nodes[1].data.shape == (1, 8) and not shown.nodes[1].data.any(), shown.nodes[1].data.shape
    assert len(asked) <= LIGHTER_ASKS and shown.nodes[1].attributes == {"axis": 1}
    first_of_the_case = next(i for i, (mine, _) in enumerate(asked) if mine != (5,))
    assert all(other == (1, 8) for _, other in asked[first_of_the_case:]), "the case's node after the other's"


def test_nodes_of_one_shape_are_made_small_together() -> None:
    """A bug of the binding between nodes (a node answering with its neighbour's output) fails
    the same way only while the two keep one shape and a tie to break: they shrink together, to
    two elements, from the 60,312 each of them held."""
    rng = np.random.default_rng(0)
    data = rng.integers(0, 3, (6, 1, 10052)).astype(np.uint8)
    pack = Packed((Node(data, {"axis": 2}), Node(data.copy(), {"axis": 2, "select_last_index": 1})), 0)

    def ask(nodes, position):  # the case's node reads the other's answer: wrong where their ties break apart
        mine, theirs = (node.data for node in nodes)
        return Packed(tuple(nodes), position) if mine.shape == theirs.shape and mine.shape[2] >= 2 else None

    shown = lighter(pack, ask)
    assert [node.data.shape for node in shown.nodes] == [(1, 1, 2)] * 2, [node.data.shape for node in shown.nodes]


def test_a_run_of_equal_values_is_written_once_in_a_snippet() -> None:
    """A large input that is mostly one value stays exact and short: each run written once."""
    values = ["0.0"] * 5000 + ["1.5"] + ["0.0"] * 40
    literal = replay._values_literal(values)
    assert literal.count("\n") < 5 and eval(literal) == values
    assert eval(replay._values_literal(["1.0", "2.0"])) == ["1.0", "2.0"]


def test_in_a_signature_model_other_cases_become_dummies_then_dummies_go() -> None:
    """Other cases' nodes are fed dummies first, the model staying the one that failed; then the
    dummies go where a model without them still fails so (here: while it keeps 9 nodes or more)."""
    found = _smallest_pack(5, 2, dummies=20)
    asked = []

    def ask(nodes, position):
        asked.append(len(nodes))
        return Packed(tuple(nodes), position) if len(nodes) >= 9 else None

    shown = smallest(found, ask)
    fed = next(i for i, n in enumerate(asked) if n < 25)
    assert all(n == 25 for n in asked[:fed]) and fed >= 3, "the cases' nodes first, in the model that failed"
    assert len(shown.nodes) == 9 and shown.nodes[shown.position] is found.nodes[2]
    assert all(n.dummy for i, n in enumerate(shown.nodes) if i != shown.position)
    assert len(asked) <= ASKS


# --- the session, the report and the replays ------------------------------------------------------

def _document(impl: str, tmp_path: Path, **values: str) -> tuple[dict, list[tuple[CaseResult, Pack]]]:
    """The report of a run that finds failures only packs show, and each with its pack."""
    chosen = settings(impl, "on", tmp_path, **values)
    run = run_all(chosen)
    assert verdicts(run.results, [13], run.census)[13] == "non-conformant"
    raw = RawRun(run_info(chosen, time.time()), {}, run.results, run.census)
    document = aggregate(raw)
    jsonschema.Draft202012Validator(SCHEMA).validate(document)
    kept = from_json(json.loads(dumps(raw)))
    assert [r.counterexample.pack for r in kept.results if r.counterexample] == \
        [r.counterexample.pack for r in run.results if r.counterexample], "the pack round-trips through JSON"
    failures = [r for r in run.results if r.outcome == "fail" and r.counterexample]
    assert failures and all(r.packed for r in failures)
    return document, [(r, r.counterexample.pack) for r in failures]


def _run(script: str, folder: Path, suite: bool) -> subprocess.CompletedProcess:
    """A snippet as a file: the suite's from the checkout's root (as it says), the standalone one
    with the checkout importable (its model plug-in imports zoo)."""
    path = folder / "snippet.py"
    path.write_text(script, encoding="utf-8")
    if suite:
        return subprocess.run([sys.executable, "-I", str(path)], cwd=CHECKOUT, capture_output=True, text=True,
                              timeout=300, check=False)
    return subprocess.run([sys.executable, str(path)], cwd=folder, capture_output=True, text=True, timeout=300,
                          check=False, env={"PYTHONPATH": str(CHECKOUT), "PATH": "/usr/bin:/bin"})


def _replays_fail_on_the_bug_only(result: CaseResult, impl: str, folder: Path) -> None:
    ce = result.counterexample
    for name, fails in ((impl, True), ("correct", False)):
        found = portable(model(name))
        scripts = [(snippet(found, 13, ce, kind=result.kind, clause=result.clause, form=result.form), True),
                   (standalone(found, 13, ce, kind=result.kind, clause=result.clause, form=result.form), False)]
        for script, suite in scripts:
            assert "packed_model" in script or "answer_model" in script
            done = _run(script, folder, suite)
            assert (done.returncode != 0) == fails and ("AssertionError" in done.stderr) == fails, (name, done.stderr)


def test_a_packed_only_failure_records_the_small_pack_it_needs(tmp_path: Path) -> None:
    document, failures = _document(model("wrong_beside_keepdims_0"), tmp_path)
    for result, pack in failures:
        assert pack.form == "static" and pack.reproduced and len(pack.nodes) == 2 < result.packed
        other = pack.nodes[1 - pack.position]
        assert other.attributes.get("keepdims") == 0, "the node the bug needs stayed"
        assert pack.nodes[pack.position].input == result.counterexample.input
    card = next(f for f in document["failures"] if f["counterexample"]["pack"])
    page = render_report(document)
    assert "Failed in a packed model of 2 nodes" in page and "rebuilds the packed model above" in page
    assert "在含 2 個節點的打包模型中失敗" in render_report(document, "zh-TW")
    assert card["counterexample"]["pack"]["nodes"][0]["input"]["display"]
    _replays_fail_on_the_bug_only(failures[0][0], "wrong_beside_keepdims_0", tmp_path)


def test_a_failure_only_signature_models_show_keeps_the_dummies_it_needs(tmp_path: Path) -> None:
    """A rank's model of every signature (the free draw's; a schedule's model holds a few a rank)."""
    _, failures = _document(model("wrong_among_dummies"), tmp_path, forms="symbolic", schedule="off")
    for result, pack in failures:
        rank = len(result.counterexample.input.shape)
        assert pack.form == "symbolic" and DUMMIES < len(pack.nodes) < len(spec.load(13).signatures(rank))
        zeros = [n for n in pack.nodes if n.input.shape == [1] * rank and set(n.input.values) <= {"0.0", "-0.0"}]
        assert len(zeros) >= DUMMIES
    _replays_fail_on_the_bug_only(failures[0][0], "wrong_among_dummies", tmp_path)


def test_a_packed_failure_only_a_fresh_process_shows_reproduces_alone(tmp_path: Path) -> None:
    """Wrong in the first packed model a process runs and no other: the worker that found it can
    never show it again (the pack stays as it was found), but a fresh worker, where it is the first
    pack, fails it too: it reproduces alone, and its snippets, each a fresh process, fail as files
    (asked again in the worker that found it, it passed for a flake)."""
    document, failures = _document(model("wrong_in_first_pack"), tmp_path, isolation="process")
    for result, pack in failures:
        assert not pack.reproduced and len(pack.nodes) == result.packed, "the pack it was found in, as it was"
        ce = result.counterexample
        assert ce.reproduction == REPRODUCES_ALONE and not ce.flaky and ce.again == ce.actual
    page = render_report(document)
    assert "the pack it was found in" in page and "Reproduces alone" in page and 'class="again"' in page
    assert "the smallest pack found" not in page
    _replays_fail_on_the_bug_only(failures[0][0], "wrong_in_first_pack", tmp_path)


def test_every_second_ask_of_a_pack_rebuilds_one_model(tmp_path: Path) -> None:
    """The flake check, the pack minimizer (both through Session.ask_pack, the adapter's
    answer_model) and the two replay snippets build exactly the same model from a recorded pack:
    where they did not, a deterministic bug of large packs read as a flake while its snippet
    failed every time."""
    from engine.judging.session import Session
    from results.tensors import to_tensor
    from tests.impls import model_packing

    rank2 = spec.load(13).signatures(2)[5]
    nodes = [Node(np.array([3.0, 1.0, 2.0], np.float32), {"axis": 0}),
             Node(np.array([[4.0, 0.5], [2.0, 7.0]], np.float32), {"keepdims": 0}),
             Node(np.zeros((1, 1), np.float32), rank2, True)]
    recorder = "model:tests.impls.model_packing:recording"  # by module: in-process, the module imported here
    session = Session(settings(recorder, "on", tmp_path))
    session.begin("t[v13-float]", "static", "property")
    replies = session.ask_pack(nodes, 13)
    assert [r.status for r in replies] == ["ok"] * 3 and all(r.nodes == 3 for r in replies)
    built = models.packed_model("static", [n.data for n in nodes], 13, [n.attributes for n in nodes])
    assert model_packing.COMPILED[-1] == built.SerializeToString(), "the suite's second ask compiles the recorded pack"
    recorded = Pack("static", 1, [PackNode(to_tensor(n.data), dict(n.attributes)) for n in nodes])
    ce = Counterexample(recorded.nodes[1].input, dict(nodes[1].attributes), None, None, "fail", "", pack=recorded)
    impl = portable(recorder)
    asked = "fn.answer_model('static', datas, VERSION, node_attributes)[POSITION]"
    assert asked in snippet(impl, 13, ce, form="static")
    namespace: dict = {}
    exec(compile(standalone(impl, 13, ce, form="static").split("\nresult = ")[0], "standalone", "exec"), namespace)
    assert namespace["model"].SerializeToString() == built.SerializeToString(), "the standalone snippet builds it too"
    session.close()


def test_a_deterministic_bug_of_large_packs_is_never_a_flake(tmp_path: Path) -> None:
    """A runtime that binds every output after the eighth one slot off fails the same way every
    time: 58 of its 338 packed-only failures were called flakes (in the symbolic form, whose
    packs the second ask served otherwise). Now none is, and each recorded answer fails."""
    _, failures = _document(model("outputs_shifted_after_eight"), tmp_path, forms="symbolic,static")
    for result, pack in failures:
        ce = result.counterexample
        assert not ce.flaky and pack.reproduced and len(pack.nodes) > 8, (result.clause, result.form)
        assert ce.again == ce.actual, "asked again the same way, the same wrong answer"


@pytest.mark.e2e
def test_every_snippet_of_a_deterministic_packed_bug_fails_as_a_file_and_is_short(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "suites", "--impl", model("outputs_shifted_after_eight"),
                          "--versions", "13", "--dtypes", "float", "--profile", "quick", "--seed", "1",
                          "--report-dir", str(tmp_path / "run")], cwd=CHECKOUT, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 1, run.stdout[-2000:]
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    cards = [f for f in report["failures"] if f["counterexample"] and f["counterexample"]["pack"]]
    assert cards and not [f for f in cards if f["counterexample"]["flaky"]]
    for card in cards:
        lines = card["standalone"].splitlines()
        builder = lines.index("# The suite's own model builder (engine/adapters/models.py), as it ran.")
        built = next(i for i, line in enumerate(lines) if line.startswith("VERSION = "))
        assert len(lines) - (built - builder) <= 200, (card["anchor"], len(lines))
        for script, suite in ((card["replay"], True), (card["standalone"], False)):
            done = _run(script, tmp_path, suite)
            assert done.returncode != 0 and "AssertionError" in done.stderr, (card["clause"], card["form"], done.stderr)


@pytest.mark.parametrize("impl", [model("correct"), "onnxruntime"])
def test_a_correct_runtime_records_no_pack(tmp_path: Path, impl: str) -> None:
    run = run_all(settings(impl, "on", tmp_path, forms="symbolic,static"))
    assert verdicts(run.results, [13], run.census)[13] == "conformant"
    assert not [r for r in run.results if r.packed or (r.counterexample and r.counterexample.pack)]


def test_a_counterexample_without_a_pack_digests_as_before() -> None:
    """Reports written before packs were recorded still verify: their digests are unchanged."""
    ce = Counterexample(Tensor("float", [2], ["2.0", "1.0"]), {}, Tensor("int64", [1], ["1"]),
                        Tensor("int64", [1], ["0"]), "not-a-minimum", "index 0 is not a minimum")
    result = CaseResult(13, "float", "property", "semantic", "fail", ["C1", "C5"], "C5", [], "t", 0.0, ce)
    assert counterexample_digest(result) == "eeb62090dfc8b9e6"
