"""The probe driver (``grader.trusted.runs.LabRun``) on its plain path, in this process: what it
gives on the reference is what the sandbox gave the committed references; a spent budget and a
module that is not run cost their groups without running them. (The sandboxed path is run by
``test_runs.py``, ``test_hostile.py`` and ``test_references.py``.)"""

from __future__ import annotations

import numpy as np
import pytest

from grader.build.references import DRIFT_TOLERANCE
from grader.hidden import registry
from grader.trusted.budget import StudentBudget
from grader.trusted.references import References
from grader.trusted.runs import LabRun
from grader.trusted.sandbox import ItemFolders
from grader.trusted.verdicts import Finding, values_close

LAB = "17.01"


@pytest.fixture
def run(tmp_path):
    checks = registry()[LAB]
    np.savez(tmp_path / "inputs.npz", **checks.inputs())
    return lambda **options: LabRun(checks, ItemFolders(tmp_path / "items"),
                                    tmp_path / "inputs.npz", **options)


def test_the_plain_path_gives_the_committed_reference_outputs(run):
    lab_run = run()
    outcomes = lab_run.groups()
    refs = References(LAB)
    for group in lab_run.checks.groups:
        outcome = outcomes[group.key]["cpu"]
        assert outcome.status == "finished", group.key
        expected = refs.group(group.key)
        assert len(expected) == len(group.cases)
        for index, wanted in enumerate(expected):
            got = outcome.outputs(index)
            assert [o["shape"] for o in got] == [tuple(w["shape"]) for w in wanted]
            for output, reference in zip(got, wanted, strict=True):
                if reference["array"] is not None:
                    assert values_close(output["array"], reference["array"],
                                        DRIFT_TOLERANCE)[0], (group.key, index)
    assert set(lab_run.reports) == {f"{LAB}/{g.key}/cpu" for g in lab_run.checks.groups}


def test_a_spent_budget_runs_no_group(run):
    budget = StudentBudget(1.0)
    budget.charge(1.0)
    lab_run = run(budget=budget)
    outcomes = lab_run.groups()
    assert {o.status for v in outcomes.values() for o in v.values()} == {"capped"}
    assert budget.skipped == [f"{LAB}/{g.key}/cpu" for g in lab_run.checks.groups]
    assert lab_run.reports == {}


def test_a_module_not_run_costs_its_groups(run):
    why = Finding("missing-file", "falta", "missing")
    lab_run = run()
    (module,) = lab_run.checks.modules()
    outcomes = lab_run.groups(lambda group: ("cpu", "meta"), not_run={module: why})
    for group in lab_run.checks.groups:
        assert set(outcomes[group.key]) == {"cpu", "meta"}
        for outcome in outcomes[group.key].values():
            assert outcome.status == "missing" and outcome.file_findings == [why]
            assert outcome.cases == [None] * len(group.cases)
    assert lab_run.reports == {}
