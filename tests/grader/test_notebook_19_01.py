"""Lab 19.01's notebook (no module of its own): solved, released untouched, and with typical
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

LAB, SLUG = "19.01", "19_01_mini_gpt"
MISTAKES = {
    "parameters": [("total += config.t5_num_buckets * H", "total += config.t5_num_buckets")],
    "cached": [("with torch.no_grad():", "if True:")],  # gradients kept
    "memory": [("p.numel() * p.element_size()", "p.numel()"),  # numbers, not bytes
               ("b.numel() * b.element_size()", "b.numel()"),
               ("bias.numel() * bias.element_size()", "bias.numel()")],
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


def test_a_lab_without_a_module_is_graded_and_totalled(records):
    lab = records["solved"]["labs"][LAB]
    assert {v["key"] for v in lab["items"]} == {
        "nb/test-parameters", "nb/test-cached", "nb/test-memory",
        "nb/q1-answer", "nb/q2-answer", "nb/q3-answer"}
    assert lab["score"] == lab["max"] == 8  # auto-graded points; written answers by hand


def test_typical_mistakes_are_diagnosed(records):
    items = notebook_items(records["mistakes"], LAB)
    parameters = items["nb/test-parameters"]
    assert parameters["score"] < parameters["points"] and "nb-t5-heads" in codes(parameters)
    cached = items["nb/test-cached"]
    assert 0 < cached["score"] < cached["points"] and "nb-grad" in codes(cached)
    memory = items["nb/test-memory"]
    assert memory["score"] < memory["points"] and "nb-numel-only" in codes(memory)
