"""ArgMin through OpenVINO (``openvino.Core``) on one device, CPU by default. The model goes
through OpenVINO's ONNX frontend (``read_model``) and is compiled for the device with OpenVINO's
defaults, as an application would run it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import onnx

from engine.runtimes.entry import Unavailable

from .compiled import Compiled, ModelArgMin, one_line

# Devices OpenVINO composes from others (AUTO:GPU,CPU and the like): never in available_devices.
_VIRTUAL = ("AUTO", "HETERO", "MULTI", "BATCH")
# What OpenVINO's ONNX frontend says about an element type it has no support for.
_UNSUPPORTED_TYPE = "Unsupported data type"


class OpenVinoError(RuntimeError):
    """OpenVINO refused the model or the input; the message is OpenVINO's own."""


def _declared(shape: Any) -> tuple[int | None, ...] | None:
    if shape.rank.is_dynamic:
        return None
    return tuple(d.get_length() if d.is_static else None for d in shape)


def _message(exc: Exception) -> str:
    """OpenVINO's message without the source locations it prefixes each layer with."""
    lines = [line for line in str(exc).splitlines() if not line.startswith("Exception from src/")]
    return one_line(" ".join(lines) or exc)


class OpenVinoArgMin(ModelArgMin):
    def __init__(self, device: str = "CPU") -> None:
        import openvino

        super().__init__()
        self.device = device
        self._core = openvino.Core()
        available = self.devices()
        base = device.split(":")[0].split(".")[0]
        if base not in _VIRTUAL and device not in available and base not in available:
            raise Unavailable(f"OpenVINO has no device {device!r} here; use one of: {', '.join(available)}")

    def devices(self) -> list[str]:
        return list(self._core.available_devices)

    def properties(self) -> dict[str, str]:
        """The device settings that decide how ArgMin is computed, for the environment."""
        found = {}
        for name in ("FULL_DEVICE_NAME", "INFERENCE_PRECISION_HINT"):
            try:
                value = self._core.get_property(self.device, name)
                found[name.lower()] = value.get_type_name() if hasattr(value, "get_type_name") else str(value)
            except Exception:  # a device without that property
                continue
        return found

    suffix = ".blob"  # CompiledModel.export_model: OpenVINO's own cache format

    def compile(self, model: onnx.ModelProto) -> Compiled:
        return self._wrapped(self._core.compile_model(self._core.read_model(model.SerializeToString()), self.device))

    def export(self, model: onnx.ModelProto, path: Path) -> Compiled:
        compiled = self._core.compile_model(self._core.read_model(model.SerializeToString()), self.device)
        exported = compiled.export_model()  # bytes, or a BytesIO in some releases
        path.write_bytes(exported.getvalue() if hasattr(exported, "getvalue") else exported)
        return self._wrapped(compiled)

    def restore(self, path: Path, model: onnx.ModelProto) -> Compiled:
        return self._wrapped(self._core.import_model(path.read_bytes(), self.device))

    @staticmethod
    def _wrapped(compiled: Any) -> Compiled:
        outputs = compiled.outputs

        def run(*inputs: Any) -> list[Any]:
            results = compiled(list(inputs))
            return [results[output] for output in outputs]

        return Compiled(run, [_declared(output.get_partial_shape()) for output in outputs])

    def translate(self, exc: Exception) -> Exception:
        # OpenVINO raises RuntimeError (from C++) for everything; other exceptions are not its own.
        if type(exc) is not RuntimeError and not type(exc).__module__.startswith("openvino"):
            return exc
        message = _message(exc)
        return NotImplementedError(message) if _UNSUPPORTED_TYPE in message else OpenVinoError(message)
