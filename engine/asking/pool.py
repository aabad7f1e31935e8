"""The worker processes of one Runner: the one that asks its next calls, and, once the
implementation has crashed or hung, the next one, started ahead as soon as the current one has
loaded, so that it loads in its sandbox while the current one works: a fresh interpreter takes
up to a second to load a runtime, which a crash then no longer costs."""

from __future__ import annotations

from engine.asking.launch import Launch
from engine.asking.loader import UsageError
from engine.asking.worker_process import WorkerProcess


class Pool:
    """The current worker (None until started, and once it has ended) and the spare."""

    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        self.current: WorkerProcess | None = None
        self.spare: WorkerProcess | None = None  # the next worker, started ahead (see ``ready``)
        self.restarts = 0  # workers started after the first, i.e. after crashes and timeouts
        self._started = 0

    def start(self) -> WorkerProcess:
        """Make the worker for the next calls: the spare, where one was started ahead."""
        self.current, self.spare = self.spare or WorkerProcess(self.launch), None
        self.restarts += self._started > 0
        self._started += 1
        return self.current

    def ready(self, current: WorkerProcess) -> str | None:
        """Wait until ``current``, the current worker, has loaded the implementation: None, or why
        it did not. A worker started ahead that did not load is replaced by one started now: it
        loaded while another worker lived, which held what the implementation takes only once (a
        device). Once the implementation has crashed or hung, the spare is started as soon as the
        current worker has loaded."""
        try:
            problem = current.wait_ready()
        except UsageError:
            if not current.ahead:
                raise
            self.current = current = WorkerProcess(self.launch)
            problem = current.wait_ready()
        if problem is None and self.restarts and self.spare is None:
            self.spare = WorkerProcess(self.launch, ahead=True)
        return problem

    def kill(self) -> None:
        """End the current worker at once: it may have answers in flight that no one will read."""
        if self.current is not None:
            self.current.kill()
            self.current = None

    def close(self) -> None:
        if self.spare is not None:
            self.spare.kill()
            self.spare = None
        if self.current is not None:
            self.current.stop()
            self.current = None
