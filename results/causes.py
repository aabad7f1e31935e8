"""One root cause, one entry: telling which failures of a version share a cause.

A clause is listed as failing only for failures with a cause of their own. Two failures of the
same version and type share a cause when

- both are refusals, errors, crashes or hangs with the same message once the details that vary
  with the input are blanked (type names, numbers, sizes, quoted names: IREE's "Got N bytes"), e.g.
  an empty float16 input failing C9 with the error every float16 input fails C1 with; or
- both are wrong answers about which element is smallest (a wrong minimum, tie or index) whose
  smallest counterexamples both need the same special value (an infinity, NaN, a type's extreme):
  tract's `[inf, inf]` tie goes with its `[inf, FLT_MAX]` minimum.

The later clause (by number) then goes with the earlier one. The heuristic only merges listings:
every failure keeps its own card and counterexample."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from functools import cache

import ml_dtypes
import numpy as np

import spec

from .records import CaseResult, Tensor

# Problems of a returned answer that are about which element is the smallest.
_ORDER_PROBLEMS = ("not-a-minimum", "wrong-tie", "index-range")
_QUOTED = re.compile(r"(?<!\w)'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`")  # not the apostrophe of "wasn't"
# Long messages are recorded cut short at a fixed length, so where they end depends on the digits
# before: only their beginning is compared.
_COMPARED = 200
_WITH_DIGITS = re.compile(r"[\w.+-]*\d[\w.+-]*")


@cache
def _type_names() -> re.Pattern:
    return re.compile("|".join(re.escape(n) for n in sorted(spec.catalogue(), key=len, reverse=True)))


def signature(text: str) -> str:
    """A message with what varies from input to input blanked: quoted names, type names, and every
    token holding a digit (numbers, sizes, shapes such as 1x2xf32)."""
    text = _QUOTED.sub("<name>", text)
    text = _type_names().sub("<type>", text)
    return " ".join(_WITH_DIGITS.sub("#", text).split())[:_COMPARED]


def special_values(tensor: Tensor) -> frozenset[str]:
    """The special values an input holds: infinities, NaN, and the finite extremes of its type
    (an unsigned type's 0 is too ordinary to count)."""
    entry = spec.catalogue().get(tensor.type_name)
    found: set[str] = set()
    if entry is None:
        return frozenset()
    if entry.is_float:
        values = np.array([float(v) for v in tensor.values], dtype=np.float64)
        top = float(ml_dtypes.finfo(entry.dtype).max)
        for name, hit in (("+inf", np.isposinf(values)), ("-inf", np.isneginf(values)), ("nan", np.isnan(values)),
                          ("max", values == top), ("lowest", values == -top)):
            if hit.any():
                found.add(name)
    elif entry.family in ("signed", "unsigned"):
        info = np.iinfo(entry.dtype)
        values_int = {int(v) for v in tensor.values}
        if info.max in values_int:
            found.add("max")
        if entry.family == "signed" and info.min in values_int:
            found.add("lowest")
    return frozenset(found)


def _evidence(result: CaseResult) -> tuple[str, object] | None:
    ce = result.counterexample
    if ce is None:
        return None
    if isinstance(ce.actual, str):
        return "message", signature(ce.actual)
    if result.problem in _ORDER_PROBLEMS and isinstance(ce.input, Tensor):
        return "values", special_values(ce.input)
    return None


def _shares(earlier: tuple[str, object], later: tuple[str, object]) -> bool:
    if earlier[0] != later[0]:
        return False
    if earlier[0] == "message":
        return earlier[1] == later[1]
    return bool(earlier[1] & later[1])  # type: ignore[operator]


def clause_number(clause_id: str | None) -> int:
    digits = "".join(ch for ch in clause_id or "" if ch.isdigit())
    return int(digits) if digits else 0


def own_causes(failures: Sequence[CaseResult]) -> tuple[list[bool], dict[int, str]]:
    """For each failure, whether its cause is its own; and for those that are not, the clause
    whose failure (same version and type, lower clause number) it goes with. A failure recorded
    without a counterexample (another occurrence) goes as its recorded siblings do."""
    evidence = [_evidence(f) for f in failures]
    by_key: dict[tuple, list[int]] = defaultdict(list)
    for i, f in enumerate(failures):
        by_key[f.version, f.type_name, f.clause, f.problem, f.outcome].append(i)
    same: dict[int, str] = {}
    shown: dict[tuple, list[tuple[str, tuple[str, object]]]] = defaultdict(list)  # (version, type) -> own evidence
    for key in sorted(by_key, key=lambda k: clause_number(k[2])):
        members = by_key[key]
        seen = [evidence[i] for i in members if evidence[i] is not None]
        earlier = shown[key[0], key[1]]
        partner = next((clause for clause, ev in earlier if clause != key[2] and seen
                        and all(_shares(ev, mine) for mine in seen)), None)
        if partner is None:
            earlier.extend((key[2] or "", ev) for ev in seen)
        else:
            same.update(dict.fromkeys(members, partner))
    return [i not in same for i in range(len(failures))], same
