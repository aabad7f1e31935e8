"""Every failure asked again where a vendor runs its replay, a fresh worker process
(engine.judging.reproduce), and its card saying which of three it is, with fake runtimes whose
answers depend on their process:

- a plug-in wrong the first time a process asks it an input, right when asked again
  (tests/impls/plugin_flaky.py's ``first_ask``): it reproduces alone, and against a baseline that
  does not hold it, it is new (exit status 1);
- a runtime wrong only right after a one-node model with keepdims=0 (tests/impls/model_state.py's
  ``wrong_after_keepdims_0``): it needs history, that one model in its card, and both its snippets
  run it first and fail as files;
- a runtime wrong at random one time in ten (``wrong_at_random``): flaky, its wrong and its right
  answer in the card."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from engine.asking.calls import Node, Reply
from engine.asking.history import MODELS, History, Ran
from engine.asking.isolation import Runner
from engine.asking.loader import portable
from engine.config.options import run_info, validate
from engine.judging.reproduce import TRIALS, Failed, Reproducer, shortest
from engine.judging.run import run_all
from engine.judging.session import Nonconformance, Session
from generators import Case
from reports.document.aggregate import aggregate
from reports.document.replay import _values_literal, snippet, standalone
from reports.folders import baseline
from reports.folders.verify import verify
from reports.pages.render import render_report
from results import RawRun
from results.outcomes import OK
from results.records import FLAKY, NEEDS_HISTORY, REPRODUCE, REPRODUCES_ALONE

CHECKOUT = Path(__file__).resolve().parent.parent
STATE = "model:tests/impls/model_state.py"


def _run_file(script: str, folder: Path) -> subprocess.CompletedProcess:
    """A snippet saved as a file and run from the checkout (the suite's import path, which the
    model plug-ins under tests/ need too), in a process of its own."""
    path = folder / "snippet.py"
    path.write_text(script, encoding="utf-8")
    return subprocess.run([sys.executable, str(path)], cwd=CHECKOUT, capture_output=True, text=True, timeout=300,
                          check=False, env={"PYTHONPATH": str(CHECKOUT), "PATH": "/usr/bin:/bin"})


# --- the history a worker keeps, and the shortest part of it a failure needs ---------------------

def _ran(number: int) -> Ran:
    return Ran(13, "static", node=Node(np.full(3, number, np.float32), {}))


def test_a_history_holds_the_last_models_within_its_bounds() -> None:
    history = History()
    befores = [history.add(_ran(n), 3) for n in range(MODELS + 6)]
    assert befores[0] == () and befores[5][-1].node.data[0] == 4
    assert len(befores[-1]) == MODELS and befores[-1][0].node.data[0] == 5, "the oldest ones go"
    small = History(elements=10)
    small.add(_ran(0), 6)
    assert [r.node.data[0] for r in small.add(_ran(1), 6)] == [0] and small.add(_ran(2), 6)[0].node.data[0] == 1
    history.restart()
    assert history.add(_ran(99), 3) == (), "a new worker has run nothing"


def test_each_reply_carries_the_models_its_worker_ran_before_it(tmp_path: Path) -> None:
    calls = [(np.array([3.0, 1.0, float(n)], np.float32), 13, {}, "static") for n in range(4)]
    with Runner(f"{STATE}:wrong_at_random", isolation="process") as runner:
        first = runner.call_many(calls[:2])
        second = runner.call_many(calls[2:])
        assert [len(reply.before) for reply in first + second] == [0, 1, 2, 3]
        assert second[1].before[-1].node.data is calls[2][0], "the calls' own arrays, in the order they ran"
        runner.fresh()
        assert runner.call_many(calls[:1])[0].before == (), "a fresh worker has run nothing"


def test_the_shortest_history_keeps_the_models_a_failure_needs() -> None:
    """The one model it needs, from the last 64: found in a few trials; two models far apart: both,
    in their order; none after which it fails: no history."""
    history = [_ran(n) for n in range(MODELS)]
    asked = []

    def needs(*numbers: int):
        def fails_after(models):
            asked.append(len(models))
            held = [int(m.node.data[0]) for m in models]
            return Reply(OK, np.array([1]), None, 0.0) if all(n in held for n in numbers) else None
        return fails_after

    kept, wrong, left = shortest(history, needs(17), TRIALS)
    assert [m.node.data[0] for m in kept] == [17] and wrong.value.tolist() == [1] and left > 0
    assert asked[0] == MODELS and len(asked) <= 20, asked
    kept, _, _ = shortest(history, needs(3, 50), TRIALS)
    assert [m.node.data[0] for m in kept] == [3, 50]
    assert shortest(history, needs(99), TRIALS) is None and shortest(history, needs(17), 0) is None


class _RandomRunner:
    """A runner whose every worker answers a model wrong one time in ten (1 where 0 is right)."""

    def __init__(self, draw: random.Random) -> None:
        self.draw, self.timeout = draw, 1.0

    def load(self) -> dict:
        return {}

    def fresh(self) -> None:
        pass

    def close(self) -> None:
        pass

    def call_many(self, calls, units=None, exact=False) -> list[Reply]:
        return [Reply(OK, np.array([int(self.draw.random() < 0.1)]), None, 0.0) for _ in calls]


def test_a_runtime_wrong_at_random_is_a_flake_in_all_but_a_few_failures() -> None:
    """Of 200 failures of a runtime wrong at random one time in ten, each found answered two ways,
    at least 190 read as flakes, each with a right answer beside the wrong one: the others failed
    in every worker they were asked alone in, or after a history in three workers in a row, as
    wrong answers at random do about 2 and 1 times in 100."""
    draw = random.Random(7)
    reproducer = Reproducer(lambda: _RandomRunner(draw))
    history = tuple(_ran(n) for n in range(8))
    failed = Failed(13, "static", (Node(np.array([2.0, 1.0]), {}),), 0, history)
    found = [reproducer.reproduce(failed, lambda reply: reply.value.tolist() != [0], 1.0, steady=False)
             for _ in range(200)]
    kinds = [f.kind for f in found]
    assert kinds.count(FLAKY) >= 190, kinds
    for flake in (f for f in found if f.kind == FLAKY):
        assert flake.again.value.tolist() == [0], "a right answer beside the wrong one"
        assert flake.after is None or flake.after.value.tolist() == [0], "after its history: right, where shown"


# --- the three fake runtimes, through the suite ----------------------------------------------------

def _suite(impl: str, folder: Path, *options: str) -> tuple[subprocess.CompletedProcess, dict]:
    """A run of ``impl`` at ArgMin-13 on float, quick, in one test process; its terminal and report."""
    done = subprocess.run([sys.executable, "-m", "suites", "--impl", impl, "--versions", "13", "--dtypes", "float",
                           "--profile", "quick", "--seed", "1", "-n", "0", "--report-dir", str(folder), *options],
                          cwd=CHECKOUT, capture_output=True, text=True, timeout=900, check=False)
    return done, json.loads((folder / "report.json").read_text(encoding="utf-8"))


def test_a_plugin_wrong_only_the_first_time_reproduces_alone_and_is_new_against_a_baseline(tmp_path: Path) -> None:
    """A fresh worker, asked first, is wrong as the worker that found it was: every failure
    reproduces alone, and a baseline that does not hold them makes the run exit 1 (this plug-in
    passed the baseline gate as a flake when it was asked again in the worker that found it)."""
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"schema": baseline.SCHEMA, "failures": []}), encoding="utf-8")
    done, document = _suite("tests/impls/plugin_flaky.py:first_ask", tmp_path / "run", "--baseline", str(empty))
    assert done.returncode == 1 and "new failure: ArgMin-13" in done.stdout and "a flake" not in done.stdout, \
        done.stdout[-3000:] + done.stderr[-2000:]
    cards = [f for f in document["failures"] if f["kind"] == "semantic"]
    assert cards and all(f["counterexample"]["reproduction"] == REPRODUCES_ALONE for f in cards)
    assert all(f["counterexample"]["again"] == f["counterexample"]["actual"] for f in cards), "wrong again there"
    assert document["certificate"]["baseline"]["new"] and not document["certificate"]["baseline"]["flaky"]
    assert "Reproduces alone" in (tmp_path / "run" / "report.html").read_text(encoding="utf-8")


def test_a_runtime_wrong_after_an_earlier_model_needs_that_one_model(tmp_path: Path) -> None:
    """Wrong only right after a one-node model with keepdims=0: the failure needs history, that one
    model in its card, and both its snippets run it first and fail as files; they pass without it,
    and on a correct runtime."""
    settings = validate({"impl": f"{STATE}:wrong_after_keepdims_0", "versions": "13", "dtypes": "float",
                         "profile": "quick", "forms": "static", "packing": "off", "report_dir": str(tmp_path)})
    session = Session(settings)
    session.begin("suites/test_semantic.py::test_semantic[v13-float-static]", "static", "property")
    earlier = Case(13, np.array([[1.0, 2.0]], np.float32), {"axis": 1, "keepdims": 0})
    with pytest.raises(Nonconformance):
        session.check_all([earlier, Case(13, np.array([3.0, 1.0, 2.0], np.float32), {})], "property")
    session.found()
    session.close()
    result = session.results[-1]
    ce = result.counterexample
    assert ce.reproduction == NEEDS_HISTORY and len(ce.history) == 1, ce.reproduction
    model, = ce.history
    assert len(model.nodes) == 1 and model.nodes[0].attributes == earlier.attributes and model.form == "static"
    assert ce.again != ce.actual and ce.after_history == ce.actual, "right alone, wrong after it"
    document = aggregate(RawRun(run_info(settings, time.time()), {}, session.results, session.census))
    shown = [document["failures"][card["representative"]]["counterexample"] for card in document["cards"]]
    assert any(ce["reproduction"] == NEEDS_HISTORY for ce in shown), "on a card of its own, shown in full"
    assert "History it needs" in render_report(document)
    for impl, history, fails in ((f"{STATE}:wrong_after_keepdims_0", ce.history, True),
                                 (f"{STATE}:wrong_after_keepdims_0", None, False),
                                 ("model:tests/impls/model_packing.py:correct", ce.history, False)):
        shown = replace(ce, history=history)
        for script in (snippet(portable(impl), 13, shown, clause=result.clause, form=result.form),
                       standalone(portable(impl), 13, shown, clause=result.clause, form=result.form)):
            ran = _run_file(script, tmp_path)
            failed = ran.returncode != 0 and "AssertionError" in ran.stderr
            assert failed == fails, (impl, history, ran.stderr[-2000:])


@pytest.mark.e2e
def test_every_card_of_a_runtime_wrong_after_an_earlier_model_needs_it(tmp_path: Path) -> None:
    """Through the suite: every card of that runtime, packed-only ones included (their packs made
    small after the model they need), needs that one model, and its snippets fail as files; verify
    holds each card to its evidence; the run block counts what the fresh workers compiled apart."""
    done, document = _suite(f"{STATE}:wrong_after_keepdims_0", tmp_path / "run", "--forms", "static")
    assert done.returncode == 1 and "asking failures again in fresh workers" in done.stdout, done.stdout[-3000:]
    assert any(row["suite"] == REPRODUCE and row["compiles"] for row in document["run"]["model_usage"])
    cards = [f for f in document["failures"] if f["kind"] == "semantic"]
    assert any(f["packed"] for f in cards)
    for card in cards:
        ce = card["counterexample"]
        assert ce["reproduction"] == NEEDS_HISTORY and len(ce["history"]) == 1, (card["anchor"], ce["reproduction"])
        model, = ce["history"]
        assert len(model["nodes"]) == 1 and model["nodes"][0]["attributes"].get("keepdims") == 0
        for script in (card["replay"], card["standalone"]):
            ran = _run_file(script, tmp_path)
            assert ran.returncode != 0 and "AssertionError" in ran.stderr, (card["anchor"], ran.stderr[-2000:])
    assert {check.name: check.ok for check in verify(tmp_path / "run")}["flakes"]


@pytest.mark.e2e
def test_a_runtime_wrong_at_random_reports_flakes_with_both_answers(tmp_path: Path) -> None:
    """Through the suite, a runtime wrong at random one time in ten: its failures are flakes, each
    card with its wrong answer and a right one; a flake is no pass: against a baseline that does
    not hold it, it is new."""
    raw = run_all(validate({"impl": f"{STATE}:wrong_at_random", "versions": "13", "dtypes": "float",
                            "profile": "quick", "seed": "1", "forms": "static", "report_dir": str(tmp_path)}))
    document = aggregate(RawRun(run_info(raw.settings, time.time()), {}, raw.results, raw.census))
    flakes = [f for f in document["failures"] if f["counterexample"] and f["counterexample"]["flaky"]]
    assert flakes, "a wrong answer at random comes again alone about twice in a hundred failures"
    for card in flakes:
        ce = card["counterexample"]
        assert ce["reproduction"] == FLAKY and ce["again"] != ce["actual"] and ce["again"]["values"]
    compared = baseline.compare(document, "empty", {})
    assert compared["flaky"] and set(compared["flaky"]) <= set(compared["new"])
    assert {cause["status"] for cause in compared["causes"]} <= {"new", "flaky"}
    assert any(line.startswith("  new failure, a flake") for line in baseline.lines(compared))
    assert "Flaky: asked again" in render_report(document)


def test_a_periodic_input_is_written_as_its_pattern_once() -> None:
    values = ["-inf", "3.4028235e+38"] * 512 + ["-inf"]
    literal = _values_literal(values)
    assert literal.count("\n") < 3 and eval(literal) == values, literal
    assert eval(_values_literal(["1.0"])) == ["1.0"] and not eval(_values_literal([]))
    mixed = [str(v) for v in range(40)]
    assert eval(_values_literal(mixed)) == mixed
