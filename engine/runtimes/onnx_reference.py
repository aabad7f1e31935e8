"""onnx.reference.ReferenceEvaluator, ONNX's own Python runtime."""

from .entry import Runtime

ONNX_REFERENCE = Runtime(
    word="onnx-reference", label="onnx.reference", module="onnx.reference", distributions=("onnx",),
    oldest="1.19.0",  # the suite's own lower bound for onnx
    adapter="engine.adapters.run_reference:ReferenceArgMin",
    imports=("from onnx.reference import ReferenceEvaluator",),
    lines=("result = ReferenceEvaluator(model).run(None, FEEDS)[OUTPUT]",
           "declared = [str(d.dim_value) if d.HasField('dim_value') else '?' for d in "
           "onnx.shape_inference.infer_shapes(model).graph.output[OUTPUT].type.tensor_type.shape.dim]"))
