"""The zoo proves itself, independently of the suites: every broken entry fails on its witness
inputs exactly at the versions its registry entry names (caught by the named clause) and conforms
at the others; every correct entry agrees with spec.oracle on seeded random inputs of every type,
rejects what must be rejected and survives undefined inputs. The judge here mirrors the suite's
attribution rules in a few lines so the two can be compared later."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import spec
from engine.asking.protocol import typeless
from spec.oracle import classify, expect, verify
from zoo import ENTRIES, Entry, Witness, entry
from zoo.registry import FAULT_CLASSES

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = spec.versions()
BROKEN = [e for e in ENTRIES if not e.correct]
CORRECT = [e for e in ENTRIES if e.correct]
CALLABLE_BROKEN = [e for e in BROKEN if e.bug_class not in FAULT_CLASSES]


def load(e: Entry) -> Callable:
    module, _, name = e.impl.partition(":")
    return getattr(importlib.import_module(module), name)


# ---- a small judge with the suite's attribution rules ----------------------------------------

UNDEFINED = None


def judge(fn: Callable, version: int, witness: Witness) -> tuple[str, ...] | None:
    """The clause ids that catch ``fn`` on the witness at ``version``: () when it conforms,
    None when the input is undefined there."""
    vspec = spec.load(version)
    for data, attrs in witness.prelude:
        fn(data, opset=version, **attrs)
    data, attrs = witness.data, dict(witness.attributes)
    kind, clauses = classify(vspec, data, attrs)
    if kind == "undefined":
        return UNDEFINED
    if kind == "rejection":
        try:
            fn(data, opset=version, **attrs)
        except Exception:
            return ()
        return tuple(c.id for c in clauses)

    def failure(attributes: Mapping[str, int]) -> str | None:
        try:
            actual = fn(data, opset=version, **attributes)
        except Exception:
            return "C1"
        violation = verify(vspec, expect(vspec, data, attributes), data, actual, by_value=typeless(actual))
        return violation.clause.id if violation else None

    found = failure(attrs)
    if found is None:
        return ()
    if data.size == 0:
        return ("C9",)
    explicit = vspec.effective(attrs)
    if explicit != attrs and failure(explicit) is None:
        return ("C7",)
    axis = attrs.get("axis")
    if axis is not None and axis < 0 and failure({**attrs, "axis": axis % data.ndim}) is None:
        return ("C8",)
    return (found,)


# ---- the registry -----------------------------------------------------------------------------

REQUIRED_CLASSES = {  # docs/reference/bug-classes.md, each needing at least one broken entry
    "tie-breaking", "tie-breaking-tiled", "sentinel", "dtype-kernel-missing", "axis-length-1", "zero-size",
    "negative-axis", "keepdims", "defaults", "index-dtype", "index-range", "detour-float64", "detour-float16",
    "flush-to-zero", "high-rank", "state", "many-slices", "vector-tail",
}


def test_registry_has_enough_entries_with_unique_names() -> None:
    assert len(BROKEN) >= 30 and len(CORRECT) >= 5
    names = [e.name for e in ENTRIES]
    assert len(names) == len(set(names)), "duplicate entry names"
    missing = REQUIRED_CLASSES - {e.bug_class for e in BROKEN}
    assert not missing, f"no broken entry for the bug classes {sorted(missing)}"
    assert {"crash", "hang", "wrong-type"} <= {e.bug_class for e in BROKEN}


@pytest.mark.parametrize("e", ENTRIES, ids=lambda e: e.name)
def test_entry_metadata_matches_its_function_and_the_spec(e: Entry) -> None:
    fn = load(e)
    assert e.summary and e.summary == fn.__doc__.strip().splitlines()[0]
    assert e.correct == (not e.violates)
    assert (e.bug_class in ("none", "census-only")) == e.correct
    assert e.role in ("headline", "strictness", "scope")
    for version, clause_id in e.violates.items():
        clause = spec.load(version).clause(clause_id)
        # A crash on an undefined input fails the headline through the census topic it crashed on.
        kinds = ("undefined",) if e.bug_class == "census-crash" else \
            {"headline": ("semantic", "rejection"), "strictness": ("rejection",), "scope": ("semantic",)}[e.role]
        assert clause.kind in kinds, f"{e.name}: {clause_id} is {clause.kind} at v{version}"
    assert bool(e.not_implemented) == (e.role == "scope")
    if not e.correct:
        assert e.witnesses, f"{e.name} has no witness input"


def test_entry_lookup() -> None:
    assert entry("ties-last-always").impl == "zoo.broken_values:ties_last_always"
    with pytest.raises(KeyError, match="no zoo entry 'nope'; known: "):
        entry("nope")


def test_zoo_does_not_import_the_spec_or_the_suite() -> None:
    """The zoo plays third-party code: it may not peek at the oracle or the spec files.
    (adequacy.py is not an implementation: it scores the zoo with the suite.)"""
    for path in (ROOT / "zoo").glob("*.py"):
        if path.name == "adequacy.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                roots = [(node.module or "").split(".")[0]] if node.level == 0 else []
            else:
                continue
            assert not set(roots) & {"spec", "generators", "suites", "reports"}, f"{path.name} imports {roots}"


# ---- broken entries: caught exactly where they say ------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("e", CALLABLE_BROKEN, ids=lambda e: e.name)
def test_broken_entry_is_caught_exactly_where_it_says(e: Entry, version: int) -> None:
    fn = load(e)
    verdicts = [judge(fn, version, w) for w in e.witnesses]
    caught = {clause for v in verdicts if v for clause in v}
    if version in e.violates:
        assert e.violates[version] in caught, \
            f"{e.name} at v{version}: expected {e.violates[version]}, judged {verdicts}"
        stray = [v for v in verdicts if v and e.violates[version] not in v]
        assert not stray, f"{e.name} at v{version}: witnesses caught by other clauses: {stray}"
    else:
        assert not caught, f"{e.name} should conform at v{version} but was caught by {sorted(caught)}"


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("e", [e for e in BROKEN if e.bug_class in FAULT_CLASSES], ids=lambda e: e.name)
def test_crashing_and_hanging_entries_conform_off_their_trigger(e: Entry, version: int) -> None:
    """In-process only on an input that does not trigger the fault."""
    assert judge(load(e), version, Witness(np.array([[3, 1], [0, 2]], np.float32))) == ()


def _run_witness_in_child(e: Entry, timeout: float) -> subprocess.CompletedProcess:
    w = e.witnesses[0]
    code = (f"import numpy as np, importlib; m, f = {e.impl!r}.split(':'); "
            f"getattr(importlib.import_module(m), f)(np.zeros({w.data.shape!r}, np.{w.data.dtype}), opset=13)")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=timeout, capture_output=True, check=False)


def test_census_crash_entry_aborts_only_on_v1_negative_axes() -> None:
    code = ("import numpy as np; from zoo.faulty import abort_on_v1_negative_axis as f; "
            "print(int(f(np.array([3.0, 1.0]), opset=11, axis=-1)[0])); f(np.array([3.0, 1.0]), opset=1, axis=-1)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=60, capture_output=True, check=False)
    assert result.stdout.decode().strip() == "1" and result.returncode == -6, result.stderr.decode()[-500:]


def test_crashing_entry_kills_its_process_on_the_witness() -> None:
    result = _run_witness_in_child(entry("exit-on-long-axis"), timeout=60)
    assert result.returncode == 139, result.stderr.decode()[-500:]


def test_hanging_entry_does_not_return_on_the_witness() -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        _run_witness_in_child(entry("hang-on-rank4"), timeout=3)


# ---- correct entries: agree with the oracle on random inputs ---------------------------------------

CASES_PER_VERSION = 300


def _pool(dtype: np.dtype) -> np.ndarray:
    """Values that make ties, signed zeros, infinities, subnormals and extremes likely."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 3] + ([-1, -2] if info.min else [])
        return np.array(values, dtype=dtype)
    info = ml_dtypes.finfo(dtype)
    sub = float(info.smallest_subnormal)
    values = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, float(info.max), -float(info.max),
              float(info.tiny), -float(info.tiny), sub, -sub, 2 * sub]
    return np.array(values).astype(dtype)


def _random_attributes(vspec: spec.VersionSpec, rank: int, rng: np.random.Generator) -> dict[str, int]:
    attributes = {}
    for name, attribute in vspec.attributes.items():
        if rng.random() < 0.4:
            continue  # omitted: the implementation must apply the default
        if attribute.range is not None:
            low, high = attribute.range.bounds(rank)
            attributes[name] = int(rng.integers(low, high + 1))
        else:
            attributes[name] = int(rng.choice(attribute.values))
    return attributes


def random_cases(version: int, count: int, seed: int) -> Iterator[tuple[np.ndarray, dict[str, int]]]:
    """Valid inputs of every type of the version's T, small and occasionally long or zero-size."""
    rng = np.random.default_rng(seed)
    vspec = spec.load(version)
    for i in range(count):
        dtype = vspec.types[i % len(vspec.types)].dtype
        rank = int(rng.choice([1, 1, 2, 2, 3, 4, 5]))
        shape = [int(d) for d in rng.integers(1, 5, rank)]
        attributes = _random_attributes(vspec, rank, rng)
        axis = attributes.get("axis", vspec.attributes["axis"].default) % rank
        if rng.random() < 0.1:
            shape[axis] = int(rng.integers(9, 40))  # longer than one block of the blocked entry
        if rank > 1 and rng.random() < 0.05:
            shape[(axis + 1) % rank] = 0  # zero-size, but not the reduced axis
        pool = _pool(dtype)
        chosen = rng.choice(pool, size=int(rng.integers(1, 5)), replace=False)
        yield rng.choice(chosen, size=shape), attributes


@pytest.fixture(scope="module")
def semantic_cases() -> dict[int, list]:
    """Per vspec: (data, attributes, expectation) for the random inputs that are valid there."""
    cases = {}
    for version in VERSIONS:
        vspec = spec.load(version)
        cases[version] = [(data, attrs, expect(vspec, data, attrs))
                         for data, attrs in random_cases(version, CASES_PER_VERSION, seed=version)]
    return cases


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("e", CORRECT, ids=lambda e: e.name)
def test_correct_entry_agrees_with_the_oracle(e: Entry, version: int, semantic_cases: dict[int, list]) -> None:
    fn, vspec = load(e), spec.load(version)
    judged = 0
    for data, attrs, expectation in semantic_cases[version]:
        if expectation.kind != "semantic":
            continue
        judged += 1
        answer = fn(data, opset=version, **attrs)
        violation = verify(vspec, expectation, data, answer, by_value=typeless(answer))
        assert violation is None, f"{e.name} v{version} {data.dtype}{data.shape} {attrs}: {violation.message}\n{data}"
    assert judged >= CASES_PER_VERSION * 0.8


def rejection_inputs(version: int) -> list[tuple[np.ndarray, dict[str, int]]]:
    vspec = spec.load(version)
    matrix = np.array([[2, 1, 3], [0, 4, 0]], np.float32)
    low, high = vspec.attributes["axis"].range.bounds(matrix.ndim)
    undeclared = {name for n in VERSIONS for name in spec.load(n).attributes} - set(vspec.attributes)
    return [
        *((np.zeros((2, 3), t.dtype), {}) for t in spec.outside_types(vspec)),
        (matrix, {"axis": high + 1}), (matrix, {"axis": low - 1}), (np.array(1.0, np.float32), {}),
        *((matrix, {name: 0}) for name in undeclared), (matrix, {"keep_dims": 1}),
    ]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("e", CORRECT, ids=lambda e: e.name)
def test_correct_entry_rejects_what_it_must(e: Entry, version: int) -> None:
    fn, vspec = load(e), spec.load(version)
    checked = 0
    for data, attrs in rejection_inputs(version):
        kind, clauses = classify(vspec, data, attrs)
        if kind != "rejection":
            continue
        checked += 1
        with pytest.raises(Exception) as raised:
            fn(data, opset=version, **attrs)
        assert not isinstance(raised.value, NotImplementedError), f"{e.name} calls {clauses[0].id} unsupported"
    assert checked >= len(spec.outside_types(vspec)) + 1


def undefined_inputs(version: int) -> list[tuple[np.ndarray, dict[str, int]]]:
    vspec = spec.load(version)
    nan = np.array([[1.0, np.nan, 0.0], [np.nan, np.nan, np.nan]])
    cases = [(nan.astype(t.dtype), {"axis": 1}) for t in vspec.types if t.is_float]
    cases += [(np.zeros((2, 0), np.int32), {"axis": 1}), (np.zeros((0, 3), np.int32), {"axis": 1}),
              (np.ones((2, 3), np.int8), {"axis": -1}), (np.array(1.0, np.float32), {})]
    cases += [(np.ones((2, 3), np.uint8), {name: 2}) for name, a in vspec.attributes.items() if a.values]
    return [(data, attrs) for data, attrs in cases if classify(vspec, data, attrs)[0] == "undefined"]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("e", [e for e in CORRECT if e.bug_class not in FAULT_CLASSES], ids=lambda e: e.name)
def test_correct_entry_survives_undefined_inputs(e: Entry, version: int) -> None:
    """Anything goes on undefined inputs except killing or hanging the caller: raising is fine,
    and an answer must at least be something numpy.asarray takes."""
    fn = load(e)
    inputs = undefined_inputs(version)
    assert len(inputs) >= 4
    for data, attrs in inputs:
        try:
            answer = fn(data, opset=version, **attrs)
        except Exception:
            continue
        np.asarray(answer)


# ---- the undefined behaviour the census should see -----------------------------------------------

def _answer(name: str, values: list, version: int = 13, **attrs: int) -> int:
    return int(load(entry(name))(np.array(values, np.float32), opset=version, axis=0, keepdims=0, **attrs))


@pytest.mark.parametrize(("name", "nan_first", "nan_middle"), [
    ("numpy-argmin", 0, 1),  # coherent: NaN is the minimum
    ("python-loop", 2, 2),  # coherent: NaN is ignored
    ("stable-sort", 2, 2),
    ("integer-keys", 2, 2),
    ("sticky-first-nan", 0, 2),  # NaN first is the minimum, NaN elsewhere ignored: nan-first-only
    ("min-then-match", 0, 0),  # 0 whatever: nan-first-only, with exceptions
])
def test_nan_behaviour_differs_between_correct_entries(name: str, nan_first: int, nan_middle: int) -> None:
    first = [np.nan, 1.0, 0.0]
    middle = [1.0, np.nan, 0.0]
    assert (_answer(name, first), _answer(name, middle)) == (nan_first, nan_middle)


def test_strict_entry_refuses_nan() -> None:
    with pytest.raises(ValueError, match="NaN"):
        _answer("blocked-two-level", [1.0, np.nan])


@pytest.mark.parametrize("version", [n for n in VERSIONS if spec.load(n).ties_choice(0) is None])
def test_correct_entries_differ_in_their_undefined_tie_choice(version: int) -> None:
    answers = {e.name: _answer(e.name, [0.0, 0.0], version) for e in CORRECT}
    assert set(answers.values()) == {0, 1}, answers
