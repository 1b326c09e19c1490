"""Lab 17.06's notebook: solved, released untouched, and with typical mistakes (one run)."""

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

LAB, SLUG = "17.06", "17_06_two_d"
MISTAKES = {
    "mae-layout": [("return torch.cat((sin_then_cos(half), sin_then_cos(0)))",
                    "return torch.cat((sin_then_cos(0), sin_then_cos(half)))")],
    "sampled-positions": [("(torch.arange(new, dtype=torch.float64) + 0.5) * old / new - 0.5",
                           "torch.arange(new, dtype=torch.float64) * (old - 1) / (new - 1)")],
    "video": [("(time.repeat_interleave(n, dim=0), space.repeat(frames, 1))",
               "(time.repeat(n, 1), space.repeat_interleave(frames, dim=0))")],
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
    for key, code in (("nb/test-mae", "nb-mae-halves"),
                      ("nb/test-interpolate", "nb-align-corners"),
                      ("nb/test-video", "nb-video-repeat")):
        assert items[key]["score"] < items[key]["points"], key
        assert code in codes(items[key]), (key, items[key]["findings"])
    for key in ("nb/test-two-d", "nb/test-rope-2d"):
        assert items[key]["score"] == items[key]["points"]
