"""What a run compiles, counted on a fake compiler runtime (tests/impls/fake_compiler.py) that
counts its compiles as the built-ins do: a type the runtime refuses costs no compile per case, a
second process (the census asks every undefined input again in one) loads what the compile cache
holds instead of compiling it, and the symbolic cases of one rank end up on one model compiled
once; in every case the answers are the ones the models would give without the saving."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import spec
from engine.adapters.signatures import SignatureModels
from engine.asking.isolation import Runner
from engine.config.options import compile_cache_folder, run_info, validate
from engine.config.plan import Task
from engine.contract.adapters import Schedule
from engine.contract.forms import SYMBOLIC
from engine.judging.run import run_all, run_task
from engine.judging.run import test_cases as cases_of
from engine.judging.session import Session
from generators import schedule
from generators.quotas import CENSUS_QUOTA
from results import RawRun
from results.verdict import CONFORMANT, standings
from tests.suite_runs import suite_session
from tests.test_generators import sample
from zoo.correct import numpy_argmin

FAKE = Path(__file__).parent / "impls" / "fake_compiler.py"


def calls(count: int, dtype: str, rank: int = 1, seed: int = 0, version: int = 13) -> list[tuple]:
    """``count`` symbolic calls of one rank, with every valid attribute signature in turn."""
    rng = np.random.default_rng(seed)
    signatures = spec.load(version).signatures(rank)
    made = []
    for index in range(count):
        shape = tuple(int(n) for n in rng.integers(1, 5, size=rank))
        made.append((rng.integers(-9, 9, size=shape).astype(dtype), version, signatures[index % len(signatures)],
                     SYMBOLIC))
    return made


def right(call: tuple) -> list:
    data, version, attributes, _ = call
    return numpy_argmin(data, opset=version, **attributes).tolist()


def test_a_type_the_runtime_refuses_costs_a_compile_per_pack_not_per_case() -> None:
    with Runner(f"{FAKE}:refuses_int16", isolation="process") as runner:
        asked = calls(96, "int16")
        replies = [r for start in range(0, 96, 32) for r in runner.call_many(asked[start:start + 32], pack=True)]
        compiled = sum(r.compiles for r in replies)
    assert {r.status for r in replies} == {"unsupported"}
    # Each batch: its witness alone, then one pack, and once the rank's signature model is tried;
    # asked one by one, 96 compiles.
    assert compiled <= 2 * 3 + 1, compiled
    assert sum(r.nodes > 1 for r in replies) >= 90, "the packs were refused as a whole"


def test_a_refused_type_is_still_named_not_implemented() -> None:
    settings = validate({"impl": f"model:{FAKE}:refusing_int16", "versions": "13", "dtypes": "int16,float",
                         "profile": "quick", "seed": "3"})
    session = run_all(settings)
    standing = standings(RawRun(run_info(settings, 0.0), {}, session.results, session.census))[13]
    assert (standing.verdict, standing.scope.not_implemented) == (CONFORMANT, ("int16",))
    asked = [r for r in session.results if r.type_name == "int16" and r.suite in ("property", "census")]
    assert asked and all(r.outcome == "unsupported" for r in asked if r.suite == "property")


def test_a_second_process_loads_what_the_compile_cache_holds(tmp_path: Path) -> None:
    asked = calls(40, "float32", rank=2) + calls(6, "float32", rank=3, seed=1)
    answers = []
    for _ in range(2):  # two workers one after the other, as the census's second process
        with Runner(f"{FAKE}:correct", isolation="process", compile_cache=tmp_path) as runner:
            replies = runner.call_many(asked, pack=True)
            answers.append([r.value.tolist() for r in replies])
            counts = (sum(r.compiles for r in replies), sum(r.loaded for r in replies))
    first, second = answers
    assert first == second == [right(call) for call in asked]
    assert counts[0] == 0 and counts[1] > 0, f"the second worker compiled {counts[0]} models"
    assert any(tmp_path.iterdir())


def test_the_census_asks_its_second_process_in_the_first_process_packs(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Every census input is asked again in a second worker; in the packs the first worker was
    asked in, whose models the compile cache holds, whatever that worker's packs adapted to."""
    settings = validate({"impl": f"model:{FAKE}:refusing_int16", "versions": "13", "profile": "quick", "seed": "3"})
    second = Runner(f"{FAKE}:correct", isolation="process", compile_cache=tmp_path)
    asked_second = second.call_many
    compiled = []

    def counted(*args, **kwargs):
        replies = asked_second(*args, **kwargs)
        compiled.extend(r.compiles for r in replies)
        return replies

    monkeypatch.setattr(second, "call_many", counted)
    monkeypatch.setattr("engine.judging.session.implementation", lambda settings: second)
    first = Runner(f"{FAKE}:correct", isolation="process", compile_cache=tmp_path)
    # As after packs of the earlier tests failed (a runtime with packed-only bugs): smaller packs.
    float_calls = [(np.zeros((2, 2), np.float32), 13, {}, SYMBOLIC)] * 4
    first.planner.adapt(float_calls, range(4), failed=True)  # float packs of two nodes at most
    session = Session(settings, first)
    try:
        for type_name in ("float", "int8"):
            run_task(session, Task("census", 13, type_name, form=SYMBOLIC), f"census::v13-{type_name}")
    finally:
        session.close()
    assert len(compiled) > 30 and session.compiles > 0
    assert sum(compiled) == 0, f"the second worker compiled {sum(compiled)} models"


def test_a_doubtful_kind_the_runtime_answers_is_asked_alone_once_then_packed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Census inputs with an attribute outside its list pack apart, one node a model until the
    runtime has answered one: the first of each kind is asked alone before the others are cut."""
    settings = validate({"impl": "onnxruntime", "versions": "13", "profile": "quick", "seed": "3"})
    first = Runner(f"{FAKE}:correct", isolation="process")
    asked_first, answered = first.call_many, []

    def recorded(calls, *args, **kwargs):
        replies = asked_first(calls, *args, **kwargs)
        answered.extend(zip(calls, replies, strict=True))
        return replies

    monkeypatch.setattr(first, "call_many", recorded)
    monkeypatch.setattr("engine.judging.session.implementation", lambda settings: Runner(f"{FAKE}:correct"))
    session = Session(settings, first)
    try:
        run_task(session, Task("census", 13, "int8", form=SYMBOLIC), "census::v13-int8")
    finally:
        session.close()
    outside = [reply for (_, _, attributes, _), reply in answered if attributes.get("keepdims", 0) not in (0, 1)]
    assert len(outside) == CENSUS_QUOTA["quick"] and {reply.status for reply in outside} == {"ok"}
    assert sum(reply.nodes == 1 for reply in outside) == 1, "asked alone: the first one only"


@pytest.mark.parametrize("profile", ["quick", "certify"])
def test_the_census_asks_volume_only_of_nan(profile: str) -> None:
    """NaN keeps the profile's volume; every other census topic is a quota covering its strata."""
    settings = validate({"impl": "onnxruntime", "profile": profile, "seed": "3"})
    for version, type_name, topics in ((13, "float", ("C15", "C17", "C18")), (13, "int8", ("C15", "C17", "C18")),
                                       (1, "float", ("C15", "C17", "C19", "C20"))):
        cases = cases_of(Task("census", version, type_name, form=SYMBOLIC), settings)
        assert len(cases.quota) == CENSUS_QUOTA[profile] * len(topics)
        tags = {tag for case in cases.quota for tag in case.tags}
        assert {f"topic:{topic}" for topic in topics} <= tags
        assert (cases.strategy is None) == (type_name == "int8"), "integers have no NaN: no volume at all"
        if type_name == "float":
            drawn = [case for batch in sample(cases.strategy, 5) for case in batch]
            assert {tag for case in drawn for tag in case.tags if tag.startswith("topic:")} == {"topic:C14"}
        if version == 1:
            axes = [(c.attributes["axis"], c.data.ndim) for c in cases.quota if "axis:below-range" in c.tags]
            assert any(axis >= -rank for axis, rank in axes) and any(axis < -rank for axis, rank in axes), \
                "ArgMin-1's negative axes both in [-r, -1] and below -r"


def test_without_a_compile_cache_every_process_compiles_again(tmp_path: Path) -> None:
    asked = calls(10, "float32", rank=2)
    for _ in range(2):
        with Runner(f"{FAKE}:correct", isolation="process") as runner:
            replies = runner.call_many(asked, pack=True)
        assert sum(r.compiles for r in replies) > 0 and not any(r.loaded for r in replies)


def test_the_symbolic_cases_of_a_rank_end_up_on_one_model_of_every_signature() -> None:
    signatures = len(spec.load(13).signatures(1))  # 27
    with Runner(f"{FAKE}:correct", isolation="none") as runner:
        batches = [calls(32, "float32", seed=seed) for seed in range(10)]
        compiled = []
        for asked in batches:
            replies = runner.call_many(asked, pack=True)
            assert [r.value.tolist() for r in replies] == [right(call) for call in asked]
            compiled.append(sum(r.compiles for r in replies))
            served = [r.nodes for r in replies if r.nodes > 1]
    # Packs until the rank has been asked as many cases as it has signatures, then one model of
    # them all: after that a batch costs its witness alone (a one-node model, cached by signature).
    assert sum(compiled[:2]) >= 2
    assert sum(compiled[4:]) <= 6, compiled
    assert set(served) == {signatures}, "the last batch came from the signature model"


def test_inputs_outside_the_signatures_do_not_make_a_rank_worth_its_model() -> None:
    """A rank's signature model is built once as many valid cases were asked as it has nodes;
    census inputs with an attribute outside its list, which it cannot serve, do not count."""
    compiled = []
    models = SignatureModels(compiled.append, lambda model: False, lambda data: data)
    data = [np.zeros(3, np.float32)] * 40
    assert models.serve(data, 13, [{"keepdims": 2}] * 40) == {}
    assert models.serve(data[:1], 13, [{}]) == {} and not compiled, "one valid case is not worth 27 nodes"


@pytest.mark.parametrize("impl", ["onnxruntime", "tests/impls/fake_compiler.py:correct"])
def test_only_runtimes_that_keep_compiled_models_get_a_folder(impl: str, tmp_path: Path) -> None:
    settings = validate({"impl": impl, "compile_cache": str(tmp_path)})
    assert compile_cache_folder(settings) is None
    assert compile_cache_folder(validate({"impl": "openvino", "compile_cache": "off"})) is None


def _minimized_cards(impl: str, folder: Path, compile_key: str) -> tuple[list[tuple], int]:
    """Each property failure's form, clause and simplest input, and the models compiled."""
    chosen = validate({"impl": impl, "versions": "13", "dtypes": "float", "profile": "quick", "seed": "7",
                       "isolation": "none", "forms": "symbolic,static,initializer", "schedule": "on",
                       "compile_key": compile_key, "report_dir": str(folder)})
    session, _ = suite_session(chosen, "property")
    return sorted((r.form, r.clause, tuple(r.counterexample.input.shape),
                   tuple(r.counterexample.input.values), tuple(sorted(r.counterexample.attributes.items())))
                  for r in session.results if r.counterexample is not None and r.counterexample.minimized), \
        session.compiles


def test_a_failure_of_a_quota_form_is_minimized_in_the_symbolic_form_first(tmp_path: Path) -> None:
    """For a runtime that compiles per node, each candidate of the initializer form is a compile,
    where one symbolic node serves every shape of its signature: the failure is minimized there,
    and its simplest input is the card once the test's own form fails on it too. The same cards
    as minimizing in each form, for fewer models; a bug the symbolic form does not show (one-node
    static models only) is minimized in its own form."""
    everywhere = "model:tests/impls/model_packing.py:off_by_one"
    scouted, compiled = _minimized_cards(everywhere, tmp_path / "node", "node")
    alone, compiled_alone = _minimized_cards(everywhere, tmp_path / "model", "model")  # no scout for this key
    assert {form for form, *_ in scouted} == {"symbolic", "static", "initializer"}
    assert scouted == alone and compiled < 0.7 * compiled_alone, (compiled, compiled_alone)
    static_only = "model:tests/impls/model_packing.py:wrong_alone"
    cards, _ = _minimized_cards(static_only, tmp_path / "static", "node")
    assert cards and {form for form, *_ in cards} == {"static"}
    assert cards == _minimized_cards(static_only, tmp_path / "static-model", "model")[0]


def test_a_schedule_signature_that_does_not_compile_alone_costs_no_failing_pack(tmp_path: Path) -> None:
    """Like IREE, whose symbolic ArgMin of rank 4 or more does not compile: the schedule's model is
    split by rank, a rank that fails in both halves taken as refused, and a pack holding a case of a
    refused signature is split without being compiled (it would fail): every refused model is one
    of the split's, a few per process."""
    from tests.impls import fake_compiler

    fake_compiler.REFUSED.clear()
    chosen = validate({"impl": "model:tests.impls.fake_compiler:refusing_rank_4_symbolic", "versions": "13",
                       "dtypes": "float", "profile": "standard", "seed": "7", "isolation": "none",
                       "forms": "symbolic", "schedule": "on", "report_dir": str(tmp_path)})
    session, _ = suite_session(chosen, "property")
    refused = [r for r in session.results if r.outcome == "error" and r.clause == "C1"]
    assert refused and all(len(r.counterexample.input.shape) >= 4 for r in refused if r.counterexample)
    # The schedule's model, each refused rank's and its two halves, and each refused signature's
    # one-node model once (cached): 33. Splitting down to single signatures: 62; compiling the
    # packs too: 123.
    assert len(fake_compiler.REFUSED) <= 40, fake_compiler.REFUSED


def _scheduled_calls(size: int) -> tuple[list[tuple], Schedule]:
    """A schedule of ``size`` ArgMin-13 signatures and one symbolic float call of each."""
    slots = tuple(dict.fromkeys(entry.signature for entry in schedule.signatures(spec.load(13), "7:13:float", size)))
    made = [(np.arange(2 ** rank, dtype=np.float32).reshape((2,) * rank)[::-1].copy(), 13, dict(attributes), SYMBOLIC)
            for rank, attributes in slots]
    return made, slots


def test_a_schedules_compiles_are_not_charged_to_one_calls_timeout() -> None:
    """Compiling a schedule's models takes many compiles (IREE: a dozen that fail, at a quarter of
    a second each): the worker makes them before the calls, each allowed --timeout, so no call
    times out that a one-node model answers within it."""
    made, slots = _scheduled_calls(12)
    with Runner(f"model:{FAKE}:slow_refusing_rank_4_symbolic", isolation="process", timeout=1.0) as runner:
        replies = runner.call_many(made, pack=True, schedule=slots)
        assert not runner.unprepared  # the schedule's models compiled, none dropped
    answered = [(call, reply) for call, reply in zip(made, replies, strict=True) if reply.status == "ok"]
    assert all(reply.value.tolist() == right(call) for call, reply in answered)
    assert len(answered) == sum(rank < 4 for rank, _ in slots)
    assert {reply.status for reply in replies} == {"ok", "raised"}, {reply.error for reply in replies}


def test_a_schedule_whose_models_hang_is_dropped_and_its_calls_asked_without() -> None:
    made, slots = _scheduled_calls(2)
    with Runner(f"model:{FAKE}:hanging_on_packs", isolation="process", timeout=1.0) as runner:
        replies = runner.call_many(made, schedule=slots)
        assert runner.unprepared == {slots}
    assert [reply.value.tolist() for reply in replies] == [right(call) for call in made]
