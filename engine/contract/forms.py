"""Model forms: the ways a model-based implementation (a built-in runtime, or a ``model:``
plug-in) receives the same case. Real runtimes compile each differently:

- ``symbolic``: the input has symbolic dimensions of the case's rank; one compiled model serves
  every shape of that rank (dynamic-shape kernels);
- ``static``: the input has the case's exact shape (static shape inference, fixed kernels);
- ``initializer``: the input is a constant inside the model, which the runtime may fold away
  before anything runs (constant folding: often a different implementation altogether).

Every case costs a compile in the static and initializer forms, so those ask a fixed quota of
cases stratified by shape (generators.quotas) whatever the profile; the symbolic form asks the
profile's whole volume (``QUOTA_FORMS``). Plain function plug-ins have no form (None). This module imports
nothing heavy: the run's owner plans with it without loading any runtime."""

from __future__ import annotations

SYMBOLIC, STATIC, INITIALIZER = "symbolic", "static", "initializer"
FORMS = (SYMBOLIC, STATIC, INITIALIZER)
# Forms whose valid cases are a stratified quota (generators.quotas.FORM_QUOTA), not the profile's volume.
QUOTA_FORMS = (STATIC, INITIALIZER)
# Suites run in every selected form; the census (undefined behaviour, never judged) only in the first.
SUITES_IN_EVERY_FORM = ("fixed", "property", "rejection")


def parse(text: str) -> tuple[str, ...]:
    """``"symbolic,static"`` -> the forms named, in FORMS order; ValueError names an unknown one."""
    named = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in named if name not in FORMS]
    if unknown or not named:
        raise ValueError(unknown[0] if unknown else text)
    return tuple(form for form in FORMS if form in named)
