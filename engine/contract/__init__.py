"""What the layers of the engine agree on and the adapters need: the model forms, and what
the worker and an adapter pass each other. Imports nothing of the engine."""
