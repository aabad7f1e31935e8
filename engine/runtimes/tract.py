"""tract (Sonos' Rust runtime), on the CPU."""

from .entry import Runtime

TRACT = Runtime(
    word="tract", label="tract", module="tract", distributions=("tract",),
    oldest="0.21.0", environment=("TRACT_*", "RAYON_*"),
    adapter="engine.adapters.run_tract:TractArgMin",
    imports=("import tempfile", "", "import tract"),
    lines=("path = tempfile.mkdtemp() + '/argmin.onnx'",
           "onnx.save(model, path)",
           "typed = tract.onnx().load(path).into_model()",
           "declared = [str(d) for d in typed.output_fact(OUTPUT).dims()]",
           "result = typed.into_runnable().run(INPUTS)[OUTPUT].to_numpy()"))
