"""Lab 19.02's notebook (no module of its own): solved, released untouched, and with typical
mistakes (one run)."""

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

LAB, SLUG = "19.02", "19_02_experiments"
MISTAKES = {
    "statistics": [("values.std(ddof=1)", "values.std()")],  # population standard deviation
    "separated": [('z * math.sqrt(a["se"] ** 2 + b["se"] ** 2)',
                   'z * (a["se"] + b["se"])')],  # standard errors added
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
    statistics = items["nb/test-statistics"]
    assert 0 < statistics["score"] < statistics["points"]  # n is right
    assert "nb-population" in codes(statistics)
    separated = items["nb/test-separated"]
    assert separated["score"] < separated["points"] and "nb-se-added" in codes(separated)
