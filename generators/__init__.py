"""Hypothesis strategies derived from the spec objects: valid inputs (``semantic_cases``), inputs
a version must reject (``rejection_cases``) and census inputs (``undefined_cases``), plus the
settings ``profiles``. The suites draw ``BATCH`` cases per Hypothesis example (``batch=BATCH``).
Tag keys are listed in ``generators.strategies``."""

from . import profiles
from .case import Case
from .strategies import BATCH, rejection_cases, semantic_cases, undefined_cases

__all__ = ["BATCH", "Case", "profiles", "rejection_cases", "semantic_cases", "undefined_cases"]
