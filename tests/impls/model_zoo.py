"""Zoo entries as model-level plug-ins (``--impl model:tests/impls/model_zoo.py:minus_one_sentinel``):
each reads the ArgMin nodes' attributes and opset from the model and answers as that zoo entry
does (zoo.through_models), so the standalone replay snippet (which builds the model itself) can be
run against a known bug and against a correct implementation."""

from __future__ import annotations

from zoo import broken_rejects, broken_values, correct
from zoo.through_models import plugin

numpy_argmin = plugin(correct.numpy_argmin)
minus_one_sentinel = plugin(broken_values.minus_one_sentinel)
ties_first_always = plugin(broken_values.ties_first_always)
int32_indices = plugin(broken_rejects.int32_indices)
no_type_check = plugin(broken_rejects.no_type_check)
