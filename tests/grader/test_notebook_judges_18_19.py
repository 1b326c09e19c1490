"""The notebook judges of labs 18.01-19.02 (no kernel): nonsense records score nothing without
raising, and the reference notebook's deterministic records score full marks."""

from __future__ import annotations

import numpy as np
import pytest

from grader import nbexec
from grader.hidden import registry
from grader.references import References
from grader.verdicts import CellContext

LABS = ["18.01", "18.02", "18.03", "19.01", "19.02"]
GARBAGE = [
    [{"kind": "tensor", "dtype": "float32", "shape": (3,), "device": "cpu", "exact_type": True,
      "array": np.array([1.0, np.nan, -np.inf], dtype=np.float32)}],
    [{"kind": "string", "value": "oops"}, {"kind": "none"}],
    [{"kind": "scalar", "dtype": "int64", "shape": (), "type": "int", "array": np.array(7)}] * 3,
    [{"kind": "unsupported", "type": "dict"}],
    [],
]
CELL_ERRORS = {"status": "finished", "cell_errors": [{"role": "given", "ename": "KeyError"}]}


def _context(cell, points, records, refs, kernel=None) -> CellContext:
    return CellContext(cell, points, records, refs, kernel or {"status": "finished"}, set())


@pytest.mark.parametrize("lab_id", LABS)
def test_cell_judges_answer_nonsense_with_no_points(lab_id):
    checks = registry()[lab_id]
    refs = References(lab_id)
    points = nbexec.graded_cells(nbexec.source_notebook(checks.notebook.slug))
    for cell in checks.notebook.cells:
        variants = [{"ok": True, "outputs": list(o)} for o in GARBAGE]
        variants += [{"ok": False, "error": {"type": "ValueError", "message": "no"}}, None]
        for record in variants:
            context = _context(cell, points[cell.grade_id]["points"],
                               {name: record for name in cell.records}, refs.cell(cell.grade_id))
            verdict = cell.judge(context)
            assert verdict.score == 0, (cell.grade_id, record, verdict.findings)


@pytest.mark.parametrize("lab_id", LABS)
def test_reference_records_score_full_marks(lab_id):
    """The references judged as if a student had recorded them (the volatile ones are only
    descriptions: those cells are covered by the notebook runs)."""
    checks = registry()[lab_id]
    refs = References(lab_id)
    points = nbexec.graded_cells(nbexec.source_notebook(checks.notebook.slug))
    for cell in checks.notebook.cells:
        if cell.volatile:
            continue
        recorded = {name: {"ok": True, "outputs": outputs}
                    for name, outputs in refs.cell(cell.grade_id).items()}
        verdict = cell.judge(_context(cell, points[cell.grade_id]["points"], recorded,
                                      refs.cell(cell.grade_id)))
        assert verdict.score == verdict.points, (cell.grade_id, verdict.findings)


def test_a_dictionary_left_unfilled_reads_as_not_computed():
    checks = registry()["19.01"]
    cell = next(c for c in checks.notebook.cells if c.grade_id == "test-parameters")
    error = {"ok": False, "error": {"type": "KeyError", "message": "'none'"}}
    verdict = cell.judge(_context(cell, 3, {name: error for name in cell.records},
                                  References("19.01").cell(cell.grade_id), CELL_ERRORS))
    codes = {f.code for f in verdict.findings}
    assert verdict.score == 0 and "not-recorded" in codes and "exception" not in codes


@pytest.mark.parametrize("lab_id", LABS)
def test_every_written_answer_has_a_title_in_both_languages(lab_id):
    notebook = registry()[lab_id].notebook
    graded = nbexec.graded_cells(nbexec.source_notebook(notebook.slug))
    manual = {gid for gid, info in graded.items() if info["kind"] == "manual"}
    assert manual and manual == set(notebook.manual_titles)
    for es, en in notebook.manual_titles.values():
        assert "corrección manual" in es and "graded by hand" in en
