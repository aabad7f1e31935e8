"""``--isa NAME``: the cap on the instruction set of a built-in whose runtime offers one
(engine.runtimes.entry.IsaCap: OpenVINO, through oneDNN's ONEDNN_MAX_CPU_ISA). The cap is the
runtime's own environment variable, set in the worker's environment (engine.asking.sandbox.environment);
``--isa native`` clears it, so the runtime uses all the CPU has. The run records the cap its
worker ran under, whether ``--isa`` set it or the run's environment passed it on (``recorded``)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from engine import runtimes
from engine.asking.loader import UsageError
from engine.runtimes.entry import NATIVE, IsaCap


def offering() -> list[str]:
    """The words of the built-ins whose runtime can be capped."""
    return [runtime.word for runtime in runtimes.RUNTIMES if runtime.isa_cap is not None]


def _cap(impl: str) -> IsaCap | None:
    found = runtimes.find(impl)
    return found[0].isa_cap if found else None


def parse(impl: str, text: str | None) -> str | None:
    """The --isa value for ``impl``: the cap's value as its variable takes it (``AVX2``), NATIVE,
    or None where --isa is not given. UsageError (one line) for a plug-in, a built-in whose runtime
    offers no cap, or a value the runtime's library does not take."""
    if text is None:
        return None
    cap = _cap(impl)
    if cap is None:
        found = runtimes.find(impl)
        what = f"the built-in {found[0].word!r} offers no cap" if found else f"{impl!r} is a plug-in"
        raise UsageError(f"--isa caps the instruction set of a built-in runtime that offers a cap, and {what}; "
                         f"built-ins that offer one: {', '.join(offering())} (drop --isa, or e.g. --impl openvino "
                         f"--isa avx2)")
    if text.strip().lower() == NATIVE:
        return NATIVE
    value = text.strip().upper()
    if value not in cap.values:
        raise UsageError(f"--isa {text!r} is not a cap {cap.library} takes; choose from "
                         f"{', '.join(v.lower() for v in cap.values)} or {NATIVE} (e.g. --isa avx2)")
    return value


def changes(impl: str, isa: str | None) -> dict[str, str | None]:
    """What --isa changes in the worker's environment: its runtime's variable set to the cap
    (the others of the cap cleared, None), every one cleared for NATIVE; nothing without --isa."""
    cap = _cap(impl)
    if cap is None or isa is None:
        return {}
    first, *others = cap.variables
    return {first: None if isa == NATIVE else isa, **dict.fromkeys(others)}


def recorded(impl: str, isa: str | None, outer: Mapping[str, str] = os.environ) -> dict[str, str] | None:
    """The cap the worker runs under, for the report: ``variable``, ``value`` (as set, upper
    case) and ``by`` (``--isa``, or ``environment`` where the run's own environment, ``outer``,
    passed it on); None where there is none (no cap offered, none set, or --isa native)."""
    cap = _cap(impl)
    if cap is None:
        return None
    worker = {**outer, **changes(impl, isa)}
    name = next((variable for variable in cap.variables if worker.get(variable)), None)
    if name is None:
        return None
    return {"variable": name, "value": worker[name].strip().upper(), "by": "--isa" if isa else "environment"}
