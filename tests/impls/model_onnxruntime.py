"""Model-level plug-ins (``--impl model:tests/impls/model_onnxruntime.py:FUNCTION``): each takes
an onnx.ModelProto and returns a callable from the model's inputs to the output."""

import onnxruntime as ort
from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as OrtNotImplemented


def compile(model):
    """README's lines: onnxruntime as a model-level plug-in (every output of a packed model)."""
    try:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except OrtNotImplemented as e:  # onnxruntime has no kernel for this: "unsupported", not a refusal
        raise NotImplementedError(str(e)) from e
    names = [i.name for i in session.get_inputs()]
    def run(*inputs):
        outputs = session.run(None, dict(zip(names, inputs, strict=True)))
        return outputs if len(outputs) > 1 else outputs[0]
    return run


def first_output_only(model):
    """The same, answering a model's first output only: it is asked one-node models only."""
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return lambda *inputs: session.run(None, dict(zip(names, inputs, strict=True)))[0]


def refuse(model):
    raise NotImplementedError("this runtime compiles nothing")


def refuse_to_run(model):
    def run(*inputs):
        raise NotImplementedError("this runtime runs nothing")
    return run


def not_a_callable(model):
    return 42
