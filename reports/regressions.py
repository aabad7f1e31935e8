"""A report's failures as regression tests for a runtime's own CI: ``regressions/`` beside the
report, one folder per failure in ONNX's backend node-test layout (reports.node_tests), and
``index.json`` naming each test's failure and each failure left out, with the reason.

Every report writer (a run, render, merge, rebuild) writes it through ``write``, from the
report document's failures alone: the cost is theirs, never the passing cases'. ``python -m
reports export`` writes the same set elsewhere, with passing cases where the run recorded their
inputs (``passing_cases``). The document may come from a report of untrusted code: each recorded
input is read within ELEMENTS_PER_TEST and NODES_PER_TEST, the whole set within ELEMENTS_IN_ALL,
and a case that cannot be rebuilt is left out with the reason, never fatal."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

import spec
from results import RawRun, files
from results.digest import input_digest
from results.outcomes import PASS
from results.records import Tensor
from results.tensors import from_tensor

from . import node_tests
from .document import Document
from .node_tests import Node, NoSingleAnswer

FOLDER = "regressions"
INDEX = "index.json"
FORMAT = "argmin-conformance/regressions/1"
ELEMENTS_PER_TEST = 1 << 20  # input elements of one test, over all its nodes
ELEMENTS_IN_ALL = 1 << 24  # input elements of the whole set (at most 128 MiB of doubles)
NODES_PER_TEST = 256  # the largest packed model the suite builds holds 153
_NAME = re.compile(r"[^A-Za-z0-9]+")
# What a malformed record makes rebuilding it raise (an int out of its type's range, a shape its
# values do not fill, a value that is no number, a field of the wrong kind).
_MALFORMED = (KeyError, TypeError, ValueError, OverflowError, AttributeError, IndexError)


def _array(value: Any, budget: int) -> np.ndarray:
    """The array a recorded tensor (``{"type", "shape", "values"}``) holds, read only where its
    type is one the suite knows and its size is within ``budget`` elements."""
    if not isinstance(value, dict) or value.get("type") not in spec.catalogue():
        raise NoSingleAnswer("the recorded input is not a tensor of a type the suite knows")
    shape, values = value["shape"], value["values"]
    if not (isinstance(shape, list) and all(type(n) is int and n >= 0 for n in shape) and isinstance(values, list)):
        raise NoSingleAnswer("the recorded input has no valid shape and values")
    if len(values) > budget:
        raise NoSingleAnswer(f"the recorded input holds {len(values):,} elements, more than the {budget:,} left for "
                             f"a test")
    if math.prod(shape) != len(values):
        raise NoSingleAnswer(f"the recorded input holds {len(values):,} elements, which no tensor of its shape does")
    return from_tensor(Tensor(value["type"], shape, values))


def _attributes(value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and type(v) is int for k, v in value.items()):
        raise NoSingleAnswer("the recorded attributes are not integers by name")
    return dict(value)


def _nodes(ce: Any, budget: int) -> tuple[list[Node], int | None, str | None]:
    """The recorded case's nodes: its one node, or every node of its recorded pack; the case's
    position among them and the pack's model form (None without a pack)."""
    pack = ce.get("pack")
    if not pack:
        return [Node(_array(ce["input"], budget), _attributes(ce["attributes"]))], None, None
    if not 0 < len(pack["nodes"]) <= NODES_PER_TEST:
        raise NoSingleAnswer(f"the recorded pack holds {len(pack['nodes'])} nodes; a test holds at most "
                             f"{NODES_PER_TEST}")
    position = pack["position"]
    if type(position) is not int or not 0 <= position < len(pack["nodes"]):
        raise NoSingleAnswer("the recorded pack names no node of its own as the case's")
    nodes = []
    for node in pack["nodes"]:
        nodes.append(Node(_array(node["input"], budget), _attributes(node["attributes"])))
        budget -= nodes[-1].data.size
    return nodes, position, str(pack["form"])


def _test(entry: Any, budget: int) -> tuple[node_tests.NodeTest, dict[str, Any]]:
    """The node test of one failure of the document (or a passing case written like one), and
    what index.json says of it; NoSingleAnswer where there is none."""
    ce = entry.get("counterexample")
    if not isinstance(ce, dict):
        raise NoSingleAnswer("no input was recorded")
    version = entry.get("version")
    if type(version) is not int or version not in spec.versions():
        raise NoSingleAnswer(f"{str(version)[:20]} is no ArgMin version with a spec file")
    nodes, position, pack_form = _nodes(ce, budget)
    test = node_tests.build(version, pack_form or entry.get("form"), nodes, packed=pack_form is not None)
    said = {"form": pack_form or entry.get("form") or "symbolic", "nodes": len(nodes)}
    return test, said if position is None else {**said, "position": position}


def _described(entry: Any) -> dict[str, Any]:
    """What index.json names a case by (texts cut short: they come from the report)."""
    keys = ("anchor", "version", "clause", "type", "problem", "outcome", "role", "suite")
    return {key: entry[key] if entry[key] is None or type(entry[key]) is int else str(entry[key])[:200]
            for key in keys if key in entry}


def _folder_name(entry: Any, taken: set[str]) -> str:
    """``test_`` and the anchor in letters, digits and underscores (the runners take a folder
    named ``test_*`` as one test), unique among ``taken``."""
    base = "test_" + (_NAME.sub("_", str(entry.get("anchor", ""))).strip("_")[:100] or "case")
    name, count = base, 1
    while name in taken:
        count += 1
        name = f"{base}_{count}"
    taken.add(name)
    return name


def _fill(folder: Path, failures: Iterable[Any], passing: Iterable[Any]) -> dict[str, Any]:
    index: dict[str, Any] = {"format": FORMAT, "tests": [], "left_out": []}
    taken: set[str] = set()
    left = ELEMENTS_IN_ALL
    for entry, passed in [*((f, False) for f in failures), *((p, True) for p in passing)]:
        if not isinstance(entry, dict):
            index["left_out"].append({"why": "not a failure record"})
            continue
        described = {**_described(entry), **({"passing": True} if passed else {})}
        try:
            test, said = _test(entry, min(left, ELEMENTS_PER_TEST))
        except NoSingleAnswer as exc:
            index["left_out"].append({**described, "why": str(exc)})
            continue
        except _MALFORMED as exc:
            why = f"the recorded case cannot be rebuilt ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
            index["left_out"].append({**described, "why": why})
            continue
        left -= sum(data.size for data in test.inputs)
        name = _folder_name(entry, taken)
        node_tests.write(test, folder / name)
        index["tests"].append({"test": name, **described, **said})
    files.write(folder, INDEX, (json.dumps(index, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    return index


def export(document: Document, folder: Path, passing: Iterable[Any] = ()) -> dict[str, Any]:
    """Every failure of ``document`` with a single right answer, and the ``passing`` cases, as
    node tests in ``folder`` (replaced whole); what its index.json says."""
    failures = document["failures"]
    if not isinstance(failures, list):
        raise TypeError("the report's failures are not a list")
    return files.write_folder(folder.parent, folder.name, lambda staging: _fill(staging, failures, passing))


def write(document: Document, report_dir: Path) -> Path:
    """``regressions/`` in a report folder: its failures as node tests."""
    export(document, Path(report_dir) / FOLDER)
    return Path(report_dir) / FOLDER


def passing_cases(run: RawRun, per_group: int) -> list[dict[str, Any]]:
    """Up to ``per_group`` passing judged cases per (version, clause or suite, type), written as
    the document writes a failure. A run records a passing case's input only as a digest, so
    these can only be the passing cases among the nodes of the packed models recorded with
    failures (found by their input's digest); most runs have none."""
    passed = {(r.version, r.input_digest): r for r in run.results if r.outcome == PASS}
    chosen: list[dict[str, Any]] = []
    taken: Counter = Counter()
    for result in run.results:
        pack = result.counterexample.pack if result.counterexample else None
        for node in pack.nodes if pack else ():
            recorded = {"type": node.input.type_name, "shape": node.input.shape, "values": node.input.values}
            try:
                digest = input_digest(_array(recorded, ELEMENTS_PER_TEST), _attributes(node.attributes))
            except (NoSingleAnswer, *_MALFORMED):
                continue
            found = passed.pop((result.version, digest), None)
            if found is None:
                continue
            group = (found.version, found.clause or found.suite, found.type_name)
            taken[group] += 1
            if taken[group] <= per_group:
                chosen.append({"anchor": f"pass-v{group[0]}-{group[1]}-{group[2]}-{taken[group]}",
                               "version": found.version, "clause": found.clause, "type": found.type_name,
                               "outcome": PASS, "kind": found.kind, "suite": found.suite, "form": found.form,
                               "counterexample": {"input": recorded, "attributes": node.attributes}})
    return chosen
