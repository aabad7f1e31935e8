"""Whether runs put side by side were made on one instruction set: the CPU's extensions and the
cap the runtime ran under, as each report's certificate records them (results.cpu, engine.config.isa).
A runtime that picks its kernels by the CPU (OpenVINO, through oneDNN) can answer differently on
another instruction set or under another cap, so compare, the matrix and the history say so."""

from __future__ import annotations

from reports.document.parts import Certificate, IsaCap

# What can differ between runs (message keys "isa-differ-*").
EXTENSIONS, CAP = "extensions", "cap"


def instruction_set(certificate: Certificate) -> dict:
    """``extensions`` (None: the run recorded none) and ``cap`` (None: no cap) of one run."""
    return {"extensions": certificate.get("cpu_isa"), "cap": certificate.get("isa_cap")}


def cap_text(cap: IsaCap | None) -> str:
    """``ONEDNN_MAX_CPU_ISA=AVX2``; "" for no cap."""
    return f"{cap['variable']}={cap['value']}" if cap else ""


def differences(sets: list[dict]) -> list[str]:
    """What differs among runs' instruction sets (``instruction_set``): EXTENSIONS, CAP, both or
    neither. Runs that recorded none (reports written before the suite recorded them) are left out."""
    known = [s for s in sets if s["extensions"] is not None]
    found = []
    if len({tuple(s["extensions"]) for s in known}) > 1:
        found.append(EXTENSIONS)
    if len({cap_text(s["cap"]) for s in known}) > 1:
        found.append(CAP)
    return found
