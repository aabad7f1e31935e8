"""my_runtime.py: the argmin-conformance plug-in for My Runtime."""
import onnxruntime as ort  # <- your runtime

__version__ = "0.1.0"  # what the certificate names as this implementation's version


def compile(model):
    """An onnx.ModelProto (one ArgMin node, or a packed model of several) -> a callable of its inputs."""
    try:
        session = ort.InferenceSession(model.SerializeToString(),
                                       providers=["CPUExecutionProvider"])  # <- compile it
    except ort.capi.onnxruntime_pybind11_state.NotImplemented as exc:
        raise NotImplementedError(str(exc)) from exc  # "unsupported", not a refusal
    names = [i.name for i in session.get_inputs()]

    def run(*inputs):
        outputs = session.run(None, dict(zip(names, inputs, strict=True)))  # <- run it
        return outputs if len(outputs) > 1 else outputs[0]  # every output of a packed model, in order
    return run
