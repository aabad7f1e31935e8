"""A report's failures as regression tests for a runtime's own CI: ``regressions/`` beside the
report, in ONNX's backend node-test layout (reports.node_tests), one folder of tests per set:

- ``failures/``: the failures that make a headline NON-CONFORMANT, each with its one right answer.
  A conforming runtime passes them all: a CI runs these.
- ``must-not-crash/``: inputs that crashed or hung the runtime and have no defined answer (NaN, an
  empty reduced axis, an invalid model): the model and its inputs, no outputs. A conforming
  runtime returns or raises; it never goes down.
- apart, not run by default: ``scope/`` (failures of types the runtime does not implement),
  ``flaky/`` (failures that answered right when asked again) and ``passing/`` (``export
  --passing``).

``index.json`` names each test's set, failure and reason, and every failure left out (the
strictness findings among them: the layout cannot expect an error) with the reason; the runner
(reports.ci_conftest) is written beside it as ``conftest.py``. A test whose packed model holds a
neighbour with no single answer (NaN, tied minima where the version leaves ties open) asks that
neighbour a stand-in input of the same shape, or goes without it, and the index says which.

Every report writer (a run, render, merge, rebuild) writes it through ``write``, from the
report document's failures and census alone: the cost is theirs, never the passing cases'.
``python -m reports export`` writes the same sets elsewhere, with passing cases where the run
recorded their inputs (``passing_cases``). A folder is written only where it is new, empty or an
earlier export (``check_replaceable``): what the suite did not write there is never deleted. The
document may come from a report of untrusted code: each recorded input is read within
ELEMENTS_PER_TEST and NODES_PER_TEST, the whole set within ELEMENTS_IN_ALL, and a case that cannot
be rebuilt is left out with the reason, never fatal."""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

import spec
from reports.document.parts import Document
from results import RawRun, files
from results.digest import input_digest
from results.outcomes import FAULTS, PASS
from results.records import Tensor
from results.tensors import from_tensor

from . import node_tests
from .node_tests import Node, NoSingleAnswer

FOLDER = "regressions"
INDEX = "index.json"
RUNNER = "conftest.py"
# The runner, read when the reports are imported: before a run loads any implementation, whose
# code could otherwise rewrite what every CI that keeps the set will run.
RUNNER_TEXT = (Path(__file__).resolve().parent / "ci_conftest.py").read_bytes()
FORMAT = "argmin-conformance/regressions/2"
FORMATS = ("argmin-conformance/regressions/1", FORMAT)  # what an earlier export's index.json names
FAILURES, MUST_NOT_CRASH, SCOPE, FLAKY, PASSING = "failures", "must-not-crash", "scope", "flaky", "passing"
SETS = {  # what each set holds, as index.json says it
    FAILURES: "failures that make the headline NON-CONFORMANT, each with its one right answer: a conforming runtime "
              "passes every one (the runner's default)",
    MUST_NOT_CRASH: "inputs that crashed or hung the runtime and have no defined answer: a conforming runtime "
                    "returns or raises, never goes down (the runner's default)",
    SCOPE: "failures of types the runtime does not implement, outside the headline: they pass once the type is "
           "implemented",
    FLAKY: "failures that answered right when asked again: apart, so that no CI turns flaky",
    PASSING: "passing cases the run recorded (export --passing)",
}
ELEMENTS_PER_TEST = 1 << 20  # input elements of one test, over all its nodes
ELEMENTS_IN_ALL = 1 << 24  # input elements of the whole set (at most 128 MiB of doubles)
NODES_PER_TEST = 256  # the largest packed model the suite builds holds 153
_NAME = re.compile(r"[^A-Za-z0-9]+")
# Everything an export writes, and what pytest leaves after running its tests there: the paths
# (relative, with /) a folder may hold to be replaced as an earlier export. A format-1 export
# held its tests at the top.
_WRITTEN = re.compile(r"index\.json|conftest\.py|__pycache__(/[^/]+\.pyc)?|\.pytest_cache(/.+)?"
                      rf"|({'|'.join(map(re.escape, SETS))})"
                      rf"|(({'|'.join(map(re.escape, SETS))})/)?test_\w+"
                      r"(/(model\.onnx|data\.json|test_data_set_0(/(input|output)_\d+\.pb)?))?")
# What a malformed record makes rebuilding it raise (an int out of its type's range, a shape its
# values do not fill, a value that is no number, a field of the wrong kind).
_MALFORMED = (KeyError, TypeError, ValueError, OverflowError, AttributeError, IndexError)


class NotAnExport(ValueError):
    """A folder an export may not write into; the message is one line naming the fix."""


def check_replaceable(folder: Path) -> None:
    """Raise NotAnExport unless ``folder`` is new, empty, or an earlier export: its index.json
    names a format of ours, and it holds nothing an export does not write (no link either)."""
    folder = Path(folder)
    fix = "name a new or empty folder, or an earlier export's; nothing was written"
    if not os.path.lexists(folder):
        return
    if folder.is_symlink() or not folder.is_dir():
        raise NotAnExport(f"{folder}: a {'symbolic link' if folder.is_symlink() else 'file'}, not a folder an export "
                          f"wrote; {fix}")
    if not any(folder.iterdir()):
        return
    try:
        said = json.loads((folder / INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        said = None
    if not isinstance(said, dict) or said.get("format") not in FORMATS:
        raise NotAnExport(f"{folder}: holds files and no {INDEX} of an export ({FORMAT}); the suite replaces only a "
                          f"folder it wrote: {fix}")
    for top, folders, names in os.walk(folder):
        for name in [*folders, *names]:
            path = Path(top) / name
            relative = path.relative_to(folder).as_posix()
            if path.is_symlink() or not _WRITTEN.fullmatch(relative):
                raise NotAnExport(f"{folder}: holds {relative}, which no export writes; {fix}")


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


def _neighbours(version: int, nodes: list[Node], position: int) -> tuple[list[Node], int, list[dict[str, Any]]]:
    """The pack with each neighbour that has no single answer given a stand-in input of its
    shape (node_tests.stand_in), or left out where none has one; the case's new position, and
    what was done to which node (by its position in the recorded pack)."""
    kept, said, moved = [], [], position
    for index, node in enumerate(nodes):
        try:
            if index != position:
                node_tests.answer(version, node)
        except NoSingleAnswer as exc:
            stand_in = node_tests.stand_in(version, node)
            said.append({"position": index, "done": "stand-in input" if stand_in else "left out", "why": str(exc)})
            if stand_in is None:
                moved -= index < position
                continue
            node = stand_in
        kept.append(node)
    return kept, moved, said


def _set(entry: dict[str, Any]) -> str:
    """Where a failure card's test goes: its role and what its counterexample says. (Failures
    that only the worker's history shows will go apart too, once the cards record that history.)"""
    if entry.get("role") == "scope":
        return SCOPE
    if entry.get("outcome") in FAULTS and entry.get("kind") != "semantic":
        return MUST_NOT_CRASH  # an invalid model or an undefined input that took the runtime down
    if entry["counterexample"].get("flaky") is True:
        return FLAKY
    return FAILURES


def _test(entry: Any, budget: int) -> tuple[str, node_tests.NodeTest, dict[str, Any]]:
    """The set and node test of one failure of the document (or a passing case written like
    one), and what index.json says of it; NoSingleAnswer where there is none."""
    ce = entry.get("counterexample")
    if not isinstance(ce, dict):
        raise NoSingleAnswer("no input was recorded")
    version = entry.get("version")
    if type(version) is not int or version not in spec.versions():
        raise NoSingleAnswer(f"{str(version)[:20]} is no ArgMin version with a spec file")
    chosen = PASSING if entry.get("outcome") == PASS else _set(entry)
    nodes, position, pack_form = _nodes(ce, budget)
    said: dict[str, Any] = {}
    if chosen != MUST_NOT_CRASH:  # the failing node itself: where it has no answer, the reason names its clause
        node_tests.answer(version, nodes[position or 0], str(entry.get("clause")))
    if position is not None and chosen != MUST_NOT_CRASH:
        nodes, position, neighbours = _neighbours(version, nodes, position)
        said = {"neighbours": neighbours} if neighbours else {}
    packed = pack_form is not None and len(nodes) > 1
    test = node_tests.build(version, pack_form or entry.get("form"), nodes, packed=packed,
                            answers=chosen != MUST_NOT_CRASH)
    said = {"form": pack_form or entry.get("form") or "symbolic", "nodes": len(nodes), **said}
    return chosen, test, said if not packed else {**said, "position": position}


def _described(entry: Any) -> dict[str, Any]:
    """What index.json names a case by (texts cut short: they come from the report)."""
    keys = ("anchor", "version", "clause", "type", "problem", "outcome", "role", "suite")
    return {key: entry[key] if entry[key] is None or type(entry[key]) is int else str(entry[key])[:200]
            for key in keys if key in entry}


def _reason(chosen: str, entry: dict[str, Any]) -> str | None:
    """Why a test stands apart from failures/, in a line of index.json."""
    if chosen == MUST_NOT_CRASH:
        what = "an invalid model" if entry.get("kind") == "rejection" else "an input the standard defines no answer for"
        observed = " ".join(str(entry["counterexample"].get("actual") or entry.get("outcome")).split())[:200]
        return f"{entry.get('clause')}: {what}, which took the runtime down ({observed}); returning or raising passes"
    if chosen == SCOPE:
        return f"{entry.get('type')} is not implemented at ArgMin-{entry.get('version')}: outside the headline"
    if chosen == FLAKY:
        return "asked again the same way, the runtime answered right: kept apart from failures/"
    return None


def _census_faults(census: Any) -> list[dict[str, Any]]:
    """The census's crashes and hangs (undefined inputs that took the runtime down), written as
    failure cards are, for the must-not-crash set."""
    found = []
    for entry in census if isinstance(census, list) else []:
        if not isinstance(entry, dict):
            continue
        for fault in entry.get("faults") or []:
            if isinstance(fault, dict):
                named = (entry.get("anchor"), fault.get("type"), fault.get("form"))
                found.append({"anchor": "-".join(str(part) for part in named if part),
                              "version": entry.get("version"), "clause": entry.get("topic"), "type": fault.get("type"),
                              "outcome": fault.get("status"), "role": "headline", "suite": "census",
                              "kind": "undefined", "form": fault.get("form"),
                              "counterexample": {"input": fault.get("input"), "attributes": fault.get("attributes"),
                                                 "actual": fault.get("observed")}})
    return found


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


def _fill(folder: Path, entries: Iterable[Any]) -> dict[str, Any]:
    index: dict[str, Any] = {"format": FORMAT, "runner": RUNNER, "sets": SETS, "tests": [], "left_out": []}
    taken: set[str] = set()
    left = ELEMENTS_IN_ALL
    for entry in entries:
        if not isinstance(entry, dict):
            index["left_out"].append({"why": "not a failure record"})
            continue
        described = {**_described(entry), **({"passing": True} if entry.get("outcome") == PASS else {})}
        try:
            chosen, test, said = _test(entry, min(left, ELEMENTS_PER_TEST))
        except NoSingleAnswer as exc:
            index["left_out"].append({**described, "why": str(exc)})
            continue
        except _MALFORMED as exc:
            why = f"the recorded case cannot be rebuilt ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
            index["left_out"].append({**described, "why": why})
            continue
        left -= sum(data.size for data in test.inputs)
        name = _folder_name(entry, taken)
        (folder / chosen).mkdir(exist_ok=True)
        node_tests.write(test, folder / chosen / name)
        reason = _reason(chosen, entry)
        index["tests"].append({"test": name, "set": chosen, "path": f"{chosen}/{name}", **described, **said,
                               **({"reason": reason} if reason else {})})
    files.write(folder, RUNNER, RUNNER_TEXT)
    files.write(folder, INDEX, (json.dumps(index, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    return index


def export(document: Document, folder: Path, passing: Iterable[Any] = ()) -> dict[str, Any]:
    """Every failure of ``document`` and census crash with a test, and the ``passing`` cases, as
    node tests in ``folder`` (new, empty, or an earlier export, which is replaced whole); what its
    index.json says. NotAnExport where ``folder`` is none of those."""
    failures = document["failures"]
    if not isinstance(failures, list):
        raise TypeError("the report's failures are not a list")
    check_replaceable(folder)
    entries = [*failures, *_census_faults(document.get("census")), *passing]
    return files.write_folder(folder.parent, folder.name, lambda staging: _fill(staging, entries))


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
