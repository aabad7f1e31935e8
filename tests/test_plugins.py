"""The plug-in contract: every --impl form resolves, every bad value is one clear line, and the
built-in adapters build the model the contract promises and report onnxruntime honestly."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import onnxruntime
import pytest

from engine import adapters
from engine.plugins import UsageError, describe, portable, resolve

IMPLS = Path(__file__).parent / "impls"
GOOD = IMPLS / "plugin_good.py"
ROWS = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, -1.0]], dtype=np.float32)  # a tie in the second row


@pytest.fixture
def impls_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(IMPLS))


# --- resolve: every form -------------------------------------------------------------------

def test_module_form(impls_on_path: None) -> None:
    import plugin_good

    assert resolve("plugin_good:argmin") is plugin_good.argmin


def test_path_form_relative_and_absolute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(IMPLS.parent)
    relative = resolve("impls/plugin_good.py:argmin")
    absolute = resolve(f"{GOOD}:argmin")
    assert relative is absolute  # the same file is imported once
    assert relative(ROWS, opset=13, axis=1).tolist() == [[1], [1]]


def test_path_form_files_with_the_same_name_stay_apart(tmp_path: Path) -> None:
    other = tmp_path / "plugin_good.py"
    other.write_text("def argmin(data, *, opset, **attributes):\n    return 'other'\n")
    assert resolve(f"{other}:argmin")(ROWS, opset=13) == "other"
    assert resolve(f"{GOOD}:argmin")(ROWS, opset=13).tolist() == [[1, 1, 1]]


@pytest.mark.parametrize(("impl", "kind"), [
    ("onnxruntime", adapters.OnnxRuntimeArgMin),
    ("onnxruntime:CPUExecutionProvider", adapters.OnnxRuntimeArgMin),
    ("onnx-reference", adapters.ReferenceArgMin),
    ("backend:onnxruntime.backend", adapters.BackendArgMin),
])
def test_builtins(impl: str, kind: type) -> None:
    fn = resolve(impl)
    assert isinstance(fn, kind)
    assert np.asarray(fn(ROWS, opset=13, axis=1, keepdims=0)).tolist() == [1, 1]


# --- resolve: one-line errors --------------------------------------------------------------

@pytest.mark.parametrize(("impl", "problem", "fix"), [
    ("foo", "has no ':function' part", "use module:function, path.py:function"),
    ("plugin_good:", "must be non-empty", "use module:function"),
    ("argmin_no_such_module_xyz:argmin", "No module named 'argmin_no_such_module_xyz'", "install it"),
    (f"{IMPLS / 'plugin_broken.py'}:argmin", "No module named 'argmin_conformance_missing_dependency'", "install"),
    ("plugin_good:missing", "has no attribute 'missing'", "callables there: argmin, echo, identity, scribble"),
    ("plugin_good:NOT_CALLABLE", "is a int, not callable", "fn(data, *, opset, **attributes)"),
    ("no/such/file.py:argmin", "does not exist", "relative to the current directory"),
    ("onnxruntime:NoSuchExecutionProvider", "no execution provider 'NoSuchExecutionProvider'",
     "CPUExecutionProvider"),
    ("backend:argmin_no_such_backend", "does not import", "install it"),
    ("backend:plugin_good", "not an ONNX Backend API module", "name one that is"),
    ("backend:", "names no module", "backend:onnxruntime.backend"),
])
def test_usage_errors_are_one_line(impls_on_path: None, impl: str, problem: str, fix: str) -> None:
    with pytest.raises(UsageError) as raised:
        resolve(impl)
    message = str(raised.value)
    assert "\n" not in message
    assert impl in message
    assert problem in message
    assert fix in message


def test_import_error_message_is_kept_on_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "multi.py"
    bad.write_text("raise ImportError('first line\\nsecond line')\n")
    with pytest.raises(UsageError, match="ImportError: first line second line") as raised:
        resolve(f"{bad}:f")
    assert "\n" not in str(raised.value)


# --- describe and portable -----------------------------------------------------------------

def test_describe_builtins() -> None:
    for impl in ("onnxruntime", "onnx-reference", "backend:onnxruntime.backend"):
        resolve(impl)  # describe reads what loading the implementation imported
    ort = describe("onnxruntime")
    assert (ort["module"], ort["version"]) == ("onnxruntime", onnxruntime.__version__)
    assert ort["package"] is not None and ort["package"].startswith("onnxruntime")
    ref = describe("onnx-reference")
    assert (ref["module"], ref["package"], ref["version"]) == ("onnx.reference", "onnx", onnx.__version__)
    assert describe("backend:onnxruntime.backend")["module"] == "onnxruntime.backend"


def test_describe_user_code(impls_on_path: None) -> None:
    resolve(f"{GOOD}:argmin")
    resolve("plugin_good:argmin")
    by_path = describe(f"{GOOD}:argmin")
    assert by_path["file"] == str(GOOD.resolve())
    assert (by_path["package"], by_path["version"]) == (None, None)
    by_module = describe("plugin_good:argmin")
    assert by_module["module"] == "plugin_good"
    assert Path(by_module["file"] or "").resolve() == GOOD.resolve()


def test_describe_raises_the_same_usage_errors() -> None:
    with pytest.raises(UsageError, match="has no ':function' part"):
        describe("foo")


def test_portable_makes_only_paths_absolute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(IMPLS.parent)
    assert portable("impls/plugin_good.py:argmin") == f"{GOOD.resolve()}:argmin"
    for impl in ("onnxruntime", "onnxruntime:CPUExecutionProvider", "backend:onnxruntime.backend",
                 "onnx-reference", "plugin_good:argmin"):
        assert portable(impl) == impl


# --- the model the adapters build ----------------------------------------------------------

def _node_attributes(model: onnx.ModelProto) -> dict[str, int]:
    return {a.name: onnx.helper.get_attribute_value(a) for a in model.graph.node[0].attribute}


def test_model_carries_exactly_the_attributes_set() -> None:
    assert _node_attributes(adapters.argmin_model(13, np.dtype(np.float32), 2, {})) == {}
    assert _node_attributes(adapters.argmin_model(13, np.dtype(np.float32), 2, {"select_last_index": 0})) == {
        "select_last_index": 0}


def test_model_has_symbolic_dims_of_the_rank_and_the_opset() -> None:
    model = adapters.argmin_model(11, np.dtype(ml_dtypes.bfloat16), 3, {"keepdims": 0})
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param != "" and d.dim_value == 0 for d in dims] == [True] * 3
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16
    assert model.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.INT64
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 11)]
    onnx.checker.check_model(model)  # what Backend API modules run before anything else


def test_a_dtype_onnx_cannot_hold_is_a_clear_type_error() -> None:
    with pytest.raises(TypeError, match="has no ONNX tensor element type") as raised:
        adapters.element_type(np.dtype("datetime64[s]"))
    assert "\n" not in str(raised.value)


# --- onnxruntime adapter -------------------------------------------------------------------

@pytest.fixture(scope="module")
def ort_fn() -> adapters.OnnxRuntimeArgMin:
    return adapters.OnnxRuntimeArgMin()


def test_ort_omitted_attributes_are_absent_from_the_node(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[onnx.ModelProto] = []

    def spy(*args: object) -> onnx.ModelProto:
        built.append(adapters_build(*args))
        return built[-1]

    adapters_build = adapters.argmin_model
    monkeypatch.setattr(adapters, "argmin_model", spy)
    fn = adapters.OnnxRuntimeArgMin()
    fn(ROWS, opset=12)
    fn(ROWS, opset=12, keepdims=1)
    assert [_node_attributes(m) for m in built] == [{}, {"keepdims": 1}]


def test_ort_one_session_serves_every_shape_of_a_rank() -> None:
    fn = adapters.OnnxRuntimeArgMin()
    rng = np.random.default_rng(0)
    for shape in [(2, 3), (5, 7), (1, 1), (9, 2)]:
        data = rng.standard_normal(shape).astype(np.float32)
        assert fn(data, opset=13, axis=-1).tolist() == np.argmin(data, axis=-1, keepdims=True).tolist()
    assert fn.sessions_created == 1
    fn(np.zeros((2, 2, 2), np.float32), opset=13, axis=-1)
    assert fn.sessions_created == 2


@pytest.mark.parametrize(("opset", "shape", "attributes"), [
    (13, (2, 3), {"axis": 2}),
    (13, (2, 3), {"axis": -3}),
    (11, (), {}),
    (12, (2, 3), {"select_last_index": 2, "axis": 5}),
])
def test_ort_rejects_invalid_models_every_time(ort_fn: adapters.OnnxRuntimeArgMin, opset: int,
                                               shape: tuple[int, ...], attributes: dict[str, int]) -> None:
    data = np.zeros(shape, np.float32)
    for _ in range(2):  # a cached failure is raised again, never turned into a session
        with pytest.raises(adapters.OnnxRuntimeError, match="ONNXRuntimeError"):
            ort_fn(data, opset=opset, **attributes)


def test_ort_rejects_an_undeclared_attribute(ort_fn: adapters.OnnxRuntimeArgMin) -> None:
    with pytest.raises(adapters.OnnxRuntimeError, match="select_last_index"):
        ort_fn(ROWS, opset=11, select_last_index=0)


def test_any_case_attribute_goes_on_the_node_and_onnxruntime_rejects_an_unknown_name(
        ort_fn: adapters.OnnxRuntimeArgMin) -> None:
    """C13 at every version: the built-in adapters put every attribute of a case on the NodeProto,
    so an undeclared one meets the runtime's own check (onnx.checker's 'Unrecognized attribute')."""
    node = adapters.argmin_model(13, np.dtype(np.float32), 2, {"axis": 1, "keep_dims": -5}).graph.node[0]
    assert {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute} == {"axis": 1, "keep_dims": -5}
    with pytest.raises(adapters.OnnxRuntimeError, match="Unrecognized attribute: keep_dims"):
        ort_fn(ROWS, opset=13, keep_dims=-5)


def test_ort_rejects_types_outside_t(ort_fn: adapters.OnnxRuntimeArgMin) -> None:
    with pytest.raises(adapters.OnnxRuntimeError, match="INVALID_GRAPH"):
        ort_fn(np.array([[True, False]]), opset=13)
    with pytest.raises(adapters.OnnxRuntimeError, match="INVALID_GRAPH"):
        ort_fn(np.zeros((2, 2), ml_dtypes.bfloat16), opset=12)


def test_ort_gets_bfloat16_as_bfloat16(ort_fn: adapters.OnnxRuntimeArgMin) -> None:
    """onnxruntime's numpy bridge cannot take ml_dtypes arrays: they must arrive as their own
    ONNX type, never converted to another one."""
    fed = ort_fn.feed(np.array([[3, 1, 2]], ml_dtypes.bfloat16))
    assert (fed.data_type(), fed.shape()) == ("tensor(bfloat16)", [1, 3])
    assert ort_fn.feed(ROWS) is ROWS


def test_ort_not_implemented_is_unsupported() -> None:
    status = onnxruntime.capi.onnxruntime_pybind11_state
    mapped = adapters._from_onnxruntime(status.NotImplemented("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : no kernel"))
    assert isinstance(mapped, NotImplementedError)
    assert isinstance(adapters._from_onnxruntime(status.InvalidGraph("bad")), adapters.OnnxRuntimeError)
    plain = ValueError("not from onnxruntime")
    assert adapters._from_onnxruntime(plain) is plain


@pytest.mark.parametrize("dtype", [np.int16, np.uint32, ml_dtypes.bfloat16])
def test_ort_missing_kernel_is_reported_not_hidden(ort_fn: adapters.OnnxRuntimeArgMin, dtype: type) -> None:
    """Types in T at v13 that the installed onnxruntime may lack a kernel for: either the right
    answer or NotImplementedError, never some other failure and never a converted input."""
    data = np.array([[3, 1, 2]]).astype(dtype)
    try:
        found = ort_fn(data, opset=13, axis=1)
    except NotImplementedError as exc:
        assert "NOT_IMPLEMENTED" in str(exc)
    else:
        assert found.tolist() == [[1]]


# --- onnx-reference and backend adapters ---------------------------------------------------

def test_reference_adapter() -> None:
    fn = resolve("onnx-reference")
    assert fn(ROWS, opset=12, axis=1, select_last_index=1).tolist() == [[1], [2]]
    assert fn(ROWS.astype(ml_dtypes.bfloat16), opset=13, axis=0, keepdims=0).tolist() == [1, 1, 1]


def test_backend_adapter() -> None:
    fn = resolve("backend:onnxruntime.backend")
    assert fn(ROWS, opset=12, axis=1, select_last_index=1).tolist() == [[1], [2]]
    assert fn(np.zeros((4, 1, 2), np.float32), opset=13, axis=2).shape == (4, 1, 1)
    with pytest.raises(adapters.OnnxRuntimeError, match="axis"):
        fn(ROWS, opset=13, axis=2)
