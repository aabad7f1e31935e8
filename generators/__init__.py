"""Hypothesis strategies derived from the spec objects: valid inputs (``semantic_cases``), inputs
a version must reject (``rejection_cases``) and census inputs (``undefined_cases``), plus the
settings ``profiles`` and ``batched``, which the suites draw their cases with. Tag keys are
listed in ``generators.strategies``."""

from . import profiles
from .case import Case
from .strategies import BATCH, batched, rejection_cases, semantic_cases, undefined_cases

__all__ = ["BATCH", "Case", "batched", "profiles", "rejection_cases", "semantic_cases", "undefined_cases"]
