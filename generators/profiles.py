"""Hypothesis settings profiles: ``quick`` (the project's own tests and CI), ``standard`` (a
vendor's everyday run) and ``certify`` (a derandomised, database-free run whose cases depend
only on the seed, for certification packages).

Every profile sets ``deadline=None``: the suites enforce their own timeouts, and a long reduced
axis legitimately takes longer than a short one. The size and speed health checks are
suppressed because long axes are deliberate, and the strategies never filter.

Budgets (``CASES``) are counted in cases per test. The suites draw ``BATCH`` cases per
Hypothesis example (see ``strategies._decoded``), so ``max_examples`` is the budget divided by it."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from .strategies import BATCH

PROFILES = ("quick", "standard", "certify")
ENV = "ARGMIN_PROFILE"
_SUPPRESSED = (HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much)
CASES = {"quick": 32, "standard": 200, "certify": 2000}


def register() -> None:
    """Register the three profiles with Hypothesis (idempotent)."""
    for name in PROFILES:
        extra = {"derandomize": True, "database": None} if name == "certify" else {}
        # One example more than the budget divides into: the first one Hypothesis tries is the
        # simplest (all bytes zero), one input repeated across its batch.
        settings.register_profile(name, max_examples=CASES[name] // BATCH + 1, deadline=None,
                                  suppress_health_check=_SUPPRESSED, **extra)


def load(name: str | None = None) -> settings:
    """Load a profile: ``name``, else the ARGMIN_PROFILE environment variable, else quick.
    Returns its settings, so a caller can also use them as a parent: ``settings(load(name), ...)``."""
    chosen = name or os.environ.get(ENV) or "quick"
    if chosen not in PROFILES:
        raise ValueError(f"unknown Hypothesis profile {chosen!r}: choose one of {', '.join(PROFILES)} "
                         f"(argument or {ENV})")
    register()
    settings.load_profile(chosen)
    return settings.get_profile(chosen)
