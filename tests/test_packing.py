"""Packed models: many cases asked through one compiled model of independent ArgMin nodes, with
exact attribution. A pack that raises is bisected in the worker, one that crashes or hangs its
worker is bisected by the Runner; a failure seen in a pack is asked again alone; a failure only a
pack shows is reported as such; the first call of every group is a one-node witness. Fake
model-level runtimes with packing bugs (tests/impls/model_packing.py) must be judged as without
packing, and a correct runtime's results must not depend on --packing."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from engine.adapters import OnnxRuntimeArgMin
from engine.asking import protocol
from engine.asking.calls import Reply
from engine.asking.isolation import Runner
from engine.asking.loader import UsageError
from engine.asking.packing import PACK_NODES, Planner
from engine.config.options import Settings, run_info, validate
from engine.judging.run import run_all
from reports.document.aggregate import aggregate
from reports.folders.verify import rerun_command
from reports.pages.matrix import matrix
from reports.pages.render import render_matrix, render_report
from reports.pages.standing import causes_line
from results import RawRun
from results.digest import results_digest
from results.verdict import verdicts
from tests.impls import model_packing
from tests.suite_runs import suite_session
from zoo.correct import numpy_argmin

PACKING = Path(__file__).parent / "impls" / "model_packing.py"
SCHEMA = json.loads((Path(__file__).parent.parent / "reports" / "document" / "report.schema.json")
                    .read_text(encoding="utf-8"))


def model(name: str) -> str:
    return f"model:{PACKING}:{name}"


def static_calls(shapes: list[tuple[int, ...]], form: str = "static") -> list[tuple]:
    rng = np.random.default_rng(0)
    return [(rng.random(shape).astype(np.float32), 13, {"axis": -1}, form) for shape in shapes]


def expected(call: tuple) -> list:
    data, version, attributes, _ = call
    return numpy_argmin(data, opset=version, **attributes).tolist()


SHAPES = [(2, 4), (3, 5), (2, 2), (6,), (1, 3), (4, 4), (5, 2), (2, 6), (3, 4), (2, 3, 2)]  # (1, 3) has 3 elements
GUILTY = SHAPES.index((1, 3))


# --- the packed model ---------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["symbolic", "static", "initializer"])
def test_a_packed_model_answers_as_its_one_node_models(form: str) -> None:
    runtime = OnnxRuntimeArgMin()
    calls = static_calls(SHAPES, form)
    datas, attributes = [c[0] for c in calls], [{"axis": 0}, {}, {"keepdims": 0}, {"select_last_index": 1}] * 3
    packed = runtime.answer_pack(form, datas, 13, attributes[:len(datas)])
    before = runtime.compiles
    for data, attrs, answer in zip(datas, attributes, packed, strict=False):
        alone = runtime.answer(form, data, 13, attrs)
        assert np.array_equal(answer.value, alone.value) and answer.declared == alone.declared
    signatures = {(d.ndim, tuple(sorted(a.items()))) if form == "symbolic" else id(d)
                  for d, a in zip(datas, attributes, strict=False)}
    assert runtime.compiles - before == len(signatures), "each one-node model compiles on its own"


def test_the_reply_header_carries_nodes_splits_and_model_costs_strictly() -> None:
    outcome = Reply("ok", np.array([1], dtype=np.int64), None, 0.001, False, None)
    models = protocol.Models(2, 5, 0.25, 9)
    sent = protocol.charged(replace(outcome, nodes=17, split=True), models)

    def header(reply: Reply) -> tuple:
        return reply.nodes, reply.split, reply.compiles, reply.loaded, reply.model_seconds, reply.compiled_nodes

    assert header(protocol.decode(protocol.encode(sent))) == (17, True, 2, 5, 0.25, 9)
    assert header(protocol.detached(sent)) == (17, True, 2, 5, 0.25, 9)
    # nodes (H), split (B), compiled and loaded (I), seconds (d), nodes compiled (I), then the layout's kind (B)
    # and node (H)
    nodes = protocol._HEADER.size - 26
    for offset, forged_bytes in ((nodes, b"\0\0"), (nodes + 2, b"\2")):  # no model has no node; split is a flag
        forged = bytearray(protocol.encode(outcome))
        forged[offset:offset + len(forged_bytes)] = forged_bytes
        with pytest.raises(protocol.Malformed):
            protocol.decode(bytes(forged))


# --- the Runner: packs, witnesses, bisection ----------------------------------------------------

@pytest.fixture(params=["process", "none"])
def isolation(request: pytest.FixtureRequest) -> str:
    return request.param


def test_packs_are_formed_per_group_with_a_witness_first() -> None:
    planner = Planner()  # no runtime: what is compiled is decided before anything is asked
    older = [(data, 11, attributes, form) for data, _, attributes, form in static_calls([(2, 2)] * (PACK_NODES + 3))]
    calls = static_calls(SHAPES) + static_calls(SHAPES[:3], "symbolic") + older
    units = planner.packs(calls)
    assert units[0] == [0] and units[1] == list(range(1, len(SHAPES))), "a witness, then one pack"
    assert units[2:4] == [[10], [11, 12]], "the symbolic form is a group of its own"
    assert [len(unit) for unit in units[4:]] == [1, PACK_NODES, 2], "a new group's witness; the node cap"
    empty = static_calls([(2, 2), (2, 2), (2, 0), (2, 2), (0, 2), (2, 2), (0, 3)])
    assert planner.packs(empty) == [[0], [1, 3, 5], [2], [4], [6]], "empty inputs start one node a pack"
    assert planner.probes(empty) == [2], "the first empty input is asked alone first"
    planner.adapt(empty, [2], False)  # an empty input was answered: empty inputs pack as valid ones do
    assert planner.packs(empty) == [[0], [1, 3, 5], [2, 4, 6]] and planner.probes(empty) == []
    big = static_calls([(1025, 1024), (1025, 1024), (2, 2)])
    assert planner.packs(big) == [[0], [1], [2]], "the element budget holds a large input alone"


def test_census_inputs_a_runtime_may_refuse_pack_apart_by_what_may_be_refused() -> None:
    planner = Planner()
    calls = static_calls([(2, 2)] * 8)
    for index, attributes in ((2, {"keepdims": 2}), (3, {"keepdims": -1, "axis": 1}), (5, {"select_last_index": 2}),
                              (6, {"keepdims": 7}), (7, {"axis": 1, "select_last_index": 2})):
        calls[index] = (calls[index][0], 13, attributes, "static")
    # Valid inputs: a witness, then a pack; each kind of doubtful input alone until one answers.
    assert planner.packs(calls) == [[0], [1, 4], [2], [3], [5], [6], [7]]
    assert planner.probes(calls) == [2, 5], "the first of each doubtful kind is asked alone first"
    planner.adapt(calls, [2], False)  # keepdims=2 was answered: keepdims outside its list packs now
    assert planner.packs(calls) == [[0], [1, 4], [2, 3, 6], [5], [7]] and planner.probes(calls) == [5]
    planner.adapt(calls, [5], True)  # select_last_index=2 was not: one node a model
    assert planner.packs(calls) == [[0], [1, 4], [2, 3, 6], [5], [7]] and planner.probes(calls) == []


def test_a_pack_with_state_twins_is_asked_again_with_the_twins_in_place() -> None:
    asked, units = Planner().with_twins(static_calls([(2, 2)] * 4), [False, True, False, False])
    # The witness has no twin; the pack has one: asked again, its other calls once more, unkept.
    assert units == [[0], [1, 2, 3], [4, 5, 6]]
    assert asked == [0, 1, 2, 3, ~1, 2, 3]


def test_a_pack_that_raises_is_bisected_down_to_the_guilty_call(isolation: str) -> None:
    calls = static_calls(SHAPES)
    calls[GUILTY] = (calls[GUILTY][0], 13, {"axis": 5}, "static")  # an invalid model fails its whole pack
    with Runner("onnxruntime", isolation=isolation) as runner:
        replies = runner.call_many(calls, pack=True)
    assert replies[GUILTY].status == "raised" and replies[GUILTY].nodes == 1
    for index, (call, reply) in enumerate(zip(calls, replies, strict=True)):
        if index != GUILTY:
            assert reply.status == "ok" and reply.value.tolist() == expected(call), index
    assert max(r.nodes for r in replies) < len(SHAPES) - 1, "no pack holding the guilty call answered"
    assert max(r.nodes for r in replies) > 1, "the halves without it were asked as packs"


@pytest.mark.e2e
def test_a_crash_in_a_pack_is_pinned_on_its_call() -> None:
    calls = static_calls(SHAPES)
    with Runner(model("crash_on_three"), isolation="process", timeout=20) as runner:
        replies = runner.call_many(calls, pack=True)
    assert [r.status for r in replies].count("crash") == 1
    assert replies[GUILTY].status == "crash" and replies[GUILTY].nodes == 1
    assert "exited with code 3" in replies[GUILTY].error
    assert all(r.value.tolist() == expected(c) for i, (c, r) in enumerate(zip(calls, replies, strict=True))
               if i != GUILTY)
    assert runner.restarts >= 2, "each half that crashed was asked again in a fresh worker"


@pytest.mark.e2e
def test_a_hang_in_a_pack_is_pinned_on_its_call() -> None:
    calls = static_calls(SHAPES[:6])
    with Runner(model("hang_on_three"), isolation="process", timeout=0.5) as runner:
        runner.load()
        replies = runner.call_many(calls, pack=True)
    assert [r.status for r in replies] == ["ok"] * 4 + ["timeout", "ok"]
    assert replies[4].nodes == 1 and "no answer within 0.5 s" in replies[4].error


def test_a_runtime_that_returns_one_output_is_asked_one_node_models(isolation: str) -> None:
    calls = static_calls(SHAPES)
    impl = f"model:{Path(__file__).parent / 'impls' / 'model_onnxruntime.py'}:first_output_only"
    with Runner(impl, isolation=isolation) as runner:
        replies = runner.call_many(calls, pack=True)
    assert all(r.nodes == 1 and r.value.tolist() == expected(c) for c, r in zip(calls, replies, strict=True))


# --- the session: judged exactly as without packing ---------------------------------------------

def settings(impl: str, packing: str, tmp_path: Path, **values: str) -> Settings:
    return validate({"impl": impl, "versions": "13", "dtypes": "float", "profile": "quick", "seed": "7",
                     "isolation": "none", "forms": "static", "packing": packing,
                     "report_dir": str(tmp_path / packing), **values})


def test_a_correct_runtime_gets_the_same_results_with_and_without_packing(tmp_path: Path) -> None:
    runs = {p: run_all(settings("onnxruntime", p, tmp_path, forms="")) for p in ("on", "off")}
    on, off = runs["on"], runs["off"]
    assert results_digest(on.results) == results_digest(off.results)
    assert verdicts(on.results, [13], on.census) == verdicts(off.results, [13], off.census)
    # Packed, twins rerun their cases' pack: its other nodes are asked again, unkept.
    assert on.calls >= off.calls and on.compiles < off.compiles, (on.compiles, off.compiles)


@pytest.mark.e2e
def test_a_crash_is_pinned_on_its_case_as_without_packing(tmp_path: Path) -> None:
    runs = {p: run_all(settings(model("crash_on_three"), p, tmp_path, isolation="process", timeout="20"))
            for p in ("on", "off")}
    crashes = {p: [r for r in run.results if r.outcome == "crash"] for p, run in runs.items()}
    shown = [r.counterexample for r in crashes["on"] if r.counterexample is not None]
    assert shown and all(ce.input.shape == [3] for ce in shown)
    assert sorted(r.input_digest for r in crashes["on"]) == sorted(r.input_digest for r in crashes["off"])
    assert results_digest(runs["on"].results) == results_digest(runs["off"].results), "every other case too"
    assert all(r.packed is None for r in runs["on"].results)


def test_a_bug_only_packs_show_is_reported_as_packed_only(tmp_path: Path) -> None:
    chosen = settings(model("wrong_fourth_node"), "on", tmp_path)
    on = run_all(chosen)
    failures = [r for r in on.results if r.outcome == "fail"]
    assert failures and all(r.packed and r.packed > 3 and r.form == "static" for r in failures)
    assert verdicts(on.results, [13], on.census)[13] == "non-conformant"
    document = aggregate(RawRun(run_info(chosen, time.time()), {}, on.results, on.census))
    jsonschema.Draft202012Validator(SCHEMA).validate(document)
    cards = [c for c in document["cards"] if c["outcome"] == "fail"]  # an index out of range, or not a minimum
    page = render_report(document)
    assert cards and all(card["packed"] > 3 and f"packed model of {card['packed']} nodes" in page for card in cards)
    assert "rebuilds the packed model above" in page, "its replay rebuilds the pack (tests/test_packed_failures.py)"
    for failure in document["failures"]:
        failure["counterexample"]["pack"] = None  # a run that recorded no pack
    assert "it passes, and shows the case, not the packed failure" in render_report(document), \
        "there, its one-node replay is not a repro, and the card says so"
    version, = document["versions"]
    assert "in packed models only: float" in causes_line(version["causes"]), "the terminal's verdict line says so"
    assert 'class="packed-mark"' in page, "and the verdict on the page"
    side = matrix([(document, tmp_path)], tmp_path / "matrix.html")
    typed = [t for section in side["sections"] for row in section["rows"] for t in row["typed"]]
    assert typed and all(t["cells"][0]["packed"] for t in typed), "and on the runtime matrix"
    assert render_matrix(side).count('class="packed-mark"') == len(typed) + len(version["causes"])
    for cause in version["causes"]:
        cause["every_type"] = True  # shown as "every type tried": still marked
    assert 'class="packed-mark"' in render_report(document)
    off = run_all(settings(model("wrong_fourth_node"), "off", tmp_path))
    assert verdicts(off.results, [13], off.census)[13] == "conformant", "no pack, no bug"


def test_a_bug_only_packs_show_never_reaches_the_census(tmp_path: Path) -> None:
    """A census answer from a pack that fits no policy, is flagged or changed when asked again is
    asked again alone: the census records the runtime's policy, not its packing bug."""
    chosen = settings(model("wrong_fourth_node"), "on", tmp_path, profile="standard")
    session, failed = suite_session(chosen, "census")
    assert failed == 0
    assert session.compiles < session.calls, "census inputs were packed"
    odd = [r for r in session.census if not r.fits or r.flags or r.deterministic is False]
    assert session.census and not odd, odd[:3]


def test_a_census_oddity_a_one_node_model_shows_too_is_asked_alone_once(tmp_path: Path) -> None:
    """A NaN answer no policy fits, in every model: the first packed one is asked again alone,
    which shows it too; the test's other packed occurrences are taken as they came, one more
    occurrence of what the census already holds. The census reads as without packing."""
    runs = {}
    for packing in ("off", "on"):
        model_packing.NODES.clear()
        counted = "model:tests.impls.model_packing:nan_answers_shifted"  # by module: NODES is this module's
        runs[packing] = suite_session(settings(counted, packing, tmp_path, profile="standard"),
                                      "census")[0]
        alone = model_packing.NODES.count(1)
    on, off = runs["on"], runs["off"]
    oddities = {packing: sorted({(r.topic, tuple(r.fits), tuple(r.flags)) for r in run.census})
                for packing, run in runs.items()}
    odd = [r for r in on.census if not r.fits]
    assert len(odd) > 20 and oddities["on"] == oddities["off"], oddities
    assert len(on.census) == len(off.census)
    # In the static form every input asked alone is a one-node model of its own (70 of them
    # when each odd input was asked alone); the witnesses and probes are one-node models too.
    assert alone < len(odd) / 2, (alone, len(odd))


def test_a_bug_only_one_node_models_show_is_found_by_the_witnesses(tmp_path: Path) -> None:
    """The property suite alone (the fixed suite asks single calls anyway): only its witnesses
    are one-node models."""
    chosen = settings(model("wrong_alone"), "on", tmp_path)
    session, failed = suite_session(chosen, "property")
    assert failed == 1
    failures = [r for r in session.results if r.outcome == "fail"]
    assert failures and all(r.packed is None for r in failures)
    assert session.compiles < session.calls, "the other cases were packed"


@pytest.mark.parametrize("packing", ["on", "off"])
def test_state_kept_between_calls_is_found_in_every_form_that_reuses_a_model(packing: str, tmp_path: Path) -> None:
    """Packed, a twins' pack runs the model compiled for its cases' pack, as a twin one by one
    runs its case's one-node model; the initializer form compiles every input anew."""
    run = run_all(settings(model("stale_answers"), packing, tmp_path, forms="symbolic,static,initializer"))
    twins = [r for r in run.results if r.outcome == "fail" and "state:twin" in r.tags and r.suite == "property"]
    assert {r.form for r in twins} == {"symbolic", "static"}, {r.form for r in twins}
    assert not [r for r in run.results if r.outcome == "fail" and r.form == "initializer"]
    assert verdicts(run.results, [13], run.census)[13] == "non-conformant"


# --- the option ---------------------------------------------------------------------------------

def test_packing_is_an_option_recorded_and_rerun(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--packing off"):
        validate({"impl": "onnxruntime", "packing": "maybe"})
    assert validate({"impl": "onnxruntime", "packing": "off"}).packing is False
    document = {"certificate": {"implementation": "onnxruntime", "profile": "quick", "versions": [13], "timeout_s": 10,
                                "seed": 1, "types": None, "forms": None, "packing": "off"}}
    command = rerun_command(document, tmp_path)
    assert command[command.index("--packing") + 1] == "off"

