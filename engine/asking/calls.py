"""What one call of the implementation is, and what comes back: the vocabulary the process
that owns the run, the packing rules and the judging share (the worker's side of the wire is
engine.asking.worker). A call is its input, version, attributes and model form (``CallArgs``); a
reply its status and answer, and, where a packed model answered, that model's nodes (``Reply``,
``Packed``, ``Node``). The reply is made by the adapter that answered, which the layers let import
nothing of this room: it is defined in engine.contract.replies and named here with the calls."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from engine.contract.replies import Node, Packed, Reply

CallArgs = tuple[np.ndarray, int, Mapping[str, int], "str | None"]  # data, version, attributes, model form

__all__ = ["CallArgs", "Node", "Packed", "Reply"]
