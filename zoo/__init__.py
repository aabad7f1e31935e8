"""A zoo of ArgMin implementations under test: deliberately broken ones, correct ones that differ
in algorithm and undefined behaviour, and faulty ones that crash, hang or answer nonsense. They
stand for third-party code: none of them imports spec/ or the oracle."""

from .registry import ENTRIES, Entry, Witness, entry

__all__ = ["ENTRIES", "Entry", "Witness", "entry"]
