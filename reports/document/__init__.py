"""The document: a run's raw records made into report.json (aggregate.py), with its typed parts and
schema, the clause table, census, coverage grid, certificate block and replay snippets it holds."""
