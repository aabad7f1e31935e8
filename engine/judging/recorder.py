"""The records a session makes and how they leave it: each to the stream as soon as it is final
(results.stream), or to an xdist controller in batches (``handed``); each test's end mark after
the records it made, so that a run knows which tests it lost (results.records.lost_tests)."""

from __future__ import annotations

from results import CaseResult, CensusRecord
from results.records import TestEnd, Usage
from results.stream import Writer


class Recorder:
    """The recording half of a session (engine.judging.session.Session); ``stream``, when given,
    receives every record as soon as it is final."""

    def __init__(self, stream: Writer | None) -> None:
        self.stream = stream
        self.results: list[CaseResult] = []
        self.census: list[CensusRecord] = []
        self.ends: list[TestEnd] = []  # the end marks of the tests this process ran (``ended``)
        self._taken = (0, 0)  # how many results and census records ``handed`` has handed out
        self._ends_taken = 0  # how many end marks it has handed out

    def _record(self, result: CaseResult, census: list[CensusRecord]) -> None:
        self.results.append(result)
        self.census.extend(census)
        if self.stream is not None:
            self.stream.result(result)
            for record in census:
                self.stream.census(record)

    def delivered(self) -> tuple[int, int]:
        """How many case and census records this process has made so far (``ended`` counts from it)."""
        return len(self.results), len(self.census)

    def ended(self, test: str, since: tuple[int, int]) -> None:
        """Test ``test`` (its test key) has made all its records, those after ``since``: its end
        mark goes to the stream after them, or with them to the controller (``handed``)."""
        mark = TestEnd(test, len(self.results) - since[0], len(self.census) - since[1])
        self.ends.append(mark)
        if self.stream is not None:
            self.stream.end(mark)

    def handed(self, usage: list[Usage]) -> tuple[list[CaseResult], list[CensusRecord], list[Usage], list[TestEnd]]:
        """The records made since the last call, ``usage`` and the end marks of the tests that made
        them: what an xdist worker hands to its controller."""
        results, census = self._taken
        self._taken = (len(self.results), len(self.census))
        ends, self._ends_taken = self.ends[self._ends_taken:], len(self.ends)
        return self.results[results:], self.census[census:], usage, ends
