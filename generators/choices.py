"""Structural choices decoded from one drawn byte string.

Why bytes: Hypothesis charges about as much for one ``st.integers`` draw as for one fixed-size
``st.binary`` draw, and a case needs twenty-odd structural choices (shape, axis, attributes,
value family, plant positions). Drawing them one by one costs more than building the tensor.
So every case draws one short byte string and decodes it here.

Shrinking still works because of two rules:
- every choice reads its own fixed bytes (a field never shifts when another field shrinks), and
- every choice is a monotone function of its bytes with all-zero bytes meaning the simplest
  option (rank 1, length 1, position 0, no plants, attribute omitted).
Hypothesis shrinks a byte string byte by byte toward zero, so each choice shrinks toward its
simplest option independently of the others."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def weighted(*entries: tuple[T, int]) -> tuple[T, ...]:
    """A lookup table in which each option appears ``weight`` times, simplest option first."""
    return tuple(option for option, weight in entries for _ in range(weight))


class Choices:
    """Reads a byte region field by field; reading past the end yields zeros (the simplest)."""

    __slots__ = ("_at", "_raw")

    def __init__(self, raw: bytes) -> None:
        self._raw = raw
        self._at = 0

    def take(self, size: int) -> bytes:
        """The next ``size`` bytes, zero-padded (for fields decoded in bulk)."""
        start = self._at
        self._at = start + size
        return self._raw[start:start + size].ljust(size, b"\0")

    def region(self, size: int) -> Choices:
        """The next ``size`` bytes as their own reader, so later fields keep fixed offsets."""
        return Choices(self.take(size))

    def byte(self) -> int:
        at = self._at
        self._at = at + 1
        return self._raw[at] if at < len(self._raw) else 0

    def u16(self) -> int:
        high = self.byte()
        return high << 8 | self.byte()

    def pick(self, options: Sequence[T]) -> T:
        """One option; byte 0 gives the first, larger bytes move monotonically down the table."""
        return options[self.byte() * len(options) >> 8]

    def chance(self, percent: int) -> bool:
        """True with about ``percent`` % probability; byte 0 gives False."""
        return self.byte() * 100 >= (100 - percent) * 256
