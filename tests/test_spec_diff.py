"""Version differences computed from the spec data match what the ONNX changelog says changed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import spec
from spec.diff import Change, diff

ROOT = Path(__file__).resolve().parent.parent


def _changes(old: int, new: int) -> dict[tuple[str, str], Change]:
    changes = diff(spec.load(old), spec.load(new))
    keyed = {(c.what, c.name): c for c in changes}
    assert len(keyed) == len(changes), f"one thing reported twice: {changes}"
    return keyed


def _summary(old: int, new: int) -> set[tuple[str, str, str]]:
    return {(c.what, c.name, c.how) for c in _changes(old, new).values()}


def test_1_to_11_states_the_axis_range_and_the_non_empty_rule() -> None:
    changes = _changes(1, 11)
    assert _summary(1, 11) == {
        ("attribute", "axis", "changed"),  # [0, r-1] implied -> [-r, r-1] stated
        ("clause", "C8", "changed"),  # the axis clause now speaks of negative axes
        ("clause", "C9", "removed"),  # zero-size inputs are no longer semantic: C16 covers them
        ("clause", "C10", "changed"),  # reject above the range -> reject outside it
        ("clause", "C11", "added"),  # rank 0 must be rejected
        ("clause", "C16", "added"),  # the input must not be empty
        ("clause", "C19", "removed"),  # negative axes are no longer undefined
        ("clause", "C20", "removed"),  # rank 0 is no longer undefined
    }
    assert changes["attribute", "axis"].detail == "range: [0, r-1] (implied) -> [-r, r-1]"
    assert "axis_above_range" in changes["clause", "C10"].detail
    assert "axis_outside_range" in changes["clause", "C10"].detail
    assert "rejection" in changes["clause", "C11"].detail and "rank=0" in changes["clause", "C11"].detail
    assert "undefined" in changes["clause", "C16"].detail and "size=0" in changes["clause", "C16"].detail


def test_11_to_12_adds_select_last_index_and_drops_the_non_empty_rule() -> None:
    changes = _changes(11, 12)
    assert _summary(11, 12) == {
        ("attribute", "select_last_index", "added"),
        ("clause", "C6", "changed"),  # ties: undefined -> semantic
        ("clause", "C9", "added"),  # zero-size non-reduced axes are semantic again
        ("clause", "C16", "removed"),  # the non-empty rule is gone
        ("clause", "C18", "added"),  # select_last_index outside {0, 1} is undefined
    }
    assert changes["attribute", "select_last_index"].detail == "int, default 0, accepted {0, 1}"
    assert "kind: undefined -> semantic" in changes["clause", "C6"].detail
    assert "basis: inferred -> stated" in changes["clause", "C6"].detail  # select_last_index states the rule


def test_12_to_13_adds_bfloat16_and_nothing_else() -> None:
    assert [str(c) for c in diff(spec.load(12), spec.load(13))] == [str(Change("types", "bfloat16", "added",
                                                                            "now in T"))]


@pytest.mark.parametrize("version", [1, 11, 12, 13])
def test_a_version_against_itself_is_empty(version: int) -> None:
    assert diff(spec.load(version), spec.load(version)) == []


def test_diff_runs_backwards_too() -> None:
    """Going back from 13 to 12 removes bfloat16: the diff is symmetric in what it reports."""
    assert _summary(13, 12) == {("types", "bfloat16", "removed")}
    assert {(w, n) for w, n, _ in _summary(12, 11)} == {(w, n) for w, n, _ in _summary(11, 12)}


def test_command_prints_the_12_to_13_diff() -> None:
    done = subprocess.run([sys.executable, "-m", "spec", "diff", "12", "13"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ArgMin-12 -> ArgMin-13: 1 change(s)"), done.stdout
    assert len(lines) == 2, done.stdout
    assert lines[1].split() == ["added", "types", "bfloat16:", "now", "in", "T"]
