"""Lab 17.03's notebook: solved, released untouched, and with typical mistakes (one run)."""

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

LAB, SLUG = "17.03", "17_03_rope"
MISTAKES = {
    "formulations": [("rotated = torch.cat([-x2, x1], dim=-1)",
                      "rotated = torch.cat([x2, -x1], dim=-1)")],
    "relative-logit": [("cross = q[1::2] * k[0::2] - q[0::2] * k[1::2]",
                        "cross = q[0::2] * k[1::2] - q[1::2] * k[0::2]")],
    "permute-heads": [("[:, perm]", "[:, perm.argsort()]")],
    "angles-in": [("(positions.to(dtype)[:, None] * inv_freq.to(dtype)[None, :]).double()",
                   "(positions[:, None] * inv_freq[None, :]).to(dtype).double()")],
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
    for key, code in (("nb/test-formulations", "nb-rotate_half-direction"),
                      ("nb/test-relative", "nb-relative-sign"),
                      ("nb/test-convert", "nb-permute-inverse"),
                      ("nb/test-bf16", "nb-angles-rounded-late")):
        assert items[key]["score"] < items[key]["points"], key
        assert code in codes(items[key]), (key, items[key]["findings"])
    for key in ("nb/test-by-hand", "nb/test-partial-and-cache"):
        assert items[key]["score"] == items[key]["points"]
