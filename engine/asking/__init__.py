"""Asking the implementation: loading it (loader), calls and replies (calls), which models they
are asked in (packing), the owner's side of a worker (isolation and its parts), the worker's side."""
