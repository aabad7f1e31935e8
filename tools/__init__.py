"""The project's own tooling: what noxfile.py's sessions share, outside the suite's layers."""
