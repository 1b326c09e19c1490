"""Lab 17.05's notebook: solved, released untouched, and with typical mistakes (one run)."""

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

LAB, SLUG = "17.05", "17_05_relative_bias"
MISTAKES = {
    "bucket-starts": [("starts.setdefault(bucket, distance)", "starts[bucket] = distance")],
    "shaw": [("return (q @ k.T + position) / d**0.5", "return q @ k.T / d**0.5 + position")],
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
    starts, shaw = items["nb/test-bucket-starts"], items["nb/test-shaw"]
    assert starts["score"] < starts["points"] and "nb-starts-last" in codes(starts)
    assert shaw["score"] < shaw["points"] and "nb-shaw-scale-content-only" in codes(shaw)
    for key in ("nb/test-buckets", "nb/test-module", "nb/test-swin"):
        assert items[key]["score"] == items[key]["points"]
