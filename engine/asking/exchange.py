"""A worker's replies as the process that owns the run reads them: within the call's timeout and
the worker's memory limit (a call in progress is watched, and its worker killed once over the
limit, before it takes the machine), never more bytes than the wire allows, and data only
(protocol.decode). Whatever happens to the worker instead (a death, a hang, a malformed or
oversized reply, a limit of its control group reached) is the call's reply, and the worker is
ended: the caller starts a fresh one for the next calls."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from engine.asking import protocol, worker
from engine.asking.calls import Packed, Reply
from engine.asking.worker_process import WorkerProcess, death
from engine.contract.adapters import Layout
from results.outcomes import CRASH, TIMEOUT
from results.sizes import format_size

_REPLY_CAP = protocol.ANSWER_CAP + (64 << 10)  # an answer at the cap, with its status and error text
_WATCH_SECONDS = 0.05  # how often a call in progress has its worker's memory checked
_ANSWERED = "answered"

Rebuild = Callable[[Layout | None, int], Packed | None]  # the packed model a reply's layout names


def next_reply(current: WorkerProcess, start: float, timeout: float, memory_limit: int | None, nodes: int = 1,
               packed: Rebuild = lambda *_: None) -> Reply:
    """``current``'s reply to its next call, or what happened to the worker instead (with
    ``nodes``: the calls of the pack in flight that are still unanswered; ``current.ended`` then
    says the worker is gone); ``packed`` makes the model the reply's layout names
    (``packing.Layouts.packed``)."""
    try:
        first = min(timeout, _WATCH_SECONDS)  # most calls answer within it: one poll, as with no limit
        waited = _ANSWERED if current.conn.poll(first) else _wait(current, first, timeout, memory_limit)
    except OSError:  # the worker is gone: reading says how
        waited = _ANSWERED
    if waited != _ANSWERED:
        held = current.held()
        current.kill()
        error = f"no answer within {timeout:g} s" if waited == TIMEOUT else \
            f"{worker.out_of_memory(held, memory_limit)} during the call"
        return Reply(waited, None, f"{error}; the worker process was killed", time.perf_counter() - start,
                     nodes=nodes)
    try:
        reply = current.conn.recv_bytes(_REPLY_CAP)
    except (EOFError, OSError) as exc:
        return _gone(current, exc, time.perf_counter() - start, nodes)
    try:
        outcome = protocol.decode(reply)
        outcome = replace(outcome, pack=packed(outcome.layout, outcome.position))
    except protocol.Malformed as exc:  # the implementation wrote to the pipe itself
        current.kill()
        return Reply(CRASH, None, f"the worker sent a malformed reply ({exc}); the worker process was killed",
                     time.perf_counter() - start, nodes=nodes)
    if exhausted := current.exhausted(outcome):
        # A process of its sandbox killed at the memory limit, or a fork refused at the process
        # limit, during this call: a crash, whatever the implementation made of it.
        current.kill()
        return Reply(CRASH, None, f"{exhausted}; the worker process was killed", outcome.seconds,
                     nodes=outcome.nodes)
    if outcome.status == CRASH:  # out of memory or sys.exit: the worker has ended itself
        current.stop()
    return outcome


def _gone(current: WorkerProcess, exc: BaseException, elapsed: float, nodes: int) -> Reply:
    """The reply of a call whose worker could not be read (``exc``): it sent more than a reply may
    take, or it is gone, and how."""
    if str(exc) == "bad message length":
        # Past the worker's own bound (protocol.ANSWER_CAP): the implementation wrote to the pipe
        # itself. Nothing of it is read.
        current.kill()
        return Reply(CRASH, None, f"the worker sent more than the {format_size(_REPLY_CAP)} a reply may take; "
                                  f"the worker process was killed", elapsed, nodes=nodes)
    exhausted = current.exhausted()  # before stop(), which removes its control group
    ended = death(current.stop())
    return Reply(CRASH, None, f"{exhausted} ({ended})" if exhausted else ended, elapsed, nodes=nodes)


def _wait(current: WorkerProcess, waited: float, timeout: float, memory_limit: int | None) -> str:
    """Go on waiting for the worker's reply after ``waited`` seconds: 'answered', 'timeout',
    or 'crash' once the worker holds more memory than its limit (checked every _WATCH_SECONDS)."""
    while True:
        if waited >= timeout:
            return TIMEOUT
        if memory_limit is not None and current.held() > memory_limit:
            return CRASH
        step = min(timeout - waited, _WATCH_SECONDS)
        if current.conn.poll(step):
            return _ANSWERED
        waited += step
