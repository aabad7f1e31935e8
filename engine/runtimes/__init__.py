"""The registry of built-in runtimes: one module a runtime, each holding one ``Runtime`` entry
that the loader, the options help, the replay snippets, the certificate and the environment read."""

# Adding a runtime is its module here, its adapter in engine/adapters, and its tests. Importing this
# package costs the standard library only: noxfile reads it to know what to install.

from __future__ import annotations

from .backend import BACKEND
from .entry import Runtime
from .iree import IREE
from .onnx_reference import ONNX_REFERENCE
from .onnxruntime import ONNXRUNTIME
from .openvino import OPENVINO
from .tinygrad import TINYGRAD
from .tract import TRACT
from .tvm import TVM

# In the order the help text and the ecosystem matrix name them (the default first).
RUNTIMES: tuple[Runtime, ...] = (ONNXRUNTIME, ONNX_REFERENCE, OPENVINO, TRACT, TVM, TINYGRAD, IREE, BACKEND)
BY_WORD = {runtime.word: runtime for runtime in RUNTIMES}
DEFAULT = ONNXRUNTIME
# The built-ins the ecosystem run covers: every runtime that needs no argument to name a module.
BUILT_IN = tuple(runtime for runtime in RUNTIMES if not runtime.option_required)


def split_release(impl: str) -> tuple[str, str | None]:
    """An --impl value that names a registered runtime at one release (``openvino@2024.4.0``,
    ``onnxruntime:PROVIDER@1.20.0``): the value without ``@RELEASE``, and RELEASE (None
    when not named). Anything else comes back whole: a plug-in's path may hold an "@"."""
    base, at, release = impl.rpartition("@")
    if at and base.partition(":")[0] in BY_WORD:
        return base, release
    return impl, None


def find(impl: str) -> tuple[Runtime, str | None] | None:
    """(runtime, its argument: provider, device or module; None when omitted) of an --impl value
    naming a registered runtime, at any release; None for anything else (a plug-in)."""
    word, colon, argument = split_release(impl)[0].partition(":")
    runtime = BY_WORD.get(word)
    if runtime is None or (colon and runtime.option is None):
        return None
    return runtime, argument if colon else None


__all__ = ["BUILT_IN", "BY_WORD", "DEFAULT", "RUNTIMES", "Runtime", "find", "split_release"]
