"""A fast slice of the adequacy matrix (zoo.adequacy), through the same code path as the session:
representative entries scored in their own processes, verdicts checked against the zoo's
expectations, and ONNX's own cases shown to miss bugs the suite catches."""

from __future__ import annotations

import pytest

from zoo import adequacy, entry

pytestmark = pytest.mark.e2e

# Two correct entries, a tie bug, a rejection bug, a missing dtype kernel, and a keepdims bug
# that ONNX's own cases do catch (so the comparison column is not trivially "conformant").
IN_PROCESS = ("numpy-argmin", "stable-sort", "ties-last-always", "axis-wraps-modulo", "no-float16-kernel",
              "keepdims-ignored")
VERSIONS = (11, 13)


@pytest.fixture(scope="module")
def rows() -> dict[str, dict]:
    scored = adequacy.run(list(IN_PROCESS), "quick", "1", jobs=2, versions=",".join(map(str, VERSIONS)))
    # A crashing entry through process isolation, on a small slice to keep worker restarts few.
    scored.append(adequacy.score("exit-on-long-axis", "quick", "1", versions="13", dtypes="float"))
    return {row["name"]: row for row in scored}


def test_verdicts_match_the_zoo(rows: dict[str, dict]) -> None:
    """Each entry's deviation shows where its role puts it: the headline (a tie bug, a keepdims
    bug, a crash), the strictness (an axis out of range computed) or the scope (no float16)."""
    for name, row in rows.items():
        item = entry(name)
        for number, cell in row["versions"].items():
            expected = adequacy.NON_CONFORMANT if number in item.non_conformant else adequacy.CONFORMANT
            assert cell["ours"] == expected and cell["shown"], (name, number, cell)
            if number in item.non_conformant:
                assert item.violates[number] in cell["clauses"], (name, number, cell)
                assert cell["first"]["cases"] >= 1
    assert rows["axis-wraps-modulo"]["versions"][13]["lenient"] == ["C10"]
    assert rows["no-float16-kernel"]["versions"][13]["not_implemented"] == ["float16"]
    assert rows["exit-on-long-axis"]["isolation"] == "process"
    assert rows["exit-on-long-axis"]["versions"][13]["first"]["outcome"] == "crash"


def test_onnx_cases_are_a_real_second_column(rows: dict[str, dict]) -> None:
    assert all(c["onnx"] == adequacy.NON_CONFORMANT for c in rows["keepdims-ignored"]["versions"].values())
    ties = rows["ties-last-always"]["versions"][13]
    assert ties["ours"] == adequacy.NON_CONFORMANT and ties["onnx"] == adequacy.CONFORMANT
    figures = adequacy.headline(list(rows.values()))
    assert figures["failures"] == []
    assert figures["ours_caught"] == figures["broken"] == 5
    assert figures["ours_passed"] == figures["onnx_passed"] == figures["correct"] == 2
    assert figures["onnx_caught"] < figures["ours_caught"]


def test_the_page_renders(rows: dict[str, dict]) -> None:
    document = {"profile": "quick", "seed": "1", "jobs": 2, "wall_s": 1.0, "entries": list(rows.values()),
                "headline": adequacy.headline(list(rows.values())), "detection_time": "implementation seconds"}
    page = adequacy.html(document)
    assert "ties-last-always" in page and "5/5 broken caught" in page
