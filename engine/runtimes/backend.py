"""Any ONNX Backend API module (``backend:MODULE``): ``prepare(model, device)`` then ``rep.run``."""

from .entry import Runtime

BACKEND = Runtime(
    word="backend", label="the ONNX backend", module="", distributions=(),
    compile_key="node", adapter="engine.adapters.run_backend:BackendArgMin",
    option="module", example="backend:onnxruntime.backend",
    imports=("import importlib", "", "backend = importlib.import_module(OPTION)"),
    lines=("result = backend.prepare(model, device='CPU').run(INPUTS)[OUTPUT]",))
