"""The runtime registry (engine.runtimes): every reader takes its facts from the one entry per
runtime, and the built-ins TVM, tinygrad and IREE answer in every model form with every
distribution, device and configuration that decides their answers in the environment."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine import runtimes
from engine.asking.loader import _GRAMMAR, UsageError, check, describe, model_based, resolve, runtime_distributions
from engine.config.options import OPTIONS
from engine.contract.forms import FORMS
from reports.document.certificate import device

ROOT = Path(__file__).resolve().parent.parent
ROWS = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, -1.0]], dtype=np.float32)  # a tie in the second row


def installed(word: str) -> bool:
    """The runtime imports here (and tinygrad's CPU device finds its C compiler)."""
    runtime = runtimes.BY_WORD[word]
    compiler = word != "tinygrad" or shutil.which(os.environ.get("CC", "clang")) is not None
    return compiler and importlib.util.find_spec(runtime.module.split(".")[0]) is not None


def needs(word: str) -> pytest.MarkDecorator:
    wanted = " ".join(runtimes.BY_WORD[word].distributions) + (" and clang" if word == "tinygrad" else "")
    return pytest.mark.skipif(not installed(word), reason=f"{word} needs {wanted}, not installed here")


NEW = [pytest.param(word, marks=needs(word)) for word in ("tvm", "tinygrad", "iree")]


def test_every_reader_names_every_runtime() -> None:
    impl_help = next(text for name, _, text, _ in OPTIONS if name == "--impl")
    for runtime in runtimes.RUNTIMES:
        assert runtime.usage in _GRAMMAR and runtime.usage in impl_help
        assert model_based(runtime.example or runtime.word)
    assert runtimes.find("openvino:GPU.1")[1] == "GPU.1" and runtimes.find("tract:x") is None
    assert runtimes.find("plugin_good:argmin") is None


def test_every_adapter_the_registry_names_exists() -> None:
    for runtime in runtimes.RUNTIMES:
        where, _, name = runtime.adapter.partition(":")
        assert callable(getattr(importlib.import_module(where), name)), runtime.adapter


def test_every_adapter_module_belongs_to_exactly_one_entry() -> None:
    """The registry names each runtime's adapter: no adapter module is left without an entry (or
    paired only by its file name), and none serves two entries. ``model:`` plug-ins are loaded by
    the --impl loader itself, not through an entry."""
    named = [runtime.adapter.partition(":")[0].rpartition(".")[2] for runtime in runtimes.RUNTIMES]
    modules = {p.stem for p in (Path(runtimes.__file__).parent.parent / "adapters").glob("run_*.py")}
    assert sorted(named) == sorted(set(named)), "an adapter module serves two entries"
    assert modules - set(named) == {"run_model"}, modules - set(named)


def test_the_provider_name_is_spelled_once() -> None:
    """CPUExecutionProvider is written in engine/runtimes/onnxruntime.py and nowhere else of the suite's code
    (the tests and the docs' plug-in, a user's file, are not the suite's)."""
    found = subprocess.run(["git", "grep", "-l", "CPUExecutionProvider", "--", "*.py", ":!tests", ":!docs"], cwd=ROOT,
                           capture_output=True, text=True, check=False).stdout.split()
    assert found == ["engine/runtimes/onnxruntime.py"]


def test_distributions_to_install() -> None:
    assert runtime_distributions("iree") == ("iree-base-runtime", "iree-base-compiler")
    assert runtime_distributions("openvino:GPU") == ("openvino",)
    assert runtime_distributions("tvm") == ("apache-tvm",)
    assert runtime_distributions("plugin_good:argmin") == () == runtime_distributions("backend:x")


@pytest.mark.parametrize(("impl", "expected"), [
    ("openvino@2023.1.0", ("openvino==2023.1.0", "numpy<2")),  # built against numpy 1.x
    ("openvino:GPU@2026.4.1", ("openvino==2026.4.1",)),
    ("onnxruntime@1.16", ("onnxruntime==1.16", "numpy<2")),
    ("onnxruntime:CPUExecutionProvider@1.19.0", ("onnxruntime==1.19.0",)),
    ("iree@3.13.0", ("iree-base-runtime==3.13.0", "iree-base-compiler==3.13.0")),  # released together
])
def test_a_release_after_the_word_pins_every_distribution(impl: str, expected: tuple[str, ...]) -> None:
    check(impl)
    assert runtime_distributions(impl) == expected


@pytest.mark.parametrize(("impl", "parts"), [
    ("openvino:CPU@2024.4.0", ("openvino:CPU", "2024.4.0")),
    ("tract@0.21.7", ("tract", "0.21.7")),
    ("tract", ("tract", None)),
    ("/home/me@work/impl.py:argmin", ("/home/me@work/impl.py:argmin", None)),  # a plug-in's path keeps its "@"
    ("mine@2:argmin", ("mine@2:argmin", None)),
])
def test_only_a_built_in_word_takes_a_release(impl: str, parts: tuple[str, str | None]) -> None:
    assert runtimes.split_release(impl) == parts
    assert (runtimes.find(impl) is not None) == impl.startswith(("openvino", "tract"))


def test_every_built_in_declares_its_oldest_release() -> None:
    assert all(runtime.oldest for runtime in runtimes.BUILT_IN)
    assert runtimes.BY_WORD["backend"].oldest is None


def test_the_certificate_names_a_built_ins_default_device() -> None:
    assert device({}, "onnxruntime") == "CPUExecutionProvider" and device({}, "openvino:GPU") == "GPU"
    assert device({}, "openvino") == "CPU" and device({}, "tract") is None and device({}, "backend:m") is None


@pytest.mark.parametrize("word", ["tvm", "tinygrad", "iree"])
def test_a_missing_runtime_is_one_line_naming_what_to_install(word: str, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = runtimes.BY_WORD[word]
    monkeypatch.setitem(sys.modules, runtime.module, None)  # as if not installed
    with pytest.raises(UsageError, match=f"needs {' '.join(runtime.distributions)}.*pip install") as raised:
        resolve(word)
    assert "\n" not in str(raised.value)


def test_options_on_runtimes_without_one_are_not_built_ins() -> None:
    with pytest.raises(UsageError, match="both parts of module:function must be non-empty"):
        check("iree:")


@pytest.mark.parametrize("word", NEW)
def test_new_built_ins_answer_in_every_form(word: str) -> None:
    fn = resolve(word)
    for form in FORMS:
        assert np.asarray(fn.answer(form, ROWS, 12, {"axis": 1}).value).tolist() == [[1], [1]], form
        assert np.asarray(fn.answer(form, ROWS, 13, {"axis": 0, "keepdims": 0}).value).tolist() == [1, 1, 1], form


@pytest.mark.parametrize("word", NEW)
def test_one_symbolic_model_serves_every_shape_of_its_rank(word: str) -> None:
    """tinygrad's runner binds symbolic dimensions to the first shape it sees unless told not to."""
    fn = resolve(word)
    assert np.asarray(fn(ROWS, opset=13, axis=1)).tolist() == [[1], [1]]
    longer = np.array([[5, 4, 3, 2, 1], [1, 2, 3, 4, 5], [2, 2, 0, 2, 2]], np.float32)
    assert np.asarray(fn(longer, opset=13, axis=1)).tolist() == [[4], [0], [2]]
    assert fn.compiles == 1


@pytest.mark.parametrize(("word", "configuration"), [
    pytest.param("tvm", {"target": "llvm"}, marks=needs("tvm")),
    pytest.param("tinygrad", {"DEV": "CPU"}, marks=needs("tinygrad")),
    pytest.param("iree", {"compiler_flags": "--iree-llvmcpu-target-cpu=host --iree-input-demote-f64-to-f32=false"},
                 marks=needs("iree")),
])
def test_the_environment_names_every_distribution_the_device_and_the_configuration(
        word: str, configuration: dict[str, str]) -> None:
    found = describe(word)
    runtime = runtimes.BY_WORD[word]
    assert found["distribution"] == runtime.distributions[0] and found["device"] == "CPU"
    assert found["distributions"] == {name: importlib.metadata.version(name) for name in runtime.distributions}
    assert configuration.items() <= found["configuration"].items()


@needs("tinygrad")
def test_tinygrad_reads_every_model_from_a_file_of_its_own() -> None:
    """tinygrad keeps a file it read mapped at its first size while a runner built from it lives:
    a longer model written to the same path then fails to load ("can't reopen Disk tensor with
    larger size"), an error of the adapter that the suite once reported as C1 on float and int32."""
    fn = resolve("tinygrad")
    paths = []
    runner = fn._runner
    fn._runner = lambda path: paths.append(path) or runner(path)
    fn(ROWS, opset=13, axis=1)
    fn(np.zeros((1,) * 7, np.float32), opset=13, axis=-7, keepdims=1, select_last_index=0)
    assert len(set(paths)) == 2


@needs("tinygrad")
def test_tinygrad_records_its_c_compiler() -> None:
    assert describe("tinygrad")["configuration"]["compiler"]


@needs("iree")
def test_iree_keeps_doubles_as_doubles() -> None:
    """Without --iree-input-demote-f64-to-f32=false IREE would compare these at float32, where they are equal."""
    assert np.asarray(resolve("iree")(np.array([1.0, 1 - 1e-12]), opset=13)).tolist() == [1]
