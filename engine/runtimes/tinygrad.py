"""tinygrad's ONNX runner on its CPU device (DEV=CPU), which compiles kernels with clang."""

from .entry import Runtime

TINYGRAD = Runtime(
    word="tinygrad", label="tinygrad", module="tinygrad", distributions=("tinygrad",),
    compile_cache=True, oldest="0.14.0",
    environment=("CC", "DEBUG", "BEAM", "NOOPT", "JIT", "CPU_*"),  # its compiler, its own switches
    compile_key="shape", adapter="engine.adapters.run_tinygrad:TinygradArgMin", commands=("clang",),
    imports=("import os", "import tempfile", "", "os.environ['DEV'] = 'CPU'  # before tinygrad is imported",
             "from tinygrad import Tensor", "from tinygrad.nn.onnx import OnnxRunner"),
    lines=("path = tempfile.mkdtemp() + '/argmin.onnx'",
           "onnx.save(model, path)",
           "outputs = OnnxRunner(path)({name: Tensor(value) for name, value in FEEDS.items()})",
           "result = outputs[model.graph.output[OUTPUT].name].numpy()"))
