"""onnxruntime (the default), on one execution provider."""

from .entry import THREADS, Runtime

CPU = "CPUExecutionProvider"  # the one place this name is spelled out

ONNXRUNTIME = Runtime(
    word="onnxruntime", label="onnxruntime", module="onnxruntime", distributions=("onnxruntime",),
    adapter="engine.adapters.run_onnxruntime:OnnxRuntimeArgMin",
    oldest="1.16.0", older_needs=(("1.19", "numpy<2"),), environment=(*THREADS, "ORT_*"),
    option="execution provider", default=CPU, example=f"onnxruntime:{CPU}",
    imports=("import onnxruntime as ort",),
    lines=("session = ort.InferenceSession(model.SerializeToString(), providers=[OPTION])",
           "result = session.run(None, FEEDS)[OUTPUT]",
           "declared = [str(d) for d in session.get_outputs()[OUTPUT].shape]"))
