"""Hypothesis strategies derived from the spec objects: valid inputs (``semantic_cases``), inputs
a version must reject (``rejection_cases``) and census inputs (``undefined_cases``), plus the
settings ``profiles``, and the special-value floor every profile checks first (``semantic_floor``,
``census_floor``). The suites draw ``BATCH`` cases per Hypothesis example (``batch=BATCH``).
Tag keys are listed in ``generators.strategies``."""

from . import profiles
from .case import Batch, Case
from .floor import census_floor, semantic_floor
from .strategies import BATCH, rejection_cases, semantic_cases, undefined_cases

__all__ = ["BATCH", "Batch", "Case", "census_floor", "profiles", "rejection_cases", "semantic_cases",
           "semantic_floor", "undefined_cases"]
