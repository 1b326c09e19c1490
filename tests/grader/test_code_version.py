"""The grader's code version (part of a run's config: a new version regrades every submission)
changes with anything that can change a grade, wherever it lives."""

from __future__ import annotations

import shutil

import pytest

from grader.trusted.grading import code_version
from minimodel.course import find_lab
from minimodel.implementation import REPO_ROOT

LAB = find_lab("17.04")


@pytest.fixture
def course(tmp_path):
    """A copy of what the version is computed from: grader/, the lab folders, the catalogue."""
    shutil.copytree(REPO_ROOT / "grader", tmp_path / "grader",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO_ROOT / "solutions", tmp_path / "solutions")
    return tmp_path


@pytest.mark.parametrize("changed", [
    "grader/trusted/verdicts.py", f"{LAB.folder}/checks.py", f"{LAB.folder}/notebook.py",
    f"{LAB.folder}/references.json", "solutions/mistakes/alibi.py"])
def test_a_change_to_what_grades_changes_the_version(course, changed):
    before = code_version(course)
    with open(course / changed, "a", encoding="utf-8") as handle:
        handle.write("\n")
    assert code_version(course) != before


def test_the_samples_and_the_docs_do_not_change_it(course):
    before = code_version(course)
    (course / "grader" / "README.md").write_text("changed", encoding="utf-8")
    (course / "grader" / "samples" / "buggy" / "extra.snippet").write_text("x = 1\n")
    assert code_version(course) == before


def test_the_reference_outputs_are_hashed_byte_for_byte(course):
    before = code_version(course)
    npz = course / LAB.folder / "references.npz"
    data = npz.read_bytes()
    npz.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert code_version(course) != before
