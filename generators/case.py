"""A generated case: the input, the attributes set on the node, and the partitions it exercises."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from spec import type_of

T = TypeVar("T")


@dataclass(frozen=True)
class Case:
    """One ArgMin input for one version.

    ``attributes`` holds exactly the attributes set on the node: an omitted attribute is absent,
    which is a different input from one set to its default. ``tags`` name the input partitions
    the case exercises, as ``"key:value"`` strings (``"type:float16"``, ``"ties:far-apart"``),
    so a report can count how often each partition was reached. ``intent`` is the kind the
    generator meant to produce (semantic, rejection or undefined); the oracle has the last word."""

    version: int
    data: np.ndarray
    attributes: Mapping[str, int] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    intent: str = "semantic"

    @property
    def type_name(self) -> str:
        tensor_type = type_of(self.data.dtype)
        return tensor_type.name if tensor_type else str(self.data.dtype)

    def memo(self, name: str, compute: Callable[[], T]) -> T:
        """A value derived from this case, computed once and kept with it (a case never changes):
        its key, its twin, what the engine works out from it (the oracle's expectation, the
        input's digest). Two threads may both compute it; they get equal values."""
        if name not in self.__dict__:
            self.__dict__[name] = compute()
        return self.__dict__[name]

    def key(self) -> str:
        """A digest of the input (version, numpy dtype, shape, values, attributes set): equal keys,
        equal inputs, whatever the tags. Computed once per case (a long input takes a while to
        hash), or given by ``decoded_from``."""
        return self.memo("_key", self._digest)

    def _digest(self) -> str:
        digest = hashlib.sha1(self.data.dtype.str.encode() + repr(self.data.shape).encode() + self.data.tobytes())
        digest.update(repr(sorted(self.attributes.items())).encode() + str(self.version).encode())
        return digest.hexdigest()

    def decoded_from(self, origin: bytes) -> Case:
        """This case, keyed by what it was made from (the bytes it was decoded from): the same
        bytes always make the same input, and hashing them costs far less than hashing the input."""
        self.__dict__["_key"] = hashlib.sha1(b"origin:" + origin).hexdigest()
        return self

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(repr(self))  # Hypothesis' printer would otherwise spell out every field

    def __repr__(self) -> str:
        attrs = ", ".join(f"{k}={v}" for k, v in self.attributes.items())
        # Hypothesis prints this for every falsifying example: long inputs are abridged here
        # (the report's counterexample holds them exactly).
        values = self.data.tolist() if self.data.size <= 64 else f"<{self.data.size} elements>"
        return (f"Case(ArgMin-{self.version}, {self.type_name}{list(self.data.shape)}"
                f"{', ' + attrs if attrs else ''}, data={values!r})")


class Batch(tuple):
    """The cases of one Hypothesis example. Printed with repeats folded: a shrunk batch is
    mostly the simplest input, which would otherwise fill the falsifying example."""

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(repr(self))

    def __repr__(self) -> str:
        shown = dict.fromkeys(map(repr, self))
        folded = len(self) - len(shown)
        return f"Batch({', '.join(shown)}{f', and {folded} repeated' if folded else ''})"
