"""Lab 17.00's notebook: solved, released untouched, and with typical mistakes (one run)."""

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

LAB, SLUG = "17.00", "17_00_why_position"
MISTAKES = {
    # √d instead of √d_k: equal in the notebook (d = d_k = 16), not in the hidden probe
    "self-attention": [("q.shape[-1] ** 0.5", "x.shape[-1] ** 0.5")],
    "offset-spread": [(
        "return max((attention_logits(z, hook, o) - start).abs().max().item() for o in offsets)",
        "for o in offsets:\n        spread = (attention_logits(z, hook, o) - start).abs().max()"
        ".item()\n    return spread")],
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
    attention = items["nb/test-self-attention"]
    assert 0 < attention["score"] < attention["points"]  # the notebook's own data still pass
    assert "nb-scale-d-model" in codes(attention)
    hooks = items["nb/test-hooks"]
    assert hooks["score"] < hooks["points"] and "nb-last-offset" in codes(hooks)
    for key in ("nb/test-equivariance", "nb/test-positions", "nb/test-causal"):
        assert items[key]["score"] == items[key]["points"]
