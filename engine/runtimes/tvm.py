"""Apache TVM: the Relax ONNX frontend, compiled for the llvm target and run on the CPU."""

from .entry import THREADS, Runtime

TVM = Runtime(
    word="tvm", label="TVM", module="tvm", distributions=("apache-tvm",),
    compile_cache=True, oldest="0.27.0", environment=(*THREADS, "TVM_*"),
    compile_key="node", adapter="engine.adapters.run_tvm:TvmArgMin",
    imports=("import tvm", "from tvm import relax", "from tvm.relax.frontend.onnx import from_onnx"),
    lines=("module = relax.transform.LegalizeOps()(from_onnx(model, keep_params_in_input=False))",
           "machine = relax.VirtualMachine(tvm.compile(module, target='llvm'), tvm.cpu())",
           "result = machine['main'](*[tvm.runtime.tensor(x) for x in INPUTS])PICK.numpy()"))
