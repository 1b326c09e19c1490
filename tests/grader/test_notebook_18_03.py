"""Lab 18.03's notebook: solved, released untouched, and with typical mistakes (one run)."""

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

LAB, SLUG = "18.03", "18_03_kv_cache"
MISTAKES = {
    "chunk-bias": [("return hooks.slopes.float()[:, None, None] * rel",
                    "return -hooks.slopes.float()[:, None, None] * rel")],  # ALiBi's sign
    "kv-bytes": [("return 2 * n_layer", "return n_layer")],  # keys only
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
    bias = items["nb/test-chunk-bias"]
    assert 0 < bias["score"] < bias["points"] and "nb-alibi-sign" in codes(bias)
    exact = items["nb/test-exact"]
    assert exact["score"] < exact["points"] and "nb-cache-encodings" in codes(exact)
    assert "alibi" in next(f["en"] for f in exact["findings"] if f["code"] == "nb-cache-encodings")
    kv = items["nb/test-kv-bytes"]
    assert kv["score"] < kv["points"] and "nb-kv-keys-only" in codes(kv)
    assert items["nb/test-positions"]["score"] == items["nb/test-positions"]["points"]
