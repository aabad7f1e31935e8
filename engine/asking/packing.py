"""What a run compiles: the calls a test asks, cut into the models a runtime compiles.

For a runtime that compiles (TVM, IREE, OpenVINO), a run costs as many compiles as it builds
models, so every rule that decides which model a call is asked in lives here, in the process that
owns the run, and can be counted without a runtime (``Planner.packs`` needs none):

- *Groups.* Calls in a packed form (``PACKED_FORMS``) are grouped by version, element type,
  form and ``doubt``: what may make the runtime refuse them (an empty input, attribute values
  outside their lists). Each kind packs apart: one refusal fails a whole pack.
- *Witnesses.* The first valid call of a group in a batch is asked alone, a one-node model: bugs
  that show only there keep being sampled.
- *Packs.* The others go into packed models of at most ``PACK_ELEMENTS`` input elements and the
  group's node cap, which halves when a pack of the group fails as a whole and doubles when one
  answers.
- *Probes.* Doubtful kinds start at one node: the first call of a kind nothing is known of is
  asked alone first (``probes``). Answered, the kind packs as valid calls do; refused, each call
  of it keeps a model of its own.
- *Refused types.* A group whose call asked alone was answered "unsupported", and none of whose
  calls was answered, is refused: a pack of it refused the same way is refused as a whole
  instead of compiled call by call.
- *Twins.* A pack holding cases with state twins is asked again with the twins in place, on
  the model compiled for it (``with_twins``).
- *Second asks.* The census asks its inputs again in a second worker, in the packs the first
  worker was asked in (``within``): the compile cache holds those models.

What the worker then does with a pack is engine.asking.worker.answers (a pack that fails is bisected;
one refused as unsupported is asked call by call unless its group is refused), and what a
model is made of is the adapter's (a symbolic pack may be served by its rank's signature model,
engine.adapters.signatures; a compiled model is kept in the compile cache,
engine.adapters.compile_cache).

The smallest packed model that still shows a failure only packed models show is searched for by
engine.judging.pack_search."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

import numpy as np

import spec
from engine.asking import protocol
from engine.asking.calls import CallArgs, Node, Packed, Reply
from engine.contract.adapters import SAME, Layout, dummy_slots
from engine.contract.forms import INITIALIZER, STATIC, SYMBOLIC
from results.outcomes import OK, UNSUPPORTED

# A packed model holds at most this many input elements and nodes: large enough that compiling
# it costs a fraction of a millisecond per node (a batch of the largest cases a profile draws
# fits in a few packs), small enough that a failing pack is bisected in a few steps
# (engine.asking.worker.answers) and a crashing one in a few fresh workers.
PACK_ELEMENTS = 1 << 20
PACK_NODES = 64
PACKED_FORMS = (SYMBOLIC, STATIC, INITIALIZER)
TWIN_FORMS = (SYMBOLIC, STATIC)  # where a twin runs on its case's model (an initializer model is new each time)


def group(call: CallArgs) -> tuple | None:
    """The pack group of a call: version, element type, form and ``doubt``; None where it is not
    in a packed form."""
    data, version, attributes, form = call
    return (version, data.dtype, form, doubt(data, version, attributes)) if form in PACKED_FORMS else None


def doubt(data: np.ndarray, version: int, attributes: Mapping[str, int]) -> tuple[str, ...]:
    """What census inputs have that runtimes often refuse: an empty input, or the attributes
    whose values are outside what they accept at this rank (keepdims=2, ArgMin-1's negative
    axes); () for a valid, non-empty input."""
    if data.size == 0:
        return ("empty",)
    accepted = _accepted(version, data.ndim)
    return tuple(sorted(name for name, value in attributes.items() if value not in accepted.get(name, ())))


@functools.cache
def _accepted(version: int, rank: int) -> dict[str, frozenset[int]]:
    """The values each attribute accepts on an input of ``rank``."""
    found: dict[str, set[int]] = {}
    for attributes in spec.load(version).signatures(rank):
        for name, value in attributes.items():
            found.setdefault(name, set()).add(value)
    return {name: frozenset(values) for name, values in found.items()}


def within(units: list[list[int]] | None, kept: list[int]) -> list[list[int]] | None:
    """``units`` (packs of positions) restricted to the positions in ``kept``, each renumbered
    as its place in ``kept``; None stays None (the runner cuts packs itself)."""
    if units is None:
        return None
    place = {position: number for number, position in enumerate(kept)}
    return [cut for unit in units if (cut := [place[i] for i in unit if i in place])]


class Planner:
    """The packs of one runner's calls, adapting to what its runtime answered (one per Runner:
    a second worker process adapts on its own)."""

    def __init__(self) -> None:
        self._caps: dict[tuple, int] = {}  # node cap per group: adapts to failures
        self._refused: set[tuple] = set()  # groups refused as unsupported so far
        self._computed: set[tuple] = set()  # groups a call of which was answered otherwise

    def packs(self, calls: Sequence[CallArgs]) -> list[list[int]]:
        """The calls' indices cut into packs, in the order they were made: per group, a witness
        (valid groups), then packs within the element budget and the group's node cap."""
        units: list[list[int]] = []
        open_packs: dict[tuple, tuple[list[int], int] | None] = {}
        for index, call in enumerate(calls):
            key = group(call)
            if key is None:
                units.append([index])
                continue
            if key not in open_packs:
                open_packs[key] = None
                if not key[-1]:
                    units.append([index])
                    continue
            size = call[0].size
            current = open_packs[key]
            if current is None or len(current[0]) >= self._cap(key) or current[1] + size > PACK_ELEMENTS:
                units.append([index])
                open_packs[key] = (units[-1], size)
            else:
                current[0].append(index)
                open_packs[key] = (current[0], current[1] + size)
        return units

    def with_twins(self, calls: Sequence[CallArgs], twins: Sequence[bool]) -> tuple[list[int], list[list[int]]]:
        """Packs of ``calls``, some of which have a state twin (``twins``): each pack holding one
        is followed by the same pack again, the twins in place of their cases, so the twins run
        on the model compiled for their cases and state kept between calls is put to the test
        packed too. Returns what each asked position is (the call's index, or ``~index`` for its
        twin, or ``index`` again for a call asked once more, unkept) and the packs of positions."""
        asked = list(range(len(calls)))
        units = []
        for unit in self.packs(calls):
            units.append(unit)
            if any(twins[index] for index in unit):
                units.append(list(range(len(asked), len(asked) + len(unit))))
                asked += [~index if twins[index] else index for index in unit]
        return asked, units

    def probes(self, calls: Sequence[CallArgs]) -> list[int]:
        """The first call of each doubtful kind nothing is known of yet, where more calls of that
        kind follow: asked alone before the others are cut into packs, it tells whether the
        runtime answers the kind. The others would otherwise all be cut at one node a model."""
        first: dict[tuple, int] = {}
        more: set[tuple] = set()
        for index, call in enumerate(calls):
            key = group(call)
            if key is not None and key[-1] and key not in self._caps:
                if key in first:
                    more.add(key)
                first.setdefault(key, index)
        return [index for key, index in first.items() if key in more]

    def adapt(self, calls: Sequence[CallArgs], unit: Sequence[int], failed: bool) -> None:
        """A group's node cap halves when one of its packs failed as a whole (it was bisected)
        and doubles, up to PACK_NODES, when a pack or single call of it answered: a type the
        runtime refuses soon costs no more compiles than without packing. A doubtful kind
        answered for the first time takes the cap of valid calls at once."""
        key = group(calls[unit[0]])
        if key is None:
            return
        if failed:
            self._caps[key] = max(1, len(unit) // 2)
        else:
            self._caps[key] = PACK_NODES if key not in self._caps else min(PACK_NODES, 2 * self._cap(key))

    def _cap(self, key: tuple) -> int:
        return self._caps.get(key, 1 if key[-1] else PACK_NODES)

    def answered(self, calls: Sequence[CallArgs], unit: Sequence[int], replies: Mapping[int, Reply]) -> None:
        """``adapt`` after ``unit`` was answered: failed where the pack was split to answer it,
        grown where the pack (or a single call) answered. And whether the unit's group is
        refused: a call asked alone answered "unsupported", and no call of the group was answered
        (an error is no sign either way: an invalid axis fails before a kernel is looked for)."""
        answers = [replies[index] for index in unit]
        if len(unit) > 1 and any(reply.split for reply in answers):
            self.adapt(calls, unit, True)
        elif len(unit) > 1 or answers[0].status == OK:  # a pack answered (or refused) as a whole
            self.adapt(calls, unit, False)
        key = group(calls[unit[0]])
        if key is None or key in self._computed:
            return
        if any(reply.status == OK for reply in answers):
            self._computed.add(key)
            self._refused.discard(key)
        elif len(unit) == 1 and answers[0].status == UNSUPPORTED:
            self._refused.add(key)

    def refused(self, calls: Sequence[CallArgs], unit: Sequence[int]) -> bool | None:
        """Whether ``unit`` belongs to a group refused as unsupported so far (see ``answered``):
        a pack of it that the runtime refuses as unsupported is then refused as a whole, each of
        its calls answered "unsupported", instead of being asked call by call (a model each).
        None where nothing is known of the group yet (the worker then goes by what a call asked
        alone earlier in the same request answered: ``worker.Refusals``)."""
        key = group(calls[unit[0]])
        return True if key in self._refused else False if key in self._computed else None


# --- packed models rebuilt from the worker's layouts -----------------------------------------

MAX_NODES = 1024  # no model the suite builds has more nodes (a signature model of rank 8 has 153)


class Layouts:
    """The packed models that replies name by layout (engine.contract.adapters.Layout), rebuilt from the
    calls asked: a request's replies tell a model's layout once, then SAME (worker.serve), and
    its nodes are made once, shared by the replies of every call it answered."""

    def __init__(self, calls: Sequence[CallArgs]) -> None:
        self._calls = calls
        self._last: tuple[Layout, Sequence[int], tuple[Node, ...]] | None = None

    def packed(self, layout: Layout | None, position: int, unit: Sequence[int], at: int) -> Packed | None:
        """The model of ``layout`` (counted in the calls of ``unit``) that answered ``calls[unit[at]]``
        at node ``position``. Malformed where it names a call outside the unit or a signature the
        rank lacks, or puts another call at that node."""
        if layout is None:
            return None
        last = self._last
        if layout == SAME:
            if last is None:
                raise protocol.Malformed("the same layout as no reply before")
            layout = last[0]
        if not 0 <= position < len(layout) or layout[position] != at or len(layout) > MAX_NODES:
            raise protocol.Malformed("a layout without the call it answered")
        if last is None or last[0] != layout or last[1] is not unit:
            self._last = last = (layout, unit, self._nodes(layout, unit, at))
        return Packed(last[2], position, min(layout) < 0)

    def _nodes(self, layout: Layout, unit: Sequence[int], at: int) -> Callable[[], tuple[Node, ...]]:
        """What makes the layout's nodes, once it is known to name only calls of the unit and
        signatures of the rank."""
        data, version, _, _ = self._calls[unit[at]]
        slots = dummy_slots(version)
        if not -len(slots) <= min(layout) <= max(layout) < len(unit):
            raise protocol.Malformed("a layout naming no call of its pack and no signature")
        calls = self._calls

        def node(entry: int) -> Node:
            if entry >= 0:
                return Node(calls[unit[entry]][0], calls[unit[entry]][2])
            rank, attributes = slots[-1 - entry]
            return Node(np.zeros((1,) * rank, data.dtype), dict(attributes), True)
        return functools.cache(lambda: tuple(node(entry) for entry in layout))
