"""The notebook cells' judge (``grader/hidden/cells.py``) on a made-up cell: which records score,
which tolerance each gets, and which findings a mistake, a property, a requirement and a
diagnosis function bring, in what order."""

from __future__ import annotations

import numpy as np

from grader.hidden.cells import (
    Mistake,
    Property,
    cell_judge,
    differences_below,
    requirement,
    wrong_text,
)
from grader.hidden.spec import CellCheck
from grader.trusted.verdicts import CellContext, Tolerance

RECORDS = {"a": "a", "b": "b", "dtype": "str(a.dtype)", "_x": "x", "loss": "loss"}


def _out(value) -> list[dict]:
    if isinstance(value, str):
        return [{"kind": "string", "value": value}]
    array = np.asarray(value, dtype=np.float64)
    return [{"kind": "tensor", "dtype": "float64", "shape": array.shape, "device": "cpu",
             "exact_type": True, "array": array}]


REFERENCE = {"a": _out([1.0, 2.0]), "b": _out([3.0]), "dtype": _out("torch.float32"),
             "_x": _out([5.0]), "loss": [{"kind": "tensor", "dtype": "float64", "shape": (2,)}]}


def _judge(judge, kernel=None, **values):
    cell = CellCheck("test-x", "Cuaderno: x", "Notebook: x", RECORDS, judge,
                     volatile=frozenset({"loss"}))
    recorded = {name: {"ok": True, "outputs": _out(v)} for name, v in {
        "a": [1.0, 2.0], "b": [3.0], "dtype": "torch.float32", "_x": [5.0],
        "loss": [0.5, 0.25]}.items()}
    recorded.update({name: v if isinstance(v, dict) else {"ok": True, "outputs": _out(v)}
                     for name, v in values.items()})
    return judge(CellContext(cell, 3.0, recorded, REFERENCE, kernel or {"status": "finished"}))


def test_records_named_with_an_underscore_or_volatile_score_nothing():
    verdict = _judge(cell_judge(), _x=[9.0], loss=[7.0, 7.0])
    assert (verdict.score, verdict.passed, verdict.total) == (3.0, 3, 3)


def test_tols_per_record_beat_tol_and_the_dtype_default():
    judge = cell_judge(tol=Tolerance(0.0, 0.2), tols={"b": Tolerance(0.0, 0.0)})
    assert _judge(judge, a=[1.1, 2.1], b=[3.0]).passed == 3
    assert _judge(judge, a=[1.0, 2.0], b=[3.01]).passed == 2
    assert _judge(cell_judge(tolerances={"float64": Tolerance(0.0, 0.2)}), a=[1.1, 2.1]).passed \
        == 3


def test_findings_come_in_order_mistakes_properties_diagnoses_then_requirements():
    judge = cell_judge(
        properties=(Property("small-loss", ("loss",), lambda loss: loss.max() < 1, "es", "en"),
                    requirement(("loss",), lambda loss: loss.min() > 0, "positiva", "positive")),
        mistakes=(Mistake("doubled", lambda get: {"a": 2 * get("ref:a")}, "doble", "doubled"),),
        diagnoses=(wrong_text("dtype", "wrong-dtype", "devuelve {got}", "returns {got}"),))
    verdict = _judge(judge, a=[2.0, 4.0], dtype="torch.float64", loss=[2.0, -1.0])
    assert [f.code for f in verdict.findings] == ["doubled", "small-loss", "wrong-dtype",
                                                  "nb-property"]
    assert verdict.findings[2].en == "returns torch.float64"
    assert verdict.findings[3].en == "Not met: positive"
    assert verdict.total == 5 and verdict.passed == 1


def test_differences_below_wants_each_one_finite_and_under_the_limit():
    judge = cell_judge(properties=(differences_below("nb-far", "loss", 1e-4, "es", "en"),))
    small = _judge(judge, loss=[0.0, 9e-5])
    assert (small.passed, small.total, small.findings) == (4, 4, [])
    for differences in ([0.0, 1e-4], [np.nan, 0.0], [np.inf, 0.0]):
        verdict = _judge(judge, loss=differences)
        assert verdict.passed == 3 and [f.code for f in verdict.findings] == ["nb-far"], \
            differences
    assert _judge(judge, loss=[0.0, 0.0, 0.0]).passed == 3  # the reference's shape first


def test_an_unmet_requirement_alone_keeps_the_generic_findings():
    judge = cell_judge(properties=(requirement(("loss",), lambda loss: loss.min() > 0, "p",
                                               "p"),))
    verdict = _judge(judge, b=[4.0], loss=[-1.0, 1.0])
    assert [f.code for f in verdict.findings] == ["values", "nb-property"]


def test_a_mistake_is_named_only_when_one_of_its_records_fails():
    mistake = Mistake("same", lambda get: {"a": get("ref:a")}, "es", "en")
    assert [f.code for f in _judge(cell_judge(mistakes=(mistake,)), b=[4.0]).findings] == \
        ["values"]


def test_a_key_error_reads_as_not_computed_only_after_a_failed_cell():
    error = {"ok": False, "error": {"type": "KeyError", "message": "'rope'"}}
    failed = {"status": "finished", "cell_errors": [{"role": "student", "ename": "ValueError"}]}
    assert {f.code for f in _judge(cell_judge(), failed, a=error).findings} == {"not-recorded"}
    clean = {"status": "finished", "cell_errors": []}
    assert "exception" in {f.code for f in _judge(cell_judge(), clean, a=error).findings}
