"""The conformance engine: loads the implementation under test (a plug-in, in a worker process
by default), calls it on generated cases, judges every answer against the oracle, and records
one result per case. ``suites/`` holds the pytest suites that drive it; ``results/`` holds what
it records."""
