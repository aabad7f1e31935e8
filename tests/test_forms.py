"""Model forms: model-based implementations get the same kinds of cases as a model with symbolic
input dimensions, with the static input shape and with the input as a constant; each form is a
result of its own, at a bounded share of the budget. The output shape a runtime declares (and
onnx.shape_inference's) is held to the output-shape clause."""

from __future__ import annotations

from collections import Counter

import jsonschema
import ml_dtypes
import numpy as np
import pytest

import spec
from engine import adapters
from engine.asking import isolation
from engine.asking.calls import Reply
from engine.asking.loader import UsageError
from engine.config.options import validate
from engine.config.plan import plan
from engine.contract.forms import FORMS, QUOTA_FORMS
from engine.judging.judge import judge
from engine.judging.run import run_all
from generators import Case, profiles
from generators.quotas import FORM_QUOTA
from reports import aggregate
from reports.pages.render import render_report
from results.verdict import CONFORMANT, verdicts
from tests.impls.declared_shapes import DeclaresTheInputShape
from tests.test_reports import SCHEMA


def _settings(impl: str = "onnxruntime", **options: str):
    profiles.register()
    return validate({"impl": impl, "profile": "quick", "seed": "1", "isolation": "none", **options})


# --- options and plan ------------------------------------------------------------------------

def test_model_based_implementations_run_every_form_by_default() -> None:
    assert _settings().forms == FORMS
    assert _settings("tract", forms="initializer,symbolic").forms == ("symbolic", "initializer")
    assert _settings("zoo.correct:numpy_argmin").forms is None


@pytest.mark.parametrize(("impl", "forms", "words"), [
    ("onnxruntime", "folded", ["unknown model form 'folded'", "symbolic, static, initializer"]),
    ("zoo.correct:numpy_argmin", "static", ["--forms applies to", "model:MODULE_OR_PATH:FUNCTION"]),
])
def test_bad_forms_are_one_line_usage_errors(impl: str, forms: str, words: list[str]) -> None:
    with pytest.raises(UsageError) as raised:
        _settings(impl, forms=forms)
    assert "\n" not in str(raised.value) and all(word in str(raised.value) for word in words)


def test_plan_runs_judged_suites_in_every_form_and_the_census_in_the_first() -> None:
    settings = _settings(versions="13", dtypes="float")
    assert [t.id for t in plan(settings, "property")] == ["v13-float", "v13-float-static", "v13-float-initializer"]
    assert {t.form for t in plan(settings, "rejection")} == set(FORMS)
    assert [(t.id, t.form) for t in plan(settings, "census")] == [("v13-float", "symbolic")]
    plain = _settings("zoo.correct:numpy_argmin", versions="13", dtypes="float")
    assert [(t.id, t.form) for t in plan(plain, "property")] == [("v13-float", None)]


def test_the_static_and_initializer_forms_ask_a_quota_that_covers_every_rank() -> None:
    run = run_all(_settings(versions="13", dtypes="float,int32"))
    # The floor's cases and the state twins come on top of the quota: count the others.
    generated = [r for r in run.results if r.suite == "property" and not {"family:floor", "state:twin"} & set(r.tags)]
    per_form = Counter((r.form, r.type_name) for r in generated)
    assert {form for form, _ in per_form} == set(FORMS)
    for form in QUOTA_FORMS:  # each case of these forms compiles a model of its own
        for type_name in ("float", "int32"):
            assert per_form[form, type_name] == FORM_QUOTA["quick"], (form, type_name)
            assert per_form[form, type_name] < per_form["symbolic", type_name]
            ranks = {t for r in generated if (r.form, r.type_name) == (form, type_name) for t in r.tags
                     if t.startswith("rank:")}
            assert ranks == {f"rank:{rank}" for rank in range(1, 9)}, (form, type_name, ranks)
    assert {r.form for r in run.results if r.suite == "census"} == {"symbolic"}
    assert verdicts(run.results, (13,))[13] == CONFORMANT  # onnxruntime gets float and int32 right


# --- declared output shapes -----------------------------------------------------------------

def _case(version: int, data: np.ndarray, **attributes: int) -> Case:
    return Case(version, data, attributes)


def test_judge_holds_a_declared_shape_to_the_output_shape_clause() -> None:
    vspec = spec.load(13)
    case = _case(13, np.array([[3.0, 1.0, 2.0]], np.float32), axis=1)
    right = np.array([[1]], np.int64)

    def judged(declared: tuple | None) -> tuple[str, str | None, str | None]:
        result = judge(vspec, case, Reply("ok", right, None, 0.0, declared=declared), "property", None).result
        return result.outcome, result.clause, None

    assert judged(None) == ("pass", None, None)  # declares nothing: nothing to check
    assert judged((None, 1)) == ("pass", None, None)  # symbolic lengths say nothing
    assert judged((1, 1)) == ("pass", None, None)
    assert judged((1, 3))[:2] == ("fail", vspec.clause_for_check("output-shape").id)
    assert judged((1,))[:2] == ("fail", vspec.clause_for_check("output-shape").id)  # wrong rank


def test_a_runtime_that_declares_wrong_shapes_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(isolation, "resolve", lambda impl: DeclaresTheInputShape())
    run = run_all(_settings(versions="13", dtypes="float"))
    failed = [r for r in run.results if r.outcome == "fail"]
    assert failed and {r.clause for r in failed} == {spec.load(13).clause_for_check("output-shape").id}
    assert {r.problem for r in failed} == {"declared-shape"}
    shown = [r.counterexample for r in failed if r.counterexample is not None]
    assert shown and all("declares the output shape" in ce.message for ce in shown)
    assert verdicts(run.results, (13,))[13] != CONFORMANT


SHAPES = [(3,), (2, 3), (4, 1, 5), (2, 3, 1, 2), (1, 2, 1, 2, 1, 3), (2, 0, 3)]


@pytest.mark.parametrize("version", spec.versions())
def test_onnx_shape_inference_obeys_the_output_shape_clause(version: int) -> None:
    """onnx.shape_inference declares the output shape for the onnx package (the onnx-reference
    built-in): every valid input, every form, every type of T."""
    vspec = spec.load(version)
    checked = 0
    for type_name in vspec.type_names:
        dtype = vspec.type(type_name).dtype
        for shape in SHAPES:
            data = np.zeros(shape, dtype)
            for axis in (None, 0, len(shape) - 1, -1):
                for keepdims in (None, 0, 1):
                    attributes = {k: v for k, v in (("axis", axis), ("keepdims", keepdims)) if v is not None}
                    if spec.oracle.expect(vspec, data, attributes).kind != "semantic":
                        continue
                    for form in FORMS:
                        declared = adapters.inferred_shape(adapters.form_model(form, data, version, attributes))
                        reply = Reply("ok", spec.oracle.argmin(data, (axis or 0) % len(shape),
                                                              keepdims=keepdims in (None, 1)), None, 0.0, declared)
                        result = judge(vspec, _case(version, data, **attributes), reply, "property", None).result
                        assert result.outcome == "pass", (type_name, shape, attributes, form, declared)
                        checked += 1
    assert checked > 1000


# --- reports ----------------------------------------------------------------------------------

def test_the_report_shows_each_form_as_a_result_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(isolation, "resolve", lambda impl: DeclaresTheInputShape())
    settings = _settings(versions="13", dtypes="float,bfloat16")
    session = run_all(settings)
    from engine.config.options import run_info
    from results import RawRun

    raw = RawRun(run_info(settings, 0.0), {}, session.results, session.census)
    document = aggregate(raw)
    jsonschema.Draft202012Validator(SCHEMA).validate(document)
    assert document["run"]["forms"] == list(FORMS)
    assert [(f["form"], f["version"]) for f in document["forms"]] == [(form, 13) for form in FORMS]
    assert {f["form"] for f in document["failures"]} >= {"static", "initializer"}
    html = render_report(document)
    for form in FORMS:
        assert f'data-form="{form}"' in html
    assert ml_dtypes  # bfloat16 failures (unsupported at onnxruntime) render too
