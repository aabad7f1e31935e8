"""OpenVINO on one device (CPU by default)."""

from .entry import THREADS, IsaCap, Runtime

OPENVINO = Runtime(
    word="openvino", label="OpenVINO", module="openvino", distributions=("openvino",),
    compile_cache=True,
    # oneDNN caps its instruction set by ONEDNN_MAX_CPU_ISA (DNNL_ before 2.0); TBB, OpenVINO's threads.
    environment=(*THREADS, "OV_*", "OPENVINO_*", "ONEDNN_*", "DNNL_*", "TBB_*"),
    # Its CPU plug-in's kernels, its own JIT ones included, use what oneDNN allows: measured, 2023.1.0
    # answers ArgMin differently under ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512 machine (docs/explanation/findings.md).
    # oneDNN ignores a value it does not know, hence the list.
    isa_cap=IsaCap(variables=("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"), library="oneDNN",
                   values=("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX512_CORE", "AVX512_CORE_VNNI", "AVX512_CORE_BF16",
                           "AVX512_CORE_FP16", "AVX512_CORE_AMX", "ALL")),
    # openvino.Core (the adapter's entry point) is there from 2023.1 on; 2023.0 has only openvino.runtime.
    oldest="2023.1.0", older_needs=(("2024.4", "numpy<2"),),
    compile_key="node", adapter="engine.adapters.run_openvino:OpenVinoArgMin",
    option="device", default="CPU", example="openvino:CPU",
    imports=("import openvino as ov",),
    lines=("core = ov.Core()",
           "compiled = core.compile_model(core.read_model(model.SerializeToString()), OPTION)",
           "result = compiled(INPUTS)[compiled.output(OUTPUT)]",
           "declared = [str(d) for d in compiled.output(OUTPUT).get_partial_shape()]"))
