"""Lab 17.02's notebook: solved, released untouched, and with typical mistakes (one run)."""

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

LAB, SLUG = "17.02", "17_02_learned"
MISTAKES = {
    "evaluation": [
        (".float().mean(dim=0)", ".float().mean(dim=1)"),  # averaged over positions
        ("LearnedPositionalEmbedding(new_len, table.d_model)",  # new rows left at zero
         "LearnedPositionalEmbedding(new_len, table.d_model, init_std=0.0)"),
    ],
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
    past = items["nb/test-past-lmax"]
    assert past["score"] < past["points"]
    assert {"nb-accuracy-axis", "nb-grow-zero-rows"} <= codes(past)
    assert items["nb/test-table"]["score"] == items["nb/test-table"]["points"]
