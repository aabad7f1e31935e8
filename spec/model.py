"""Typed, immutable views of the spec files: what the rest of the suite asks instead of
hard-coding a dtype list, a default or a range."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

_EXPR = re.compile(r"^(?P<neg>-?)r(?P<off>[+-]\d+)?$")


def evaluate(expr: str, rank: int) -> int:
    """Value of a range bound such as ``-r``, ``r-1`` or ``0`` for an input of rank ``rank``."""
    match = _EXPR.match(expr)
    if match is None:
        return int(expr)
    value = -rank if match["neg"] else rank
    return value + int(match["off"] or 0)


@dataclass(frozen=True)
class TensorType:
    """A tensor element type: its ONNX name, the numpy dtype that holds it, its family."""

    name: str
    dtype: np.dtype
    family: str  # float, signed, unsigned, bool, complex, float8

    @property
    def is_float(self) -> bool:
        return self.family in ("float", "float8")


@dataclass(frozen=True)
class Range:
    """An accepted range with bounds written in terms of the input rank r, e.g. [-r, r-1]."""

    min: str
    max: str
    stated: bool  # False where the standard implies the range without writing it down

    def bounds(self, rank: int) -> tuple[int, int]:
        return evaluate(self.min, rank), evaluate(self.max, rank)

    def __str__(self) -> str:
        return f"[{self.min}, {self.max}]" + ("" if self.stated else " (implied)")


@dataclass(frozen=True)
class Attribute:
    name: str
    type: str
    default: int
    since: int
    values: tuple[int, ...] | None = None
    range: Range | None = None

    def accepted(self) -> str:
        if self.values is not None:
            return "{" + ", ".join(map(str, self.values)) + "}"
        return str(self.range) if self.range else "any"


@dataclass(frozen=True)
class Quote:
    """Words of the ONNX operator schema a clause rests on; ``where`` names the part of the
    schema they come from ('doc', 'attribute:axis', 'checker', ...; see spec.schema.json)."""

    where: str
    text: str


@dataclass(frozen=True)
class Source:
    """What a clause rests on: quotes of the ONNX text, and, where the text does not state the
    clause itself, the reasoning that derives it (by language), so a reader can tell the two apart."""

    quotes: tuple[Quote, ...]
    inferred: Mapping[str, str] | None = None

    def reasoning(self, lang: str = "en") -> str | None:
        return None if self.inferred is None else self.inferred.get(lang) or self.inferred["en"]


@dataclass(frozen=True)
class Clause:
    """One numbered rule. Semantic clauses carry a ``check``; rejection and undefined
    clauses carry a ``when`` condition over the input."""

    id: str
    kind: str  # semantic, rejection, undefined
    title: str
    statement: Mapping[str, str]
    check: str | None = None
    when: Mapping[str, object] | None = None
    facts: Mapping[str, object] = field(default_factory=dict)
    source: Source = Source(())

    @property
    def number(self) -> int:
        return int(self.id[1:])

    @property
    def inferred(self) -> bool:
        """The ONNX text does not state this clause; it is derived (see ``source``)."""
        return self.source.inferred is not None

    @property
    def basis(self) -> str:
        """What the clause rests on: 'inferred' (derived from the text, see ``source``), or for a
        rejection clause 'model-constraint' (the text constrains models, never stating that an
        implementation must refuse an invalid one) or 'checker' (onnx.checker's rule); otherwise
        'stated'."""
        if self.inferred:
            return "inferred"
        if self.kind == "rejection":
            return "checker" if all(q.where == "checker" for q in self.source.quotes) else "model-constraint"
        return "stated"

    def text(self, lang: str = "en") -> str:
        return self.statement.get(lang) or self.statement["en"]


@dataclass(frozen=True)
class VersionSpec:
    """One version of the operator (e.g. ArgMin-13) as the spec file states it."""

    version: int  # the ArgMin version number, e.g. 13
    operator: str
    domain: str
    support_level: str
    function: bool
    shape_inference: bool
    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[tuple[str, str], ...]
    type_constraints: Mapping[str, tuple[str, ...]]
    types: tuple[TensorType, ...]  # the input's constraint T, in file order
    attributes: Mapping[str, Attribute]
    clauses: tuple[Clause, ...]
    source: Path

    def clause(self, clause_id: str) -> Clause:
        for clause in self.clauses:
            if clause.id == clause_id:
                return clause
        raise KeyError(f"ArgMin-{self.version} has no clause {clause_id}")

    @cached_property
    def _by_check(self) -> dict[str, Clause]:
        return {clause.check: clause for clause in self.clauses if clause.check}

    def clause_for_check(self, check: str) -> Clause:
        try:
            return self._by_check[check]
        except KeyError:
            raise KeyError(f"ArgMin-{self.version} has no clause with check {check!r}") from None

    def has_check(self, check: str) -> bool:
        return check in self._by_check

    def of_kind(self, kind: str) -> tuple[Clause, ...]:
        return tuple(c for c in self.clauses if c.kind == kind)

    def type(self, name: str) -> TensorType:
        for tensor_type in self.types:
            if tensor_type.name == name:
                return tensor_type
        raise KeyError(f"{name} is not in ArgMin-{self.version}'s T")

    @property
    def type_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.types)

    def signatures(self, rank: int) -> tuple[dict[str, int], ...]:
        """Every valid set of attributes a node with an input of ``rank`` can carry: each declared
        attribute omitted or set to a value it accepts (an axis in its range at that rank, the
        others to their listed values), in a fixed order."""
        choices: list[list[tuple[str, int] | None]] = []
        for name, attribute in sorted(self.attributes.items()):
            if attribute.values is not None:
                accepted = list(attribute.values)
            elif attribute.range is not None:
                low, high = attribute.range.bounds(rank)
                accepted = list(range(low, high + 1))
            else:
                accepted = [attribute.default]
            choices.append([None] + [(name, value) for value in accepted])
        return tuple({name: value for name, value in filter(None, chosen)} for chosen in itertools.product(*choices))

    def effective(self, attributes: Mapping[str, int]) -> dict[str, int]:
        """Declared attributes with defaults filled in where the node omits them."""
        return {name: attributes.get(name, a.default) for name, a in self.attributes.items()}

    def ties_choice(self, select_last_index: int) -> str | None:
        """'first' or 'last' where the tie clause decides, None where ties are undefined."""
        clause = self.clause_for_check("ties")
        if clause.kind != "semantic":
            return None
        for rule in clause.facts.get("select_last_index", []):
            if rule["value"] == select_last_index:
                return rule["choose"]
        return None
