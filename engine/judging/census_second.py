"""Where the census asks an input the second time: an implementation whose answers to one input
differ follows no policy, and one that answers from memory nothing wrote differs between
processes, so the second ask goes to a second worker process, started on first use (only census
tests need it); to the one runner with --isolation none, or where the implementation does not
load a second time (a device one process holds, say)."""

from __future__ import annotations

from collections.abc import Callable

from engine.asking.isolation import Runner
from engine.asking.loader import UsageError
from results.records import ANOTHER_PROCESS, SAME_PROCESS


class SecondWorker:
    """The runner of the census's second asks, beside ``first`` (the session's); ``start`` makes
    another runner of the implementation under test."""

    def __init__(self, first: Runner, start: Callable[[], Runner]) -> None:
        self._first, self._start = first, start
        self._runner: Runner | None = None

    def runner(self) -> Runner:
        if self._runner is None:
            self._runner = self._first
            if self._first.isolation != "none":
                second = self._start()
                try:
                    second.load()
                    self._runner = second
                except UsageError:
                    second.close()
        return self._runner

    def where(self) -> str:
        """Where the second asks go, as the census records it (results.records)."""
        return SAME_PROCESS if self.runner() is self._first else ANOTHER_PROCESS

    def close(self) -> None:
        if self._runner is not None and self._runner is not self._first:
            self._runner.close()
