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
import inspect
import os
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from engine.runtimes import DEFAULT, RUNTIMES, Runtime, find, split_release
from engine.runtimes.entry import Unavailable, release_key
from results.terminal import one_line, printable

DEFAULT_IMPL = DEFAULT.word
# A release as PEP 440 writes a public version in its normal form (1.16.0, 2024.4.0rc1, 0.27.post1):
# what pip is asked for as NAME==RELEASE, so nothing else (a second requirement, a URL) gets in.
RELEASE = re.compile(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?")
_BACKEND_PREFIX = "backend:"
_MODEL_PREFIX = "model:"
_GRAMMAR = ("use module:function, path.py:function, model:MODULE_OR_PATH:FUNCTION or one of "
            + ", ".join(runtime.usage for runtime in RUNTIMES))


class UsageError(Exception):
    """A run cannot be carried out; str(exc) is ONE line naming the problem and the fix."""


def _import(impl: str, name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except Exception as exc:
        reason = one_line(f"{type(exc).__name__}: {exc}")
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
        reason = one_line(f"{type(exc).__name__}: {exc}")
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


def _split(impl: str, value: str | None = None, form: str = "module:function") -> tuple[str, str]:
    target, colon, name = (impl if value is None else value).rpartition(":")
    if not colon:
        raise UsageError(f"--impl {impl!r} has no ':function' part; {_GRAMMAR}")
    if not target or not name:
        raise UsageError(f"--impl {impl!r}: both parts of {form} must be non-empty; {_GRAMMAR}")
    return target, name


def _backend_module(impl: str) -> ModuleType:
    name = impl[len(_BACKEND_PREFIX):]
    module = _import(impl, name)
    if not callable(getattr(module, "prepare", None)):
        raise UsageError(f"--impl {impl!r}: module {name!r} has no prepare(model, device) function, "
                         f"so it is not an ONNX Backend API module; name one that is")
    _callable_as(impl, f"{name}.prepare", module.prepare, "prepare(model, device)", (None, "CPU"),
                 "def prepare(model, device='CPU', **kwargs)")
    return module


def _model_parts(impl: str) -> tuple[str, str]:
    """MODULE_OR_PATH and FUNCTION of a ``model:`` --impl value."""
    return _split(impl, impl[len(_MODEL_PREFIX):], "model:MODULE_OR_PATH:FUNCTION")


def _builtin(impl: str) -> tuple[Runtime, str | None] | None:
    """(registered runtime, its argument: execution provider, device or module) of an --impl
    value naming one (engine.runtimes); None for a plug-in."""
    return find(impl)


def model_based(impl: str) -> bool:
    """Whether the suite builds the ONNX models for ``impl`` (built-ins, backend:, model:), so the
    cases can be given to it in every model form (``engine.contract.forms``)."""
    return _builtin(impl) is not None or impl.startswith(_MODEL_PREFIX)


def runtime_distributions(impl: str) -> tuple[str, ...]:
    """What pip installs for a built-in --impl value: its distributions, pinned to the release it
    names (``openvino@2024.4.0``); () for anything else."""
    builtin = _builtin(impl)
    return builtin[0].requirements(split_release(impl)[1]) if builtin else ()


def runtime_commands(impl: str) -> tuple[str, ...]:
    """The system commands a built-in --impl value needs on PATH (tinygrad's clang); () otherwise."""
    builtin = _builtin(impl)
    return builtin[0].commands if builtin else ()


def _check_release(impl: str, runtime: Runtime, release: str | None) -> None:
    """A release named after "@" is one the built-in supports."""
    if release is None:
        return
    if runtime.oldest is None:
        raise UsageError(f"--impl {impl!r}: {runtime.usage} has no release to pick; drop the '@{release}' "
                         f"and install the release you want with --install")
    if not RELEASE.fullmatch(release) or not release_key(release):
        raise UsageError(f"--impl {impl!r}: {release!r} is not a release number (a version as pip writes it, "
                         f"nothing else); write e.g. {runtime.word}@{runtime.oldest}")
    if release_key(release) < release_key(runtime.oldest):
        raise UsageError(f"--impl {impl!r}: the built-in {runtime.word} supports {runtime.distributions[0]} "
                         f"{runtime.oldest} and later; pick a release from {runtime.oldest} on, or test an older "
                         f"one through a plug-in of your own")


def _installed(impl: str, runtime: Runtime, release: str) -> None:
    """The release named after "@" is the one installed here, or say in one line how to get it."""
    name = runtime.distributions[0]
    here = _version(name)
    if here is None or release_key(here) != release_key(release):
        raise UsageError(f"--impl {impl!r}: {name} {here} is installed here, not {release}; run it through "
                         f"`nox -s conformance`, which installs that release in a virtualenv of its own, "
                         f"or `pip install {name}=={release}`")


def _check_target(impl: str, target: str) -> None:
    if _is_path(target):
        path = Path(target).expanduser().resolve()
        if not path.is_file():
            raise UsageError(f"--impl {impl!r}: file {target!r} does not exist (looked for {path}); "
                             f"give a path relative to the current directory or an absolute one")


def check(impl: str) -> None:
    """The checks of an --impl value that import nothing: its form, and that a named file
    exists. Run in the process that owns the run; everything else happens where the
    implementation is loaded (a worker process under process isolation)."""
    if not impl.isprintable():  # a report's word is shown on a terminal before it is run (verify --rerun)
        raise UsageError(f"--impl {impl!r} holds control characters; {_GRAMMAR}")
    builtin = _builtin(impl)
    if builtin is not None:
        runtime, argument = builtin
        if argument == "" or (argument is None and runtime.option_required):
            raise UsageError(f"--impl {impl!r} names no {runtime.option}; write e.g. {runtime.example}")
        _check_release(impl, runtime, split_release(impl)[1])
        return
    _check_target(impl, (_model_parts(impl) if impl.startswith(_MODEL_PREFIX) else _split(impl))[0])


def _runtime(impl: str, runtime: Runtime) -> None:
    """Import a built-in's runtime, or say in one line how to get it."""
    try:
        importlib.import_module(runtime.module)
    except Exception as exc:
        reason = one_line(f"{type(exc).__name__}: {exc}")
        wanted = " ".join(runtime.distributions)
        raise UsageError(f"--impl {impl!r} needs {wanted}, which does not import here ({reason}); run it through "
                         f"`nox -s conformance`, which installs it, or `pip install {wanted}`") from None


def _load(impl: str, target: str, name: str) -> Callable[..., Any]:
    if _is_path(target):
        return _attribute(impl, _import_file(impl, target), f"file {target!r}", name)
    return _attribute(impl, _import(impl, target), f"module {target!r}", name)


# A call every plain function must take: a case passes ``opset`` and the attributes its node sets,
# any of these three (the rejection tests add names no version declares, which may be refused).
_CONTRACT = {"opset": 13, "axis": 0, "keepdims": 1, "select_last_index": 0}


def _callable_as(impl: str, name: str, fn: Callable[..., Any], call: str, arguments: tuple,
                 definition: str, keywords: Mapping[str, Any] | None = None) -> Callable[..., Any]:
    """``fn``, once its signature takes ``arguments`` (and ``keywords``), as the suite will call
    it (``call``): a function that cannot would have every case recorded as an error instead of
    stopping the run here. A callable without a signature (a builtin, a C extension's) is let through."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn
    try:
        signature.bind(*arguments, **(keywords or {}))
    except TypeError as exc:
        raise UsageError(one_line(f"--impl {impl!r}: {name}{signature} cannot be called as {call} ({exc}); define "
                                   f"it as {definition}")) from None
    return fn


def _takes_the_contract(impl: str, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` of a plain plug-in, once it takes ``fn(data, *, opset, axis, keepdims, select_last_index)``."""
    return _callable_as(impl, name, fn, "fn(data, *, opset, axis, keepdims, select_last_index)", (None,),
                        f"def {name.rpartition('.')[2]}(data, *, opset, **attributes)", _CONTRACT)


def resolve(impl: str) -> Callable[..., Any]:
    """The callable behind an --impl value: fn(data, *, opset, **attributes). This imports the
    implementation: call it only where the implementation is meant to run."""
    check(impl)
    builtin = _builtin(impl)
    if builtin is not None:
        runtime, argument = builtin
        if runtime.module:
            _runtime(impl, runtime)
            release = split_release(impl)[1]
            if release is not None:
                _installed(impl, runtime, release)
        else:  # the argument names the module (backend:MODULE)
            _backend_module(impl)
        try:
            return runtime.create(argument)
        except Unavailable as exc:
            raise UsageError(f"--impl {impl!r}: {exc}") from None
    if impl.startswith(_MODEL_PREFIX):
        # The adapters import onnx (and ml_dtypes, half a second): only a model plug-in pays for them.
        from engine import adapters

        target, name = _model_parts(impl)
        compile_model = _callable_as(impl, name, _load(impl, target, name), f"{name}(model)", (None,),
                                     f"def {name.rpartition('.')[2]}(model) returning a callable of the model's inputs")
        return adapters.ModelPluginArgMin(compile_model)
    target, name = _split(impl)
    return _takes_the_contract(impl, name, _load(impl, target, name))


def plugin_file(impl: str) -> Path | None:
    """The file a plug-in --impl value names (absolute), or None where it names a module or a
    built-in: a sandbox shows the worker that file's folder."""
    prefix = _MODEL_PREFIX if impl.startswith(_MODEL_PREFIX) else ""
    target = impl[len(prefix):].rpartition(":")[0]
    if _builtin(impl) is not None or not target or not _is_path(target):
        return None
    return Path(target).expanduser().resolve()


def portable(impl: str) -> str:
    """The same --impl value with a file path made absolute, so it means the same file in a
    worker process (or a replay snippet) whatever its working directory."""
    path = plugin_file(impl)
    return impl if path is None else _with_file(impl, path)


def _with_file(impl: str, path: Path) -> str:
    """A plug-in --impl value naming ``path`` instead of its own file."""
    return f"{_MODEL_PREFIX if impl.startswith(_MODEL_PREFIX) else ''}{path}:{impl.rpartition(':')[2]}"


def folder_name(impl: str) -> str:
    """A file name for an --impl value: a plug-in file by its stem (not its folder), every
    character a folder name might not hold as "-" (``onnxruntime``, ``openvino@2024.4.0``,
    ``model-my_runtime-compile``)."""
    path = plugin_file(impl)
    shown = impl if path is None else _with_file(impl, Path(path.stem))
    return re.sub(r"[^A-Za-z0-9._@-]+", "-", shown).strip("-.") or "implementation"


def located(impl: str, started_in: str | None) -> str:
    """A report's --impl value as this process can load it: a plug-in file the run named by a
    relative path is looked for from the current folder (where verify or replay was started),
    then from the folder the run was started in (``started_in``, recorded in the report), there
    made absolute. UsageError, naming both places, where neither holds it."""
    path = plugin_file(impl)
    target = impl.removeprefix(_MODEL_PREFIX).rpartition(":")[0]
    if path is None or path.is_file() or Path(target).expanduser().is_absolute():
        return impl
    there = Path(started_in, target).resolve() if started_in else None
    if there is not None and there.is_file():
        return _with_file(impl, there)
    also = f" nor where the run was started ({there})" if there else ""
    raise UsageError(f"--impl {impl!r}, as the report names it: no file {target!r} here ({path}){also}; start "
                     f"this from a folder where {target!r} is the plug-in's file, as the run was")


# --- what ran, for the report's environment --------------------------------------------------

# The suite's own dependencies: a plug-in that uses them provides its ArgMin with something else
# when it references anything else (a runtime), so they come last when choosing its provider.
_GENERIC = ("numpy", "ml_dtypes", "onnx")


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


def _referenced(module: ModuleType) -> dict[str, str | None]:
    """The distributions (name -> version) of the modules a plug-in module imports, directly or
    through the functions and classes it imported: for a file plug-in, what really computes."""
    tops = set()
    for value in vars(module).values():
        name = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None)
        if isinstance(name, str) and name.split(".")[0] not in sys.stdlib_module_names:
            tops.add(name.split(".")[0])
    found = dict(_distribution(top) for top in sorted(tops - {module.__name__.split(".")[0]}))
    found.pop(None, None)
    return dict(sorted(found.items(), key=lambda item: (item[0] in _GENERIC, item[0])))


_VERSION_CHARS = 80  # a stated version is cut here: it is the plug-in's text, shown in the certificate


def _stated(module: ModuleType) -> tuple[str | None, str | None]:
    """(the version a plug-in module states, how it states it): a module-level ``__version__``
    string, or what its ``version()`` function returns; (None, None) where it states none."""
    stated, how = getattr(module, "__version__", None), "__version__"
    if not isinstance(stated, str) and callable(getattr(module, "version", None)):
        try:
            stated, how = module.version(), "version()"
        except Exception:  # a plug-in whose version() fails states none
            stated = None
    if not isinstance(stated, str) or not stated.strip():
        return None, None
    text = one_line(printable(stated))
    return text[:_VERSION_CHARS], how


def _plugin(target: str) -> dict[str, Any]:
    """A user's module or file: its version as it states it (``__version__``, ``version()``), or
    its own distribution's where it is installed as one; else no version, never that of a
    package it uses (those are listed apart, in ``distributions``). A file is named by its base
    name: no local path enters the report."""
    if _is_path(target):
        path = Path(target).expanduser().resolve()
        module, shown = sys.modules[_module_name(path)], path.name
        own = (None, None)
    else:
        module, shown = sys.modules[target], target
        own = _distribution(target)
    version, how = _stated(module)
    if version is None and own[1] is not None:
        version, how = own[1], "distribution"
    return {"module": shown, "distribution": own[0], "version": version, "version_stated_by": how, "device": None,
            "distributions": _referenced(module)}


def describe(impl: str, fn: Callable[..., Any] | None = None) -> dict[str, Any]:
    """For the report's environment: what provides the implementation (module, distribution and
    version), where it runs (execution provider or device) and, for plug-ins, every distribution
    their code uses. ``fn`` is ``resolve(impl)``, called here when not given."""
    fn = resolve(impl) if fn is None else fn
    builtin = _builtin(impl)
    if builtin is None and impl.startswith(_MODEL_PREFIX):
        return _plugin(_model_parts(impl)[0])
    if builtin is None:
        return _plugin(_split(impl)[0])
    runtime, argument = builtin
    module = runtime.module or str(argument)
    # The registry names the distributions; a backend: module's is found from the module.
    distribution, version = (runtime.distributions[0], _version(runtime.distributions[0])) \
        if runtime.distributions else _distribution(module)
    names = runtime.distributions or ((distribution,) if distribution else ())
    description = {"module": module, "distribution": distribution, "version": version,
                   "device": getattr(fn, "provider", None) or getattr(fn, "device", None),
                   "distributions": {name: _version(name) for name in names}}
    if hasattr(fn, "properties"):
        description["device_properties"] = fn.properties()
    if getattr(fn, "configuration", None):
        description["configuration"] = dict(fn.configuration)
    return description


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
