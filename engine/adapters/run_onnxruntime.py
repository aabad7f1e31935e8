"""ArgMin through onnxruntime.InferenceSession on one execution provider."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from engine.runtimes.entry import Unavailable
from engine.runtimes.onnxruntime import CPU

from .compiled import Compiled, ModelArgMin
from .models import element_type


class OnnxRuntimeError(RuntimeError):
    """onnxruntime refused the model or the input; the message is onnxruntime's own."""


def from_onnxruntime(exc: Exception) -> Exception:
    """onnxruntime's status as the plug-in contract's categories: NOT_IMPLEMENTED means
    "unsupported"; every other status (INVALID_GRAPH, INVALID_ARGUMENT, FAIL, ...) is a rejection."""
    if not type(exc).__module__.startswith("onnxruntime"):
        return exc
    message = " ".join(str(exc).split())
    return NotImplementedError(message) if type(exc).__name__ == "NotImplemented" else OnnxRuntimeError(message)


def providers() -> list[str]:
    import onnxruntime

    return list(onnxruntime.get_available_providers())


_QUIET = 4  # onnxruntime's FATAL severity: errors still raise, they are just not printed


def _declared(shape: list[Any] | None) -> tuple[int | None, ...] | None:
    """onnxruntime's output shape: ints where known, names (symbolic) or None where not."""
    return None if shape is None else tuple(d if isinstance(d, int) else None for d in shape)


class OnnxRuntimeArgMin(ModelArgMin):
    """ArgMin through onnxruntime on ``provider``."""

    def __init__(self, provider: str = CPU) -> None:
        import onnxruntime

        available = providers()
        if provider not in available:
            raise Unavailable(f"onnxruntime has no execution provider {provider!r} here; "
                              f"use one of: {', '.join(available)}")
        super().__init__()
        self.provider = provider
        self._ort = onnxruntime
        self._run_options = onnxruntime.RunOptions()
        self._run_options.log_severity_level = _QUIET

    def compile(self, model: onnx.ModelProto) -> Compiled:
        options = self._ort.SessionOptions()
        options.log_severity_level = _QUIET
        # Idle pool threads would otherwise spin after every run, and with many cached sessions
        # they starve the process (session creation went from 0.5 ms to 150 ms). Results do
        # not depend on it.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        if self.provider != CPU:
            # Otherwise nodes the provider cannot run silently fall back to the CPU provider,
            # and the verdict would be about the wrong implementation.
            options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
        session = self._ort.InferenceSession(model.SerializeToString(), options, providers=[self.provider])
        names = [i.name for i in session.get_inputs()]

        def run(*inputs: Any) -> Any:
            return session.run(None, dict(zip(names, inputs, strict=True)), self._run_options)

        return Compiled(run, [_declared(output.shape) for output in session.get_outputs()])

    def translate(self, exc: Exception) -> Exception:
        return from_onnxruntime(exc)

    def feed(self, data: np.ndarray) -> Any:
        """The input as onnxruntime takes it. Its numpy bridge does not know ml_dtypes types
        (bfloat16, float8), so those go in as an OrtValue of the raw bits and the ONNX type."""
        data = np.ascontiguousarray(data)
        if data.dtype.isbuiltin == 2:  # a user-defined numpy dtype: ml_dtypes
            return self._ort.OrtValue.ortvalue_from_numpy_with_onnx_type(data, element_type(data.dtype))
        return data
