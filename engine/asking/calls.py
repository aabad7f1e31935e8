"""What one call of the implementation is, and what comes back: the vocabulary the process
that owns the run, the packing rules and the judging share (the worker's side of the wire is
engine.asking.worker). A call is its input, version, attributes and model form; a reply its
status and answer, and, where a packed model answered, that model's nodes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

CallArgs = tuple[np.ndarray, int, Mapping[str, int], "str | None"]  # data, version, attributes, model form


class Node(NamedTuple):
    """One node of a packed model: the input it was fed and its attributes."""

    data: np.ndarray
    attributes: Mapping[str, int]
    dummy: bool = False  # a signature model's dummy input (zeros of shape (1,) * rank), no call's


class Packed:
    """The packed model that answered a call, as the process that owns the run rebuilds it from
    the worker's layout (engine.asking.worker.Layout): its nodes in order, the calls' own arrays and
    dummies made here, and the call's node. Enough to ask that very model again. The nodes are
    made when first read (a failure's model is read; most answers' models never are) and shared
    by every reply the model gave."""

    def __init__(self, nodes: tuple[Node, ...] | Callable[[], tuple[Node, ...]], position: int,
                 dummies: bool = False) -> None:
        self._nodes = nodes
        self.model = nodes  # what identifies the model: the same for every reply it gave
        self.position = position
        self.dummies = dummies  # whether some nodes are dummies: a signature model (engine.adapters.signatures)

    @property
    def nodes(self) -> tuple[Node, ...]:
        if callable(self._nodes):
            self._nodes = self._nodes()
        return self._nodes


@dataclass
class Reply:
    """What one call did. ``seconds`` is the implementation's own time where it answered (the
    worker measures it, so the two modes agree) and the wall time of a crash or timeout."""

    status: str  # 'ok' | 'unsupported' | 'raised' | 'crash' | 'timeout' | 'oversize'
    value: np.ndarray | None  # np.asarray(return value) when status == 'ok'
    error: str | None  # 'ExceptionType: message', what happened to the worker, or the oversize answer's shape
    seconds: float
    by_value: bool = False  # the answer had no element type of its own (protocol.typeless): judged by its values
    declared: tuple | None = None  # the output shape a model-based implementation declared (int or None per dim)
    nodes: int = 1  # nodes of the model that answered: 1 a one-node model (or a function), more a packed one
    split: bool = False  # its pack failed as a whole and was split to answer it (worker.Answered)
    # Models the implementation compiled for this call (a pack's are on its first reply), loaded
    # from the compile cache instead, and the seconds both took (worker.Models).
    compiles: int = 0
    loaded: int = 0
    model_seconds: float = 0.0
    compiled_nodes: int = 0  # the nodes the compiled models held
    pack: Packed | None = None  # the packed model that answered (nodes > 1), where the worker said
    # The models its worker ran before the one that answered it, oldest first, as far as the
    # runner's history holds them (engine.asking.history.Ran).
    before: tuple = ()
