"""What the layers of the engine agree on and the adapters need: the model forms, what the
worker and an adapter pass each other, and the one reply type. Imports nothing of the engine."""
