"""Which implementation the tests exercise, and which tests the inner loop leaves out.

In the course repository the tests run against the reference solutions; in a student's copy
(no ``solutions/``) they run against the student's own files. ``MINIMODEL_IMPL`` overrides both.

``make test-quick`` runs ``pytest -m "not slow and not browser"``: the modules in ``SLOW`` and
``SLOW_NAMES`` build a release or the site, run the sandbox, a grading run, notebooks or many
self-check processes, and are marked ``slow`` here (``make test`` runs everything).
"""

import os
from pathlib import Path

import pytest

from minimodel.implementation import REFERENCE_DIR

os.environ.setdefault("MINIMODEL_IMPL", "reference" if REFERENCE_DIR.is_dir() else "src")
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the labs' tiny Llama is built from a config

TESTS = Path(__file__).resolve().parent
SLOW = {
    "docs/test_bibliography.py", "docs/test_docs_build.py", "docs/test_figures.py",
    "grader/test_borrowed_answers.py", "grader/test_determinism.py", "grader/test_hostile.py",
    "grader/test_kernels.py", "grader/test_merging.py", "grader/test_nbgrader_course.py",
    "grader/test_notebooks.py", "grader/test_redact.py", "grader/test_release.py",
    "grader/test_release_site.py",
    "grader/test_release_holds_no_answers.py", "grader/test_runs.py",
    "grader/test_student_cap.py", "grader/test_student_flow.py", "grader/test_intake.py",
    "grader/test_references.py", "grader/test_notebook_judges.py",
    "grader/test_mistakes_shared.py", "grader/test_readme_example.py",
    "test_jupyter_lab.py", "test_lab_notebook_cells.py", "test_labrun.py", "test_labs.py",
    "test_nothing_lost.py", "test_submit.py",
}  # fmt: skip
SLOW_NAMES = "test_selfcheck*.py"  # each runs self-check processes


def pytest_collection_modifyitems(items):
    for item in items:
        path = item.path.relative_to(TESTS)
        if path.as_posix() in SLOW or path.match(SLOW_NAMES):
            item.add_marker(pytest.mark.slow)
