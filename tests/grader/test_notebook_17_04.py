"""Lab 17.04's notebook: solved, released untouched, and with typical mistakes (one run)."""

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

LAB, SLUG = "17.04", "17_04_alibi"
MISTAKES = {
    "manual-attention": [("logits = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5 + bias",
                          "logits = (q @ k.transpose(-2, -1) + bias) / q.shape[-1] ** 0.5")],
    "row-constant": [("bias = slopes[:, None, None]", "bias = -slopes[:, None, None]")],
    "profile": [("return row.softmax(dim=-1).flip(-1)", "return row.softmax(dim=-1)")],
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
    for key, code in (("nb/test-sdpa", "nb-scaled-bias"), ("nb/test-row-constant", "nb-row-sign"),
                      ("nb/test-profile", "nb-profile-not-flipped")):
        assert items[key]["score"] < items[key]["points"], key
        assert code in codes(items[key]), (key, items[key]["findings"])
    for key in ("nb/test-slopes", "nb/test-bias"):
        assert items[key]["score"] == items[key]["points"]
