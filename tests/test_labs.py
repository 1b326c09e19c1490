"""Every lab notebook runs top to bottom against the reference, at the test size, in time."""

import time

import pytest

from minimodel.course import LABS
from minimodel.labrun import run_lab

LIMIT_SECONDS = 90


@pytest.mark.slow
@pytest.mark.parametrize("lab", LABS, ids=[lab.id for lab in LABS])
def test_lab_executes_against_reference(lab, tmp_path):
    start = time.perf_counter()
    notebook = run_lab(lab, impl="reference", size="test", figures=tmp_path, timeout=LIMIT_SECONDS)
    elapsed = time.perf_counter() - start
    assert elapsed < LIMIT_SECONDS, f"{lab.id} took {elapsed:.0f} s"
    errors = [
        o for c in notebook.cells for o in c.get("outputs", []) if o["output_type"] == "error"
    ]
    assert not errors
    assert list(tmp_path.glob("*.png")), "the lab saves its figures"
