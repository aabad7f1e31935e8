"""The tools that read and write report folders: verify, merge (of shards), baseline, and the
failures exported as ONNX backend node tests with the runner written beside them (regressions/)."""
