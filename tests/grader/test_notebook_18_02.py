"""Lab 18.02's notebook: solved, released untouched, and with typical mistakes (one run)."""

from __future__ import annotations

import pytest
from notebook_runs import (
    NotebookEntry,
    check_reference,
    check_released,
    codes,
    grade_notebooks,
    mistaken,
    notebook_items,
    solved,
)

LAB, SLUG = "18.02", "18_02_rope_scaling"
MISTAKES = {
    "ratios": [("coverage > 1 + 1e-6", "coverage >= 1")],  # c_i = 1 counted as unseen
    "with-scaling": [("return scaled.eval()", "return scaled")],  # left in training mode
}


@pytest.fixture(scope="module")
def records(tmp_path_factory, capabilities):
    if not capabilities.namespaces:
        pytest.skip("this platform cannot isolate the sandbox (needs root and namespaces)")
    return grade_notebooks(tmp_path_factory, LAB, SLUG, [
        NotebookEntry("solved", solved(SLUG)),
        NotebookEntry("released", None, modules="stub"),
        NotebookEntry("mistakes", mistaken(SLUG, MISTAKES)),
    ])


def test_solved_notebook_gets_full_marks(records):
    check_reference(records["solved"], LAB, SLUG)


def test_released_notebook_scores_nothing_and_says_why(records):
    check_released(records["released"], LAB, SLUG)
    copy = notebook_items(records["released"], LAB)["nb/test-with-scaling"]
    assert "nb-modified-model" not in codes(copy)  # nothing ran: no mistake to blame


def test_typical_mistakes_are_diagnosed(records):
    items = notebook_items(records["mistakes"], LAB)
    ratios = items["nb/test-ratios"]
    assert 0 < ratios["score"] < ratios["points"]  # the ratios themselves are right
    assert "nb-boundary" in codes(ratios)
    copy = items["nb/test-with-scaling"]
    assert 0 < copy["score"] < copy["points"] and "nb-train-mode" in codes(copy)
