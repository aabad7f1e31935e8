"""The built-ins' adapters, one module a runtime, and a vendor's model plug-in (``model:``): each
builds the model of a case's form (``models``) and keeps what it compiled (``compiled``)."""

# Each runtime's module imports the runtime only when its adapter is created: importing this
# package costs onnx and nothing else.

from .compiled import Cache, Compiled, ModelArgMin
from .models import INPUT, OUTPUT, Declared, argmin_model, element_type, form_key, form_model, inferred_shape
from .run_backend import BackendArgMin
from .run_model import ModelPluginArgMin
from .run_onnxruntime import OnnxRuntimeArgMin, OnnxRuntimeError, from_onnxruntime, providers
from .run_openvino import OpenVinoArgMin, OpenVinoError
from .run_reference import ReferenceArgMin
from .run_tract import TractArgMin, TractError

__all__ = [
    "INPUT", "OUTPUT", "BackendArgMin", "Cache", "Compiled", "Declared", "ModelArgMin", "ModelPluginArgMin",
    "OnnxRuntimeArgMin", "OnnxRuntimeError", "OpenVinoArgMin", "OpenVinoError", "ReferenceArgMin", "TractArgMin",
    "TractError", "argmin_model", "element_type", "form_key", "form_model", "from_onnxruntime", "inferred_shape",
    "providers",
]
