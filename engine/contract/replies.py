"""What one call of the implementation gives back, from the adapter that answered it to the judge:
one type, ``Reply``. An adapter makes it in the worker (what the runtime returned, the output
shape it declared, the packed model's layout), the worker reads the answer and times the call,
the wire carries it (engine.asking.protocol: ``encode`` in the worker, ``decode`` in the process
that owns the run), and the owner adds the packed model that answered (``Packed``) and the models
its worker ran before it. It lives here, below the adapters that make it; engine.asking.calls
names it for the rooms above."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from engine.contract.adapters import Layout


class Node(NamedTuple):
    """One node of a packed model: the input it was fed and its attributes."""

    data: np.ndarray
    attributes: Mapping[str, int]
    dummy: bool = False  # a signature model's dummy input (zeros of shape (1,) * rank), no call's


class Packed:
    """The packed model that answered a call, as the process that owns the run rebuilds it from
    the worker's layout (engine.asking.packing.Layouts): its nodes in order, the calls' own arrays
    and dummies made here, and the call's node. Enough to ask that very model again. The nodes are
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


@dataclass(frozen=True)
class Reply:
    """What one call did. ``seconds`` is the implementation's own time where it answered (the
    worker measures it, so the two isolation modes agree) and the wall time of a crash or timeout."""

    status: str  # 'ok' | 'unsupported' | 'raised' | 'crash' | 'timeout' | 'oversize' | 'unasked'
    # What came back where status == 'ok': from the adapter, what the runtime returned; once the
    # worker has read it (engine.asking.worker), numpy's view of it, which is what crosses the wire.
    value: Any = None
    error: str | None = None  # 'ExceptionType: message', what happened to the worker, or the oversize answer's shape
    seconds: float = 0.0
    by_value: bool = False  # the answer had no element type of its own (protocol.typeless): judged by its values
    declared: tuple | None = None  # the output shape a model-based implementation declared (int or None per dim)
    nodes: int = 1  # nodes of the model that answered: 1 a one-node model (or a function), more a packed one
    split: bool = False  # its pack failed as a whole and was split to answer it (worker.answers)
    # Models the implementation compiled for this call (a pack's are on its first reply), loaded
    # from the compile cache instead, the seconds both took and the nodes the compiled ones held
    # (protocol.Models, counted by the worker).
    compiles: int = 0
    loaded: int = 0
    model_seconds: float = 0.0
    compiled_nodes: int = 0
    # A packed model's nodes as the adapter fed them (engine.contract.adapters.Layout, counted in
    # the calls asked together) and this call's node among them: what the wire tells the owner.
    layout: Layout | None = None
    position: int = 0
    pack: Packed | None = None  # that packed model as the owner rebuilt it (nodes > 1), where the worker told it
    # The models its worker ran before the one that answered it, oldest first, as far as the
    # runner's history holds them (engine.asking.history.Ran).
    before: tuple = ()
