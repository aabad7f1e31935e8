"""The plug-in contract: turn an ``--impl`` value into the function the suites call.

Every implementation, vendor's or built-in, is a callable ``fn(data, *, opset, **attributes)``
returning something ``numpy.asarray`` accepts. Anything wrong with the ``--impl`` value itself
is a UsageError whose message is one line naming the problem and the fix, because it ends a
run before it starts (exit status 2)."""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

DEFAULT_IMPL = "onnxruntime"
REFERENCE = "onnx-reference"
_ORT_PREFIX = "onnxruntime:"
_BACKEND_PREFIX = "backend:"
_FORMS = "use module:function, path.py:function or one of onnxruntime, onnx-reference, backend:MODULE"


class UsageError(Exception):
    """A run cannot be carried out; str(exc) is ONE line naming the problem and the fix."""


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _import(impl: str, name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except Exception as exc:
        reason = _one_line(f"{type(exc).__name__}: {exc}")
        raise UsageError(f"--impl {impl!r}: module {name!r} does not import ({reason}); "
                         f"install it in this environment or fix the module name") from None


def _is_path(target: str) -> bool:
    return target.endswith(".py") or "/" in target or os.sep in target


def _module_name(path: Path) -> str:
    """A module name unique to the file, so two files called impl.py never collide."""
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    stem = "".join(c if c.isalnum() else "_" for c in path.stem)
    return f"_argmin_impl_{stem}_{digest}"


def _import_file(impl: str, target: str) -> ModuleType:
    path = Path(target).expanduser().resolve()
    name = _module_name(path)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"--impl {impl!r}: {path} cannot be imported as Python; name a .py file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before executing: dataclasses and pickling look the module up
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        reason = _one_line(f"{type(exc).__name__}: {exc}")
        raise UsageError(f"--impl {impl!r}: file {target!r} does not import ({reason}); "
                         f"fix the file or install what it imports") from None
    return module


def _attribute(impl: str, module: ModuleType, label: str, name: str) -> Callable[..., Any]:
    value: Any = module
    for part in name.split("."):
        if not hasattr(value, part):
            callables = sorted(k for k, v in vars(module).items() if callable(v) and not k.startswith("_"))
            hint = f" (callables there: {', '.join(callables[:12])})" if callables else ""
            raise UsageError(f"--impl {impl!r}: {label} has no attribute {name!r}; "
                             f"name a function defined there{hint}")
        value = getattr(value, part)
    if not callable(value):
        raise UsageError(f"--impl {impl!r}: {label}.{name} is a {type(value).__name__}, not callable; "
                         f"name a function fn(data, *, opset, **attributes)")
    return value


def _split(impl: str) -> tuple[str, str]:
    target, colon, name = impl.rpartition(":")
    if not colon:
        raise UsageError(f"--impl {impl!r} has no ':function' part; {_FORMS}")
    if not target or not name:
        raise UsageError(f"--impl {impl!r}: both parts of module:function must be non-empty; {_FORMS}")
    return target, name


def _backend_module(impl: str) -> ModuleType:
    name = impl[len(_BACKEND_PREFIX):]
    module = _import(impl, name)
    if not callable(getattr(module, "prepare", None)):
        raise UsageError(f"--impl {impl!r}: module {name!r} has no prepare(model, device) function, "
                         f"so it is not an ONNX Backend API module; name one that is")
    return module


def check(impl: str) -> None:
    """The checks of an --impl value that import nothing: its form, and that a named file
    exists. Run in the process that owns the run; everything else happens where the
    implementation is loaded (a worker process under process isolation)."""
    if impl in (DEFAULT_IMPL, REFERENCE) or impl.startswith(_ORT_PREFIX):
        if impl.startswith(_ORT_PREFIX) and not impl[len(_ORT_PREFIX):]:
            raise UsageError(f"--impl {impl!r} names no execution provider; "
                             f"write e.g. onnxruntime:CPUExecutionProvider")
        return
    if impl.startswith(_BACKEND_PREFIX):
        if not impl[len(_BACKEND_PREFIX):]:
            raise UsageError(f"--impl {impl!r} names no module; write backend:MODULE, e.g. backend:onnxruntime.backend")
        return
    target, _ = _split(impl)
    if _is_path(target):
        path = Path(target).expanduser().resolve()
        if not path.is_file():
            raise UsageError(f"--impl {impl!r}: file {target!r} does not exist (looked for {path}); "
                             f"give a path relative to the current directory or an absolute one")


def resolve(impl: str) -> Callable[..., Any]:
    """The callable behind an --impl value: fn(data, *, opset, **attributes). This imports the
    implementation: call it only where the implementation is meant to run."""
    check(impl)
    from engine import adapters  # the adapters import onnx: only pay for it when asked

    if impl == DEFAULT_IMPL:
        return adapters.OnnxRuntimeArgMin()
    if impl.startswith(_ORT_PREFIX):
        provider = impl[len(_ORT_PREFIX):]
        available = adapters.onnxruntime_providers()
        if provider not in available:
            raise UsageError(f"--impl {impl!r}: onnxruntime has no execution provider {provider!r} here; "
                             f"use one of: {', '.join(available)}")
        return adapters.OnnxRuntimeArgMin(provider)
    if impl == REFERENCE:
        return adapters.ReferenceArgMin()
    if impl.startswith(_BACKEND_PREFIX):
        return adapters.BackendArgMin(_backend_module(impl))
    target, name = _split(impl)
    if _is_path(target):
        return _attribute(impl, _import_file(impl, target), f"file {target!r}", name)
    return _attribute(impl, _import(impl, target), f"module {target!r}", name)


def portable(impl: str) -> str:
    """The same --impl value with a file path made absolute, so it means the same file in a
    worker process whatever that process's working directory."""
    if impl in (DEFAULT_IMPL, REFERENCE) or impl.startswith((_ORT_PREFIX, _BACKEND_PREFIX)) or ":" not in impl:
        return impl
    target, name = _split(impl)
    return f"{Path(target).expanduser().resolve()}:{name}" if _is_path(target) else impl


@functools.cache
def _distributions() -> dict[str, list[str]]:
    """Top-level module -> distributions (scanning every installed package takes most of a second)."""
    return importlib.metadata.packages_distributions()


def _distribution(module_name: str) -> tuple[str | None, str | None]:
    top = module_name.split(".")[0]
    names = _distributions().get(top)
    if not names:
        return None, None
    try:
        return names[0], importlib.metadata.version(names[0])
    except importlib.metadata.PackageNotFoundError:
        return names[0], None


def describe(impl: str) -> dict[str, str | None]:
    """For the report's environment: what the --impl value names and which version of it ran.
    Call it after ``resolve(impl)``, in the same process: it reads the modules that loaded."""
    if impl == DEFAULT_IMPL or impl.startswith(_ORT_PREFIX):
        module = "onnxruntime"
    elif impl == REFERENCE:
        module = "onnx.reference"
    elif impl.startswith(_BACKEND_PREFIX):
        module = impl[len(_BACKEND_PREFIX):]
    else:
        target, _ = _split(impl)
        if _is_path(target):
            path = Path(target).expanduser().resolve()
            return {"impl": impl, "module": _module_name(path), "package": None, "version": None, "file": str(path)}
        module = target
    package, version = _distribution(module)
    file = getattr(sys.modules[module], "__file__", None)
    return {"impl": impl, "module": module, "package": package, "version": version, "file": file}
