"""Hypothesis strategies derived from the spec objects."""

from .case import Case

__all__ = ["Case"]
