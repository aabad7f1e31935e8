"""The ArgMin standard as data: spec files, their typed objects, version differences and the oracle."""

from .load import (
    SpecError,
    catalogue,
    files_digest,
    load,
    load_all,
    load_file,
    outside_types,
    type_of,
    versions,
)
from .model import Attribute, Clause, Quote, Range, Source, TensorType, VersionSpec, evaluate

__all__ = [
    "Attribute", "Clause", "Quote", "Range", "Source", "SpecError", "TensorType", "VersionSpec", "catalogue",
    "evaluate", "files_digest", "load", "load_all", "load_file", "outside_types", "type_of", "versions",
]
