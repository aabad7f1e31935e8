"""Runs an ArgMin regression set (a report folder's ``regressions/``, or an export) against a
runtime with pytest, and nothing installed beyond onnx, numpy, pytest and the runtime:

    pytest REGRESSIONS --argmin-backend onnxruntime.backend          # an ONNX Backend API module
    pytest REGRESSIONS --argmin-model-plugin my_runtime.py:compile   # compile(model) -> callable

argmin-conformance writes this file into every set as ``conftest.py``; it imports nothing of the
suite. Each test folder of the chosen sets (``--argmin-sets``, by default failures and
must-not-crash) is one test: its model is given the inputs of ``test_data_set_0`` and every output
must equal the expected one exactly (int64, the same shape, every index); a must-not-crash test
passes when the runtime returns or raises. Such a test, and one that crashed or hung the runtime
when the suite found it, runs in a child process, so that a crash fails that test alone. One more
test checks that every test ``index.json`` lists in the chosen sets is there, so a set with no
test passes and a set missing one does not."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx.numpy_helper
import pytest

HERE = Path(__file__).resolve().parent
SETS = ("failures", "must-not-crash", "scope", "flaky", "passing")
DEFAULT_SETS = "failures,must-not-crash"
ISOLATED = ("must-not-crash",)  # sets whose every test runs in a child process
FAULTS = ("crash", "timeout")  # recorded outcomes whose tests run in a child process
DATA_SET = "test_data_set_0"
Run = Callable[[list[np.ndarray]], list[Any]]  # a compiled model: its inputs -> its outputs, in order
_RUNTIME = pytest.StashKey[Callable[[onnx.ModelProto], Run]]()


def load_runtime(backend: str | None, device: str, plugin: str | None) -> Callable[[onnx.ModelProto], Run]:
    """The runtime as a function from a model to its compiled form: an ONNX Backend API module
    (``prepare(model, device)``, then ``.run(inputs)``), or a model-level plug-in
    (``compile(model)``, a callable of the input arrays that returns the output, or every output
    in order where the model has several)."""
    if (backend is None) == (plugin is None):
        raise ValueError("name one runtime: --argmin-backend MODULE (an ONNX Backend API module) or "
                         "--argmin-model-plugin FILE.py:FUNCTION (or MODULE:FUNCTION)")
    if backend is not None:
        module = importlib.import_module(backend)

        def prepared(model: onnx.ModelProto) -> Run:
            rep = module.prepare(model, device=device)
            return lambda inputs: list(rep.run(inputs))
        return prepared
    where, _, name = plugin.rpartition(":")
    if not where or not name:
        raise ValueError(f"--argmin-model-plugin {plugin!r}: give FILE.py:FUNCTION or MODULE:FUNCTION")
    if where.endswith(".py"):
        found = importlib.util.spec_from_file_location(Path(where).stem, where)
        if found is None or found.loader is None:
            raise ValueError(f"--argmin-model-plugin {plugin!r}: {where} cannot be loaded")
        module = sys.modules[found.name] = importlib.util.module_from_spec(found)
        found.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    compile_model = getattr(module, name)

    def compiled(model: onnx.ModelProto) -> Run:
        run = compile_model(model)
        if len(model.graph.output) == 1:
            return lambda inputs: [run(*inputs)]
        return lambda inputs: list(run(*inputs))
    return compiled


def _tensors(folder: Path, kind: str) -> list[np.ndarray]:
    """``kind``_0.pb, ``kind``_1.pb, ... of ``folder``, in order."""
    found = sorted(folder.glob(f"{kind}_*.pb"), key=lambda path: int(path.stem.split("_")[1]))
    return [onnx.numpy_helper.to_array(onnx.load_tensor(str(path))) for path in found]


def difference(expected: list[np.ndarray], outputs: list[Any]) -> str | None:
    """How ``outputs`` differ from ``expected`` (dtype, shape, values: nothing is close enough
    but equal), or None where they are the same."""
    if len(outputs) != len(expected):
        return f"{len(outputs)} outputs where the model has {len(expected)}"
    for number, (want, output) in enumerate(zip(expected, outputs, strict=True)):
        got = np.asarray(output)
        if got.dtype != want.dtype:
            return f"output {number}: {got.dtype} where ONNX requires {want.dtype}"
        if got.shape != want.shape:
            return f"output {number}: shape {got.shape} where {want.shape} is due"
        wrong = np.argwhere(got != want)
        if len(wrong):
            at = tuple(int(i) for i in wrong[0])
            return (f"output {number}: {len(wrong)} of {want.size} indices differ; at {at} the runtime answered "
                    f"{got[at]} where {want[at]} is due")
    return None


def _raised(exc: BaseException) -> str:
    return f"the runtime raised {type(exc).__name__}: {' '.join(str(exc).split())[:500]}"


def check(test: Path, runtime: Callable[[onnx.ModelProto], Run]) -> str | None:
    """Run one test folder: what is wrong, or None. A test without outputs (must not crash)
    passes when the runtime returns or raises."""
    model = onnx.load(str(test / "model.onnx"))
    inputs, expected = _tensors(test / DATA_SET, "input"), _tensors(test / DATA_SET, "output")
    try:
        outputs = runtime(model)(inputs)
    except Exception as exc:  # what the runtime raised is the finding, or for must-not-crash an answer
        return _raised(exc) if expected else None
    return difference(expected, outputs) if expected else None


def _runtime_args(config: Any) -> list[str]:
    """The options that name the runtime, as a child process is given them."""
    args = ["--argmin-device", config.getoption("argmin_device")]
    for option in ("argmin_backend", "argmin_model_plugin"):
        if config.getoption(option) is not None:
            args += [f"--{option.replace('_', '-')}", config.getoption(option)]
    return args


def _in_child(test: Path, config: Any) -> str | None:
    """``check`` in a child process; what is wrong, a crash or a hang included."""
    timeout = float(config.getoption("argmin_timeout"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    try:
        done = subprocess.run([sys.executable, __file__, str(test), *_runtime_args(config)], capture_output=True,
                              text=True, timeout=timeout, check=False, env=env, cwd=os.getcwd())
    except subprocess.TimeoutExpired:
        return f"the runtime hung: no answer within {timeout:g} s (--argmin-timeout)"
    if done.returncode == 0:
        return None
    if done.returncode == 1 and done.stdout.strip():
        return done.stdout.strip()
    if done.returncode < 0:
        try:
            how = f"killed by {signal.Signals(-done.returncode).name}"
        except ValueError:
            how = f"killed by signal {-done.returncode}"
    else:
        how = f"exited with status {done.returncode}"
    tail = done.stderr.strip().splitlines()[-3:]
    return f"the runtime took its process down ({how})" + (": " + " | ".join(tail) if tail else "")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("argmin-regressions", "ArgMin regression tests")
    group.addoption("--argmin-backend", metavar="MODULE", help="an ONNX Backend API module, e.g. onnxruntime.backend")
    group.addoption("--argmin-device", metavar="DEVICE", default="CPU", help="the backend's device (default CPU)")
    group.addoption("--argmin-model-plugin", metavar="FILE.py:FUNCTION",
                    help="a model-level plug-in: FUNCTION(model) returns a callable of the input arrays")
    group.addoption("--argmin-sets", metavar="SETS", default=DEFAULT_SETS,
                    help=f"the sets to run, comma-separated, of {', '.join(SETS)} (default {DEFAULT_SETS})")
    group.addoption("--argmin-timeout", metavar="SECONDS", default="300",
                    help="how long a test run in a child process may take (default 300)")


def pytest_configure(config: pytest.Config) -> None:
    sets = config.getoption("argmin_sets").split(",")
    unknown = [name for name in sets if name not in SETS]
    if unknown:
        raise pytest.UsageError(f"--argmin-sets: {unknown[0]!r} is no set; choose from {', '.join(SETS)}")
    timeout = config.getoption("argmin_timeout")
    if not timeout.replace(".", "", 1).isdigit() or not float(timeout) > 0:
        raise pytest.UsageError(f"--argmin-timeout {timeout!r}: give a positive number of seconds")
    try:
        config.stash[_RUNTIME] = load_runtime(config.getoption("argmin_backend"), config.getoption("argmin_device"),
                                              config.getoption("argmin_model_plugin"))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    except (ImportError, AttributeError, OSError) as exc:
        raise pytest.UsageError(f"the runtime cannot be loaded: {type(exc).__name__}: {exc}") from None


def _index() -> dict[str, Any]:
    try:
        said = json.loads((HERE / "index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return said if isinstance(said, dict) else {}


def _listed(index: dict[str, Any], sets: list[str]) -> Iterator[dict[str, Any]]:
    for entry in index.get("tests", []):
        if isinstance(entry, dict) and entry.get("set") in sets:
            yield entry


class RegressionTest(pytest.Item):
    def __init__(self, *, folder: Path, isolated: bool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.folder, self.isolated = folder, isolated

    def runtest(self) -> None:
        if self.isolated:
            problem = _in_child(self.folder, self.config)
        else:
            problem = check(self.folder, self.config.stash[_RUNTIME])
        if problem:
            raise RegressionFailed(problem)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, RegressionFailed):
            return f"{self.folder.relative_to(HERE)}: {excinfo.value}"
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, None, str]:
        return self.folder, None, self.name


class WholeSet(pytest.Item):
    """Every test index.json lists in the chosen sets is on disk."""

    def runtest(self) -> None:
        missing = [entry.get("path") for entry in _listed(_index(), _sets(self.config))
                   if not (HERE / str(entry.get("path")) / "model.onnx").is_file()]
        if missing:
            raise RegressionFailed(f"index.json lists {len(missing)} test(s) not in this folder: {missing[:5]}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Path, None, str]:
        return HERE / "index.json", None, self.name


class RegressionFailed(AssertionError):
    """A test's one-line finding."""


def _sets(config: pytest.Config) -> list[str]:
    return config.getoption("argmin_sets").split(",")


class RegressionSet(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        yield WholeSet.from_parent(self, name="index")
        faults = {entry.get("path") for entry in _listed(_index(), SETS) if entry.get("outcome") in FAULTS}
        for name in _sets(self.config):
            for model in sorted((HERE / name).glob("test_*/model.onnx")):
                path = f"{name}/{model.parent.name}"
                yield RegressionTest.from_parent(self, name=path, folder=model.parent,
                                                 isolated=name in ISOLATED or path in faults)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path == HERE / "index.json":
        return RegressionSet.from_parent(parent, path=file_path)
    return None


def main(argv: list[str]) -> int:
    """One test in this process (the child a test that may crash runs in): exit status 1 and
    one line where it fails."""
    parser = argparse.ArgumentParser()
    parser.add_argument("test", type=Path)
    parser.add_argument("--argmin-backend")
    parser.add_argument("--argmin-device", default="CPU")
    parser.add_argument("--argmin-model-plugin")
    args = parser.parse_args(argv)
    try:
        runtime = load_runtime(args.argmin_backend, args.argmin_device, args.argmin_model_plugin)
    except Exception as exc:  # the parent loaded it: what differs here is the finding
        problem = _raised(exc)
    else:
        problem = check(args.test, runtime)
    if problem:
        print(problem)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
