"""Built-in plug-ins: onnxruntime, onnx.reference and any ONNX Backend API module.

Each builds the one-node ArgMin model itself: the opset import is the version under test, the
node carries exactly the attributes the case sets (an omitted one is absent from the NodeProto,
which is a different input from one set to its default), and the input has symbolic dimensions
of the known rank, so one compiled model serves every shape of that rank while the runtime can
still check the axis range and rank 0 when it loads the model. We never run onnx.checker or
relax anything ourselves: validation is the runtime's job, and what it does is what we judge."""

from __future__ import annotations

import unittest
from collections import OrderedDict
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

import numpy as np
import onnx
import onnx.helper
import onnx.shape_inference

INPUT, OUTPUT = "data", "reduced"
_CACHE_SIZE = 512  # compiled models kept per adapter; one per (opset, dtype, attributes, rank)

Key = tuple[int, np.dtype, tuple[tuple[str, int], ...], int]


def element_type(dtype: np.dtype) -> int:
    """The ONNX TensorProto element type holding ``dtype`` (ml_dtypes types included)."""
    try:
        return onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    except (KeyError, TypeError, ValueError):
        raise TypeError(f"numpy dtype {np.dtype(dtype)} has no ONNX tensor element type, "
                        f"so no ArgMin model can take it as input") from None


def argmin_model(opset: int, dtype: np.dtype, rank: int, attributes: Mapping[str, int]) -> onnx.ModelProto:
    """A model with one ArgMin node at ``opset``; the input has rank ``rank`` and symbolic dims."""
    data = onnx.helper.make_tensor_value_info(INPUT, element_type(dtype), [f"d{i}" for i in range(rank)])
    node = onnx.helper.make_node("ArgMin", [INPUT], [OUTPUT], **dict(attributes))
    opsets = [onnx.helper.make_opsetid("", opset)]

    def model(reduced: onnx.ValueInfoProto) -> onnx.ModelProto:
        graph = onnx.helper.make_graph([node], f"argmin_{opset}", [data], [reduced])
        built = onnx.helper.make_model(graph, opset_imports=opsets, producer_name="argmin-conformance")
        # The lowest IR version that can carry the opset: accepted by any runtime knowing the opset.
        built.ir_version = onnx.helper.find_min_ir_version_for(opsets, ignore_unknown=True)
        return built

    # onnx.checker (which Backend API modules run) wants a declared output shape. Declare only
    # the rank ONNX's own shape inference finds, with fresh symbols; where inference finds
    # nothing (an invalid model), the input's rank, so that the runtime, not the checker,
    # reports what is wrong with the model.
    unshaped = onnx.helper.make_tensor_value_info(OUTPUT, onnx.TensorProto.INT64, None)
    inferred = onnx.shape_inference.infer_shapes(model(unshaped))
    out = inferred.graph.output[0].type.tensor_type
    out_rank = len(out.shape.dim) if out.HasField("shape") else rank
    return model(onnx.helper.make_tensor_value_info(OUTPUT, onnx.TensorProto.INT64, [f"o{i}" for i in range(out_rank)]))


def _key(data: np.ndarray, opset: int, attributes: Mapping[str, int]) -> Key:
    return opset, data.dtype, tuple(sorted(attributes.items())), data.ndim


class _Cache:
    """LRU of compiled models per key. A failure to compile is remembered too and raised again
    on every call with that key: it is never mistaken for a usable model."""

    def __init__(self, build: Callable[[Key], Any]) -> None:
        self._build = build
        self._entries: OrderedDict[Key, tuple[Any, BaseException | None]] = OrderedDict()
        self.builds = 0

    def get(self, key: Key) -> Any:
        if key in self._entries:
            self._entries.move_to_end(key)
            built, error = self._entries[key]
        else:
            self.builds += 1
            try:
                built, error = self._build(key), None
            except Exception as exc:
                built, error = None, exc
            self._entries[key] = (built, error)
            if len(self._entries) > _CACHE_SIZE:
                self._entries.popitem(last=False)
        if error is not None:
            raise error.with_traceback(None)
        return built


class OnnxRuntimeError(RuntimeError):
    """onnxruntime refused the model or the input; the message is onnxruntime's own."""


def _from_onnxruntime(exc: Exception) -> Exception:
    """onnxruntime's status as the plug-in contract's categories: NOT_IMPLEMENTED means
    "unsupported"; every other status (INVALID_GRAPH, INVALID_ARGUMENT, FAIL, ...) is a rejection."""
    if not type(exc).__module__.startswith("onnxruntime"):
        return exc
    message = " ".join(str(exc).split())
    return NotImplementedError(message) if type(exc).__name__ == "NotImplemented" else OnnxRuntimeError(message)


def onnxruntime_providers() -> list[str]:
    import onnxruntime

    return list(onnxruntime.get_available_providers())


_QUIET = 4  # onnxruntime's FATAL severity: errors still raise, they are just not printed


class OnnxRuntimeArgMin:
    """ArgMin through onnxruntime.InferenceSession on one execution provider."""

    def __init__(self, provider: str = "CPUExecutionProvider") -> None:
        import onnxruntime

        self.provider = provider
        self._ort = onnxruntime
        self._sessions = _Cache(self._session)
        self._run_options = onnxruntime.RunOptions()
        self._run_options.log_severity_level = _QUIET

    def _session(self, key: Key) -> Any:
        opset, dtype, attributes, rank = key
        options = self._ort.SessionOptions()
        options.log_severity_level = _QUIET
        # Idle pool threads would otherwise spin after every run, and with many cached sessions
        # they starve the process (session creation went from 0.5 ms to 150 ms). Results do
        # not depend on it.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        if self.provider != "CPUExecutionProvider":
            # Otherwise nodes the provider cannot run silently fall back to the CPU provider,
            # and the verdict would be about the wrong implementation.
            options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
        model = argmin_model(opset, dtype, rank, dict(attributes)).SerializeToString()
        try:
            return self._ort.InferenceSession(model, options, providers=[self.provider])
        except Exception as exc:
            raise _from_onnxruntime(exc) from None

    @property
    def sessions_created(self) -> int:
        return self._sessions.builds

    def feed(self, data: np.ndarray) -> Any:
        """The input as onnxruntime takes it. Its numpy bridge does not know ml_dtypes types
        (bfloat16, float8), so those go in as an OrtValue of the raw bits and the ONNX type."""
        data = np.ascontiguousarray(data)
        if data.dtype.isbuiltin == 2:  # a user-defined numpy dtype: ml_dtypes
            return self._ort.OrtValue.ortvalue_from_numpy_with_onnx_type(data, element_type(data.dtype))
        return data

    def __call__(self, data: np.ndarray, *, opset: int, **attributes: int) -> np.ndarray:
        data = np.asarray(data)
        session = self._sessions.get(_key(data, opset, attributes))
        try:
            return session.run([OUTPUT], {INPUT: self.feed(data)}, self._run_options)[0]
        except Exception as exc:
            raise _from_onnxruntime(exc) from None


class ReferenceArgMin:
    """ArgMin through onnx.reference.ReferenceEvaluator, ONNX's own Python runtime."""

    def __init__(self) -> None:
        from onnx.reference import ReferenceEvaluator

        self._evaluator = ReferenceEvaluator
        self._models = _Cache(lambda key: ReferenceEvaluator(argmin_model(key[0], key[1], key[3], dict(key[2]))))

    def __call__(self, data: np.ndarray, *, opset: int, **attributes: int) -> Any:
        data = np.asarray(data)
        return self._models.get(_key(data, opset, attributes)).run(None, {INPUT: data})[0]


class BackendArgMin:
    """ArgMin through an ONNX Backend API module: ``prepare(model, device)`` then ``rep.run``."""

    def __init__(self, module: ModuleType, device: str = "CPU") -> None:
        self.module = module
        self.device = device
        self._reps = _Cache(self._prepare)

    def _prepare(self, key: Key) -> Any:
        opset, dtype, attributes, rank = key
        try:
            return self.module.prepare(argmin_model(opset, dtype, rank, dict(attributes)), device=self.device)
        except unittest.SkipTest as exc:  # the Backend API's way to say "not supported here"
            raise NotImplementedError(f"{self.module.__name__}.prepare skipped the model: {exc}") from None
        except Exception as exc:
            raise _from_onnxruntime(exc) from None

    def __call__(self, data: np.ndarray, *, opset: int, **attributes: int) -> Any:
        data = np.asarray(data)
        rep = self._reps.get(_key(data, opset, attributes))
        try:
            return rep.run([data])[0]
        except unittest.SkipTest as exc:
            raise NotImplementedError(f"{self.module.__name__} skipped the run: {exc}") from None
        except Exception as exc:
            raise _from_onnxruntime(exc) from None
