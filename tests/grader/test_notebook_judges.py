"""The notebook judges of every lab, without a kernel: nonsense records score nothing without
raising, and the reference notebook's deterministic records score full marks."""

from __future__ import annotations

import numpy as np
import pytest

from grader.hidden import registry
from grader.trusted import nbexec
from grader.trusted.references import References
from grader.trusted.status import Run
from grader.trusted.verdicts import CellContext, GroupOutcome

LABS = [lab_id for lab_id, checks in registry().items() if checks.notebook is not None]
GARBAGE = [
    [{"kind": "tensor", "dtype": "float32", "shape": (3,), "device": "cpu", "exact_type": True,
      "array": np.array([1.0, np.nan, -np.inf], dtype=np.float32)}],
    [{"kind": "string", "value": "oops"}, {"kind": "none"}],
    [{"kind": "scalar", "dtype": "int64", "shape": (), "type": "int", "array": np.array(7)}] * 3,
    [{"kind": "unsupported", "type": "dict"}],
    [],
]
CELL_ERRORS = {"status": "finished", "cell_errors": [{"role": "given", "ename": "KeyError"}]}


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
                                  refs.cell(cell.grade_id), {"status": "finished"})
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
        probe = GroupOutcome("cpu", Run.FINISHED, [
            {"ok": True, "outputs": outputs} for outputs in refs.group(cell.group)]) \
            if cell.group else None  # the reference's run of the cell's probe group
        context = CellContext(cell, points[cell.grade_id]["points"], recorded,
                              refs.cell(cell.grade_id), {"status": "finished"}, probe=probe)
        verdict = cell.judge(context)
        assert verdict.score == verdict.points, (cell.grade_id, verdict.findings)


def _judge_with(lab_id: str, grade_id: str, **values) -> set[str]:
    """The finding codes of one cell judged on the reference records with ``values`` (name ->
    list of arrays or strings) recorded instead."""
    checks = registry()[lab_id]
    refs = References(lab_id)
    cell = next(c for c in checks.notebook.cells if c.grade_id == grade_id)
    recorded = {name: {"ok": True, "outputs": outputs}
                for name, outputs in refs.cell(grade_id).items()}
    for name, items in values.items():
        outputs = []
        for item in items:
            if isinstance(item, str):
                outputs.append({"kind": "string", "value": item})
            else:
                array = np.asarray(item)
                outputs.append({"kind": "tensor", "dtype": str(array.dtype), "device": "cpu",
                                "shape": array.shape, "exact_type": True, "array": array})
        recorded[name] = {"ok": True, "outputs": outputs}
    verdict = cell.judge(CellContext(cell, 2.0, recorded, refs.cell(grade_id),
                                     {"status": "finished"}))
    assert verdict.score < verdict.points
    return {f.code for f in verdict.findings}


def test_more_diagnoses_on_recorded_values():
    refs = References("17.00").cell("test-self-attention")
    causal = np.array(refs["probe_causal"][0]["array"])
    causal[:, 0] = np.nan  # the first query sees no key when the diagonal is masked
    assert "nb-mask-diagonal" in _judge_with("17.00", "test-self-attention",
                                             probe_causal=[causal])
    assert "nb-not-float" in _judge_with("17.00", "test-equivariance", kind=["Tensor"])
    assert "nb-accuracy-axis" in _judge_with("17.02", "test-past-lmax",
                                             _accuracy=[np.ones(256), np.ones(256)])
    starts = np.array([0] + [-1] * 15)  # rel = +n: every distance lands in bucket 0 or 16+
    assert "nb-starts-sign" in _judge_with("17.05", "test-bucket-starts", bi=[starts])
    assert "nb-mass-off-by-one" in _judge_with("17.04", "test-profile",
                                               mass_probe=[np.array([0.125], np.float32)])
    assert "nb-spread-whole" in _judge_with("17.06", "test-rope-2d", ls=[np.array(4.0)],
                                            ls_other=[np.array(11.0)])
    assert "nb-video-dtype" in _judge_with("17.06", "test-video", dtype=["torch.float64"])
    assert "nb-property" in _judge_with("17.06", "test-interpolate",
                                        _error=[np.full(32, 1e-2)])


def test_a_dictionary_left_unfilled_reads_as_not_computed():
    checks = registry()["19.01"]
    cell = next(c for c in checks.notebook.cells if c.grade_id == "test-parameters")
    error = {"ok": False, "error": {"type": "KeyError", "message": "'none'"}}
    verdict = cell.judge(CellContext(cell, 3, {name: error for name in cell.records},
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
