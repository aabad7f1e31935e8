"""What reaches a terminal. Text the implementation under test or a report controls (an
exception's message, a stated version, a census example, a report's fields) could carry escape
sequences that clear the screen and draw a verdict of their own, or bidirectional marks that
reorder a line: everything the suite prints of such text goes through ``printable``. Standard
library only: the loader, which noxfile imports, uses it."""

from __future__ import annotations

import sys

_KEPT = "\n\t"  # line structure stays; every other character Python does not call printable goes


def printable(text: object) -> str:
    """``text`` with every control and format character (ESC, CSI, BEL, C1 controls, bidi
    overrides, zero-width marks) replaced by "?"."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in _KEPT else "?" for c in text)


def one_line(text: object) -> str:
    """``text`` printable, on one line."""
    return " ".join(printable(text).split())


def error(message: object) -> None:
    """The one line a command prints when it cannot go on (its exit status is the caller's)."""
    print(f"error: {one_line(message)}", file=sys.stderr, flush=True)
