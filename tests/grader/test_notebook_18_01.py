"""Lab 18.01's notebook: solved, released untouched, and with a typical mistake (one run)."""

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

LAB, SLUG = "18.01", "18_01_extrapolation"
MISTAKES = {  # last_half over the first half of each window
    "averages": [("[(L // 2, L) for L in LENGTHS]", "[(0, L // 2) for L in LENGTHS]")],
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


def test_typical_mistakes_are_diagnosed(records):
    items = notebook_items(records["mistakes"], LAB)
    averages = items["nb/test-averages"]
    assert 0 < averages["score"] < averages["points"]  # window_mean and the keys are right
    assert "first-half" in codes(averages)
    assert items["nb/test-measures"]["score"] == items["nb/test-measures"]["points"]
