"""Model-level plug-ins (``--impl model:tests/impls/model_onnxruntime.py:FUNCTION``): each takes
an onnx.ModelProto and returns a callable from the model's inputs to the output."""

import onnxruntime as ort


def compile(model):
    """README's five lines: onnxruntime as a model-level plug-in."""
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
