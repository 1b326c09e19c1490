"""Every lab notebook runs top to bottom against the reference, at the test size.

How long they take is measured by ``benchmarks/labs.py``, not asserted here: a busy machine must
not turn a time limit into a failure. The cell time-out only stops a cell that hangs.
"""

import pytest

from minimodel.course import LABS
from minimodel.labrun import run_lab

HANG_SECONDS = 900


@pytest.mark.slow
@pytest.mark.parametrize("lab", LABS, ids=[lab.id for lab in LABS])
def test_lab_executes_against_reference(lab, tmp_path):
    notebook = run_lab(lab, impl="reference", size="test", figures=tmp_path, timeout=HANG_SECONDS)
    errors = [
        o for c in notebook.cells for o in c.get("outputs", []) if o["output_type"] == "error"
    ]
    assert not errors
    assert list(tmp_path.glob("*.png")), "the lab saves its figures"
