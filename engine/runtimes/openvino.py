"""OpenVINO on one device (CPU by default)."""

from .entry import Runtime

OPENVINO = Runtime(
    word="openvino", label="OpenVINO", module="openvino", distributions=("openvino",),
    compile_cache=True,
    adapter="engine.adapters.run_openvino:OpenVinoArgMin",
    option="device", default="CPU", example="openvino:CPU",
    imports=("import openvino as ov",),
    lines=("core = ov.Core()",
           "compiled = core.compile_model(core.read_model(model.SerializeToString()), OPTION)",
           "result = compiled(INPUTS)[compiled.output(0)]",
           "declared = [str(d) for d in compiled.output(0).get_partial_shape()]"))
