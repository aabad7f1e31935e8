"""A plug-in file whose import fails, as one with a missing dependency does."""

import argmin_conformance_missing_dependency  # noqa: F401


def argmin(data, *, opset, **attributes):
    raise AssertionError("never reached: the import above fails")
