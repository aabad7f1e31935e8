"""What this machine's CPU is, as a report records it: its model name and its instruction set,
the vector and matrix extensions a runtime may choose its kernels by (OpenVINO's answers depend
on them). Both are read from /proc/cpuinfo, where Linux has one: the extensions from an x86
CPU's ``flags`` or an Arm CPU's ``Features``, kept to those in EXTENSIONS and in its order.
Elsewhere (macOS, Windows) the list is empty, and the report says it was not read."""

from __future__ import annotations

import platform
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
# The extensions recorded, oldest first: x86 (SSE4 to AMX), then Arm (NEON to SME). An x86 CPU
# names its own in /proc/cpuinfo's "flags" line, an Arm CPU in "Features" (32-bit Arm says neon
# where 64-bit says asimd).
X86 = ("sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512dq", "avx512bw", "avx512vl",
       "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8", "amx_fp16")
ARM = ("neon", "asimd", "asimdhp", "asimddp", "i8mm", "bf16", "sve", "sve2", "sme", "sme2")
EXTENSIONS = X86 + ARM
FEATURE_LINES = ("flags", "Features")  # x86, Arm


def cpuinfo() -> str:
    """/proc/cpuinfo's text; "" where there is none (not Linux) or it cannot be read."""
    try:
        return CPUINFO.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def features_line(text: str) -> str | None:
    """The first CPU's line of extensions (``flags`` on x86, ``Features`` on Arm), whole, with its
    line ending; None where ``text`` has none."""
    return next((line for line in text.splitlines(keepends=True) if line.startswith(FEATURE_LINES)), None)


def extensions(text: str) -> list[str]:
    """The extensions of EXTENSIONS that the first CPU of a /proc/cpuinfo ``text`` names, in
    EXTENSIONS' order; empty where it names none (or ``text`` is not a cpuinfo)."""
    line = features_line(text)
    named = set(line.partition(":")[2].split()) if line else set()
    return [name for name in EXTENSIONS if name in named]


def model_name(text: str) -> str:
    """The CPU's model name from a /proc/cpuinfo ``text``; else what Python says of the machine."""
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()
