"""The notebook judges of labs 17.00-17.06 answer nonsense records without raising (no kernel)."""

from __future__ import annotations

import numpy as np
import pytest

from grader import nbexec
from grader.hidden import registry
from grader.references import References
from grader.verdicts import CellContext

LABS = ["17.00", "17.02", "17.03", "17.04", "17.05", "17.06"]
GARBAGE = [
    [{"kind": "tensor", "dtype": "float32", "shape": (3,), "device": "cpu", "exact_type": True,
      "array": np.array([1.0, np.nan, -np.inf], dtype=np.float32)}],
    [{"kind": "string", "value": "oops"}, {"kind": "none"}],
    [{"kind": "scalar", "dtype": "int64", "shape": (), "type": "int", "array": np.array(7)}] * 3,
    [],
]


@pytest.mark.parametrize("lab_id", LABS)
def test_cell_judges_answer_nonsense_with_no_points(lab_id):
    checks = registry()[lab_id]
    refs = References(lab_id)
    points = nbexec.graded_cells(nbexec.source_notebook(checks.notebook.slug))
    for cell in checks.notebook.cells:
        variants = [{"ok": True, "outputs": list(o)} for o in GARBAGE]
        variants += [{"ok": False, "error": {"type": "ValueError", "message": "no"}}, None]
        for record in variants:
            context = CellContext(cell, points[cell.grade_id]["points"],
                                  {name: record for name in cell.records},
                                  refs.cell(cell.grade_id), {"status": "finished"}, set())
            verdict = cell.judge(context)
            assert verdict.score == 0, (cell.grade_id, record, verdict.findings)


@pytest.mark.parametrize("lab_id", LABS)
def test_reference_records_score_full_marks(lab_id):
    """The references judged as if a student had recorded them (volatile ones are only
    descriptions: those cells are covered by the notebook runs)."""
    checks = registry()[lab_id]
    refs = References(lab_id)
    points = nbexec.graded_cells(nbexec.source_notebook(checks.notebook.slug))
    for cell in checks.notebook.cells:
        if cell.volatile:
            continue
        recorded = {name: {"ok": True, "outputs": outputs}
                    for name, outputs in refs.cell(cell.grade_id).items()}
        context = CellContext(cell, points[cell.grade_id]["points"], recorded,
                              refs.cell(cell.grade_id), {"status": "finished"}, set())
        verdict = cell.judge(context)
        assert verdict.score == verdict.points, (cell.grade_id, verdict.findings)
