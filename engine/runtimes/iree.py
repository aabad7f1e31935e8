"""IREE: iree-base-compiler's ONNX importer and compiler for the llvm-cpu backend tuned to this
host, run by iree-base-runtime on its local-task driver. Doubles stay doubles (IREE's ONNX input
demotes f64 to f32 by default, which would judge a narrower type than the model's)."""

from .entry import THREADS, Runtime

IREE = Runtime(
    word="iree", label="IREE", module="iree.runtime", distributions=("iree-base-runtime", "iree-base-compiler"),
    compile_cache=True, oldest="3.13.0", environment=(*THREADS, "IREE_*"),
    compile_key="node", adapter="engine.adapters.run_iree:IreeArgMin",
    imports=("import iree.compiler", "import iree.runtime", "import onnx.shape_inference",
             "from iree.compiler import ir", "from iree.compiler.extras import onnx_importer"),
    lines=("info = onnx_importer.ModelInfo(onnx.shape_inference.infer_shapes(model))",
           "module = info.create_module(context=ir.Context()).operation",
           "onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()",
           "binary = iree.compiler.compile_str(module.get_asm(), target_backends=['llvm-cpu'], input_type='onnx',",
           "    extra_args=['--iree-llvmcpu-target-cpu=host', '--iree-input-demote-f64-to-f32=false'])",
           "context = iree.runtime.SystemContext(config=iree.runtime.Config('local-task'))",
           "context.add_vm_module(iree.runtime.VmModule.copy_buffer(context.instance, binary))",
           "result = np.asarray(context.modules.module[model.graph.name](*INPUTS)PICK.to_host())"))
