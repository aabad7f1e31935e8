"""What the worker process and the adapters it loads agree on. The adapters run inside the
worker, which loads them through the ``--impl`` loader, so neither may import the other: what
crosses between them lives here, and this module imports nothing of the engine."""

import functools

# The environment variable that names a worker's folder of the compile cache: the worker sets it
# while it loads the implementation (engine.asking.worker.compile_cache_at), an adapter reads it
# (engine.adapters.compile_cache.from_environment).
COMPILE_CACHE_ENV = "ARGMIN_COMPILE_CACHE"


class NotPackable(Exception):
    """The adapter cannot answer a packed model (a ``model:`` plug-in whose callable returns one
    output only): its calls are made one by one."""


# The nodes of a packed model that answered a call, in order: an index i >= 0 is the call at index i
# of the calls asked together (a pack's, or a request's unit: ``answers`` counts from its first
# call); -1 - s is a dummy input (zeros of shape (1,) * rank, the type of the answered call) with
# the rank and attributes ``dummy_slots(version)[s]``, which a signature model feeds the nodes no
# call of the pack took (engine.adapters.signatures). With it, the process that owns the run can
# rebuild the model that gave a packed-only failure (engine.judging.pack_search).
Layout = tuple[int, ...]
SAME: Layout = ()  # on the wire: the previous reply's layout (a request sends each model's once)
SIGNATURE_RANKS = range(1, 9)  # the ranks a signature model's nodes have (generators.shapes.MAX_RANK)


@functools.cache
def dummy_slots(version: int) -> tuple[tuple[int, tuple[tuple[str, int], ...]], ...]:
    """Every valid signature of every rank, as (rank, sorted attributes): a dummy's code in a
    Layout is its index here. (The spec is imported here, not with this module: a worker that
    serves a plain function never loads it.)"""
    import spec

    vspec = spec.load(version)
    return tuple((rank, tuple(sorted(attributes.items()))) for rank in SIGNATURE_RANKS
                 for attributes in vspec.signatures(rank))


@functools.cache
def dummy_codes(version: int) -> dict[tuple[int, tuple[tuple[str, int], ...]], int]:
    """Each (rank, sorted attributes)'s code among ``dummy_slots``."""
    return {slot: code for code, slot in enumerate(dummy_slots(version))}

# The signatures a test draws its cases within (generators.schedule), as the worker is told them
# with each pack: (rank, the node's attributes as sorted pairs). In the symbolic form an adapter
# that compiles per node serves them from one model a rank (engine.adapters.signatures).
Schedule = tuple[tuple[int, tuple[tuple[str, int], ...]], ...]


def schedule_compiles(schedule: Schedule) -> int:
    """The most models compiling a schedule's takes (engine.adapters.signatures: the whole, then
    each rank's split, at most 2k - 1 models for k signatures): the worker compiles them before it
    answers the schedule's first calls, each compile allowed the run's --timeout."""
    return 1 + 2 * len(schedule)
