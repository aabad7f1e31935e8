"""Sizes as people read them: the engine's limits and messages and the reports' bounds say the
same "512 MiB"."""

from __future__ import annotations


def format_size(size: int) -> str:
    """Bytes as people write them, in binary units: 512 MiB, 2.98 GiB."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} B"
