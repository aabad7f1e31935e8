"""The plug-in contract: every --impl form resolves, every bad value is one clear line, the
built-in adapters build the model the contract promises and report onnxruntime honestly, and the
environment names what provides the implementation, with no local path."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import onnxruntime
import pytest

from engine import adapters
from engine.asking.loader import UsageError, describe, model_based, portable, resolve
from engine.asking.sandbox import available
from results.environment import collect, suite_state

IMPLS = Path(__file__).parent / "impls"
GOOD = IMPLS / "plugin_good.py"
MODEL = IMPLS / "model_onnxruntime.py"
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


BUILTINS = [
    ("onnxruntime", adapters.OnnxRuntimeArgMin),
    ("onnxruntime:CPUExecutionProvider", adapters.OnnxRuntimeArgMin),
    ("onnx-reference", adapters.ReferenceArgMin),
    ("openvino", adapters.OpenVinoArgMin),
    ("openvino:CPU", adapters.OpenVinoArgMin),
    ("tract", adapters.TractArgMin),
    ("backend:onnxruntime.backend", adapters.BackendArgMin),
    (f"model:{MODEL}:compile", adapters.ModelPluginArgMin),
]


@pytest.mark.parametrize(("impl", "kind"), BUILTINS)
def test_builtins(impl: str, kind: type) -> None:
    fn = resolve(impl)
    assert isinstance(fn, kind)
    assert np.asarray(fn(ROWS, opset=13, axis=1, keepdims=0)).tolist() == [1, 1]
    assert model_based(impl)


@pytest.mark.parametrize(("impl", "kind"), BUILTINS)
def test_builtins_answer_in_every_model_form(impl: str, kind: type) -> None:
    fn = resolve(impl)
    for form in ("symbolic", "static", "initializer"):
        answer = fn.answer(form, ROWS, 12, {"axis": 1, "select_last_index": 1})
        assert np.asarray(answer.value).tolist() == [[1], [2]], form


def test_model_form_with_a_module_name(impls_on_path: None) -> None:
    fn = resolve("model:model_onnxruntime:compile")
    assert np.asarray(fn(ROWS, opset=13, axis=0)).tolist() == [[1, 1, 1]]


@pytest.mark.parametrize("function", ["refuse", "refuse_to_run"])
def test_model_plugin_not_implemented_from_either_call_is_unsupported(function: str) -> None:
    fn = resolve(f"model:{MODEL}:{function}")
    with pytest.raises(NotImplementedError):
        fn(ROWS, opset=13)


def _quick_13(impl: str, folder: Path) -> dict[int, tuple[str, list[str]]]:
    """Each version's verdict and types not implemented, from a quick ArgMin-13 run of ``impl``."""
    subprocess.run([sys.executable, "-m", "suites", "--impl", impl, "--versions", "13", "--profile", "quick",
                    "--seed", "7", "--report-dir", str(folder)], cwd=IMPLS.parent.parent, capture_output=True,
                   timeout=600, check=False)
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return {v["version"]: (v["verdict"], v["scope"]["not_implemented"]) for v in report["versions"]}


@pytest.mark.e2e
def test_the_readme_model_plugin_gives_the_builtins_verdicts(tmp_path: Path) -> None:
    """README's model-level example is judged as the built-in onnxruntime: onnxruntime's own "not
    implemented" (its NotImplemented, not a NotImplementedError) makes a type not implemented,
    where left untranslated it failed C1 as a valid input refused."""
    plugin = _quick_13(f"model:{MODEL}:compile", tmp_path / "plugin")
    assert plugin == _quick_13("onnxruntime", tmp_path / "builtin")
    assert plugin[13][0] == "conformant" and "uint16" in plugin[13][1], plugin


def test_model_plugin_that_returns_no_callable_is_a_rejection_not_unsupported() -> None:
    fn = resolve(f"model:{MODEL}:not_a_callable")
    with pytest.raises(TypeError, match="not a callable"):
        fn(ROWS, opset=13)


def test_plain_function_plugins_have_no_model_forms() -> None:
    assert not model_based("plugin_good:argmin") and not model_based(f"{GOOD}:argmin")


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
    ("openvino:", "names no device", "openvino:CPU"),
    ("openvino:NPU7", "OpenVINO has no device 'NPU7'", "use one of: CPU"),
    ("model:", "has no ':function' part", "model:MODULE_OR_PATH:FUNCTION"),
    ("model:plugin_good", "has no ':function' part", "model:MODULE_OR_PATH:FUNCTION"),
    ("model::compile", "both parts of model:MODULE_OR_PATH:FUNCTION must be non-empty", "openvino[:DEVICE]"),
    ("model:no/such/file.py:compile", "does not exist", "relative to the current directory"),
    ("model:argmin_no_such_module_xyz:compile", "does not import", "install it"),
    ("openvino@2023.0.0", "supports openvino 2023.1.0 and later", "pick a release from 2023.1.0 on"),
    ("onnxruntime@1.15.1", "supports onnxruntime 1.16.0 and later", "pick a release from 1.16.0 on"),
    ("openvino@", "'' is not a release number", "openvino@2023.1.0"),
    ("openvino:CPU@latest", "'latest' is not a release number", "openvino@2023.1.0"),
    ("backend:plugin_good@1.0", "has no release to pick", "install the release you want with --install"),
    (f"onnxruntime@{onnxruntime.__version__}.1", f"onnxruntime {onnxruntime.__version__} is installed here",
     "`nox -s conformance`, which installs that release"),
])
def test_usage_errors_are_one_line(impls_on_path: None, impl: str, problem: str, fix: str) -> None:
    with pytest.raises(UsageError) as raised:
        resolve(impl)
    message = str(raised.value)
    assert "\n" not in message
    assert impl in message
    assert problem in message
    assert fix in message


@pytest.mark.parametrize(("impl", "runtime"), [("openvino", "openvino"), ("openvino:CPU", "openvino"),
                                                ("tract", "tract"), ("onnxruntime", "onnxruntime")])
def test_a_missing_runtime_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch, impl: str, runtime: str) -> None:
    monkeypatch.setitem(sys.modules, runtime, None)  # makes `import runtime` fail
    with pytest.raises(UsageError) as raised:
        resolve(impl)
    message = str(raised.value)
    assert "\n" not in message and f"needs {runtime}" in message
    assert "nox -s conformance" in message and f"pip install {runtime}" in message


def test_import_error_message_is_kept_on_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "multi.py"
    bad.write_text("raise ImportError('first line\\nsecond line')\n")
    with pytest.raises(UsageError, match="ImportError: first line second line") as raised:
        resolve(f"{bad}:f")
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(("source", "problem"), [
    ("def argmin(data, axis=0):\n    return data\n", "got an unexpected keyword argument 'opset'"),
    ("def argmin(data, extra, *, opset, **attributes):\n    return data\n", "missing a required argument: 'extra'"),
    ("def argmin(data, *, opset, axis=0, keepdims=1):\n    return data\n",
     "got an unexpected keyword argument 'select_last_index'"),
    ("def argmin(*, opset, **attributes):\n    return None\n", "too many positional arguments"),
    ("import numpy\nargmin = numpy.argmin\n", "got an unexpected keyword argument 'opset'"),
])
def test_a_function_that_cannot_take_the_contract_call_stops_the_run(tmp_path: Path, source: str,
                                                                      problem: str) -> None:
    plugin = tmp_path / "wrong_signature.py"
    plugin.write_text(source, encoding="utf-8")
    with pytest.raises(UsageError) as raised:
        resolve(f"{plugin}:argmin")
    message = str(raised.value)
    assert "\n" not in message and problem in message
    assert "cannot be called as fn(data, *, opset, axis, keepdims, select_last_index)" in message
    assert message.endswith("define it as def argmin(data, *, opset, **attributes)")


@pytest.mark.parametrize("source", [
    "def argmin(data, *, opset, **attributes):\n    return data\n",
    "def argmin(data, opset, axis=0, keepdims=1, select_last_index=0, *, extra=None):\n    return data\n",
    "def argmin(*args, **kwargs):\n    return args[0]\n",
    "class _Impl:\n    def __call__(self, data, *, opset, **attributes):\n        return data\nargmin = _Impl()\n",
    "import functools\nargmin = functools.partial(lambda data, *, opset, **attributes: data)\n",
    "import math\nargmin = math.hypot  # a builtin without a signature: let through\n",
])
def test_a_function_that_takes_the_contract_call_resolves(tmp_path: Path, source: str) -> None:
    plugin = tmp_path / "right_signature.py"
    plugin.write_text(source, encoding="utf-8")
    assert callable(resolve(f"{plugin}:argmin"))


# --- describe and portable -----------------------------------------------------------------

@pytest.mark.parametrize(("impl", "module", "distribution", "device"), [
    ("onnxruntime", "onnxruntime", "onnxruntime", "CPUExecutionProvider"),
    ("onnx-reference", "onnx.reference", "onnx", None),
    ("openvino", "openvino", "openvino", "CPU"),
    ("tract", "tract", "tract", "CPU"),
    ("backend:onnxruntime.backend", "onnxruntime.backend", "onnxruntime", "CPU"),
])
def test_describe_builtins(impl: str, module: str, distribution: str, device: str | None) -> None:
    found = describe(impl)
    assert (found["module"], found["distribution"], found["device"]) == (module, distribution, device)
    assert found["version"] == importlib.metadata.version(distribution)


def test_describe_openvino_records_what_decides_its_precision() -> None:
    properties = describe("openvino")["device_properties"]
    assert properties["full_device_name"] and properties["inference_precision_hint"]


def test_describe_a_file_plugin_lists_what_it_uses_but_never_gives_its_version_as_its_own(tmp_path: Path) -> None:
    """A file plug-in has no distribution of its own, and the version of a package it imports is
    not its version: the runtime its code uses comes first among its distributions, and the
    certificate says "version not stated"."""
    plugin = tmp_path / "my_ort_plugin.py"
    plugin.write_text("import numpy as np\nfrom onnxruntime import InferenceSession\n\n"
                      "def argmin(data, *, opset, **attributes):\n    return np.argmin(data)\n")
    found = describe(f"{plugin}:argmin")
    assert (found["module"], found["distribution"], found["version"]) == ("my_ort_plugin.py", None, None)
    assert found["distributions"] == {"onnxruntime": onnxruntime.__version__, "numpy": np.__version__}
    assert next(iter(found["distributions"])) == "onnxruntime"


@pytest.mark.parametrize(("source", "version", "how"), [
    ("__version__ = '2.1.0'\n", "2.1.0", "__version__"),
    ("def version():\n    return '3.0-rc1'\n", "3.0-rc1", "version()"),
    ("__version__ = 'a\\x1b[31m\\nb'\n", "a?[31m b", "__version__"),  # the plug-in's text, made printable
    ("def version():\n    raise OSError('no')\n", None, None),
    ("__version__ = 7\n", None, None),
])
def test_a_plugin_states_its_own_version(source: str, version: str | None, how: str | None, tmp_path: Path) -> None:
    plugin = tmp_path / "stating.py"
    plugin.write_text("import numpy as np\n" + source + "def argmin(data, *, opset, **attributes):\n"
                      "    return np.argmin(data)\n")
    found = describe(f"{plugin}:argmin")
    assert (found["version"], found["version_stated_by"]) == (version, how)


def test_describe_user_code(impls_on_path: None) -> None:
    resolve(f"{GOOD}:argmin")
    resolve("plugin_good:argmin")
    by_path = describe(f"{GOOD}:argmin")
    assert (by_path["module"], by_path["distribution"], by_path["version"]) == ("plugin_good.py", None, None)
    assert describe("plugin_good:argmin")["module"] == "plugin_good"
    model = describe(f"model:{MODEL}:compile")
    assert (model["module"], model["distribution"], model["version"]) == ("model_onnxruntime.py", None, None)
    assert "onnxruntime" in model["distributions"]


@pytest.mark.parametrize("impl", ["onnxruntime", "tract", f"{GOOD}:argmin", f"model:{MODEL}:compile"])
def test_the_environment_holds_no_local_path(impl: str) -> None:
    text = json.dumps(collect(describe(impl), suite_state(), available().record()))
    for local in (str(IMPLS), str(Path(sys.executable).parent), sys.prefix, str(Path.home())):
        assert local not in text, local


def test_describe_raises_the_same_usage_errors() -> None:
    with pytest.raises(UsageError, match="has no ':function' part"):
        describe("foo")


def test_portable_makes_only_paths_absolute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(IMPLS.parent)
    assert portable("impls/plugin_good.py:argmin") == f"{GOOD.resolve()}:argmin"
    assert portable("model:impls/model_onnxruntime.py:compile") == f"model:{MODEL.resolve()}:compile"
    for impl in ("onnxruntime", "onnxruntime:CPUExecutionProvider", "backend:onnxruntime.backend",
                 "onnx-reference", "plugin_good:argmin", "openvino:GPU.0", "tract", "model:plugin_good:compile"):
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


def test_model_forms_static_shape_and_initializer() -> None:
    data = np.array([[3, 1, 2]], ml_dtypes.bfloat16)
    static = adapters.form_model("static", data, 13, {"axis": 1})
    assert [d.dim_value for d in static.graph.input[0].type.tensor_type.shape.dim] == [1, 3]
    constant = adapters.form_model("initializer", data, 13, {"axis": 1})
    assert list(constant.graph.input) == [] and [i.name for i in constant.graph.initializer] == [adapters.INPUT]
    folded = onnx.numpy_helper.to_array(constant.graph.initializer[0])
    assert folded.dtype == data.dtype and folded.tobytes() == data.tobytes()  # the exact bits, as bfloat16
    for model in (static, constant):
        onnx.checker.check_model(model)
        assert _node_attributes(model) == {"axis": 1}
    old_opset = adapters.form_model("initializer", data.astype(np.float32), 1, {})
    onnx.checker.check_model(old_opset)  # IR 4 at least: a constant, not a graph input's default


def test_one_compiled_model_per_rank_per_shape_per_input() -> None:
    fn = adapters.OnnxRuntimeArgMin()
    first, second = np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)
    for form, compiles in (("symbolic", 1), ("static", 2), ("initializer", 3)):
        before = fn.compiles
        for data in (first, second, np.zeros((4, 3), np.float32)):
            fn.answer(form, data, 13, {})
        assert fn.compiles - before == compiles, form  # the initializer form is never cached


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
        built.append(build(*args))
        return built[-1]

    build = adapters.form_model
    monkeypatch.setattr(adapters.compiled, "form_model", spy)
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
    assert fn.compiles == 1
    fn(np.zeros((2, 2, 2), np.float32), opset=13, axis=-1)
    assert fn.compiles == 2


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
    mapped = adapters.from_onnxruntime(status.NotImplemented("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : no kernel"))
    assert isinstance(mapped, NotImplementedError)
    assert isinstance(adapters.from_onnxruntime(status.InvalidGraph("bad")), adapters.OnnxRuntimeError)
    plain = ValueError("not from onnxruntime")
    assert adapters.from_onnxruntime(plain) is plain


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
