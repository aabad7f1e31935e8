"""The state twin: a case asked right after another to catch implementations that keep state
between calls.

For one valid case in four (chosen by its key, so the choice is stable under replay), the twin
is the same input with its last element lowered to the type's smallest value. It has the same
shape, dtype, attributes and leading bytes, and a different answer wherever that element's
slice had another minimum: an implementation that caches results keyed on too little (shape,
dtype, the first bytes) answers it stale. The twin carries the tag ``state:twin``; a twin never
has a twin of its own."""

from __future__ import annotations

import numpy as np

from .case import Case

TAG = "state:twin"


def twin(case: Case, key: str) -> Case | None:
    """The twin of ``case`` (whose ``Case.key()`` is ``key``), or None where it has none; made
    once per case (the session asks for it when it asks the implementation and when it judges)."""
    return case.memo("_twin", lambda: _made(case, key))


def _made(case: Case, key: str) -> Case | None:
    if TAG in case.tags or case.data.size < 2 or int(key[:2], 16) % 4:
        return None
    dtype = case.data.dtype
    lowest = dtype.type(np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf)
    if case.data.flat[-1] == lowest:
        return None  # the twin would be the case itself
    data = case.data.copy()
    data.flat[-1] = lowest
    return Case(case.version, data, case.attributes, (*case.tags, TAG), case.intent).decoded_from(key.encode())
