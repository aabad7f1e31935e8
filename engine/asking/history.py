"""What a worker process ran before a call: the models it was asked, oldest first, so that a
failure the worker's state made (a runtime that reuses what an earlier model left in memory)
can be asked again after them in a fresh worker (engine.judging.reproduce).

The bound: the last ``MODELS`` models, holding at most ``ELEMENTS`` input elements between them
(the arrays are the calls' own, kept alive while held). 64 models hold a whole batch of a test
asked one by one with its twins (32 cases, in the initializer form, where every case compiles a
model of its own), and the judge's and the minimizer's asks before a failure; more would cost
every flake a longer replay (a fresh worker asks the whole history once), and the failures
measured needed the last model or two (OpenVINO 2026.4.1's: one). 16 Mi elements hold three
batches of the largest cases with their twins (a batch holds at most 2.3 Mi elements:
generators.shapes.batch_budget), and no more memory than that (64 MiB of float32)."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from engine.asking.calls import CallArgs, Node, Packed

MODELS = 64
ELEMENTS = 1 << 24


@dataclass(frozen=True)
class Ran:
    """One model a worker ran: a one-node model (or a plain function's call) of ``node``, or
    exactly the packed model ``packed``, at ``version`` in model ``form``."""

    version: int
    form: str | None
    node: Node | None = None
    packed: Packed | None = None

    @property
    def nodes(self) -> tuple[Node, ...]:
        return self.packed.nodes if self.packed is not None else (self.node,)


def asked(models: Sequence[Ran]) -> tuple[list[CallArgs], list[list[int]]]:
    """The calls that ask ``models`` again in order, each as it ran, and their units: one per model
    (``Runner.call_many`` with ``exact``: one node, its one-node model; more, exactly that packed model)."""
    calls: list[CallArgs] = []
    units: list[list[int]] = []
    for ran in models:
        units.append(list(range(len(calls), len(calls) + len(ran.nodes))))
        calls += [(node.data, ran.version, node.attributes, ran.form) for node in ran.nodes]
    return calls, units


class History:
    """The models the current worker ran (``add``); ``restart`` when a new worker takes over,
    which has run nothing."""

    def __init__(self, models: int = MODELS, elements: int = ELEMENTS) -> None:
        self._bound = (models, elements)
        self._models: deque[Ran] = deque()  # oldest first
        self._sizes: deque[int] = deque()  # each one's input elements
        self._elements = 0

    def restart(self) -> None:
        self._models.clear()
        self._sizes.clear()
        self._elements = 0

    def add(self, ran: Ran, elements: int) -> tuple[Ran, ...]:
        """Hold ``ran`` (``elements``: its inputs' size), the worker's latest; return the models
        held before it, oldest first."""
        before = tuple(self._models)
        self._models.append(ran)
        self._sizes.append(elements)
        self._elements += elements
        models, most = self._bound
        while len(self._models) > models or (self._elements > most and len(self._models) > 1):
            self._models.popleft()
            self._elements -= self._sizes.popleft()
        return before
