"""Asking the implementation: loading it (loader), the worker process and its sandbox, the
owner's side of the wire (isolation), what a call and a reply are (calls), and which models
the calls are asked in (packing)."""
