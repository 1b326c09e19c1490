"""The course's slow tests, which ``make test-quick`` leaves out (``conftest.py`` marks them).

They build a release or the site, run the sandbox, a grading run, notebooks or many self-check
processes (``make test`` runs everything). Paths are relative to ``tests/``. A student's copy does
not get this file: its visible tests are quick.
"""

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
