"""Judges of lab 17.02 (learned positions): each mistake is named.

The interpolation's mistakes are written into copies of the reference source and run through the
probes (``source_runs``); ``forward``'s outputs are built in the test (a zero table: the rows of
``x`` itself, or no output where an offset breaks the slice) and handed to the judge.
"""

from __future__ import annotations

import numpy as np
import pytest
from mistaken_sources import MISTAKEN
from source_runs import codes, grade_source, mutated, reference

from grader.hidden import lab_17_02 as learned
from grader.hidden import registry
from grader.hidden.common import bf16
from grader.trusted.references import References
from grader.trusted.verdicts import GroupOutcome, JudgeContext

INPUTS = learned.inputs()
NOT_CAST_BACK = ("return torch.lerp(rows[lo], rows[hi], frac).to(table.dtype)",
                 "return torch.lerp(rows[lo], rows[hi], frac)")


def output(array, dtype):
    array = np.asarray(array)
    array = bf16(array.astype(np.float32)) if dtype == "bfloat16" else array.astype(dtype)
    return {"kind": "tensor", "dtype": dtype, "shape": tuple(array.shape), "device": "cpu",
            "exact_type": True, "value": None, "array": array}


def judge(key, cases):
    checks = registry()["17.02"]
    item = next(i for i in checks.items if i.key == key)
    group = checks.group(item.group)
    run = GroupOutcome("cpu", "finished", [
        {"ok": outs is not None, "outputs": outs or [], "error": None if outs else
         {"type": "RuntimeError", "message": "shape"}} for outs in cases])
    context = JudgeContext(item=item, group=group, run=run, gpu_run=None,
                           refs=References("17.02").group(item.group), inputs=checks.inputs(),
                           module_file=f"{group.module}.py")
    verdict = item.judge(context)
    return verdict, {f.code for f in verdict.findings}


def test_interpolate_reference_scores_full_marks(tmp_path):
    verdict = grade_source("learned", reference("learned"), tmp_path)["interpolate"]
    assert verdict.score == verdict.points and not codes(verdict)


@pytest.mark.parametrize("mistake", sorted(MISTAKEN["learned"]))
def test_interpolate_mistakes_are_named(mistake, tmp_path):
    verdict = grade_source("learned", mutated("learned", MISTAKEN["learned"][mistake]),
                           tmp_path)["interpolate"]
    assert mistake in codes(verdict) and verdict.score < verdict.points


def test_interpolate_dtype_not_kept(tmp_path):
    verdict = grade_source("learned", mutated("learned", NOT_CAST_BACK), tmp_path)["interpolate"]
    assert "dtype-not-kept" in codes(verdict)


def test_forward_offset_and_dtype():
    right = [[output(INPUTS[f"x{k}"], dtype)]
             for k, (_, _, _, dtype, _) in enumerate(learned.FORWARD_CASES)]
    verdict, found = judge("forward", right)
    assert verdict.score == verdict.points and not found
    broken = [None if learned.FORWARD_CASES[k][4] else case for k, case in enumerate(right)]
    verdict, found = judge("forward", broken)
    assert "offset" in found and verdict.score < verdict.points
    widened = [[output(INPUTS[f"x{k}"], "float32")] for k in range(len(right))]
    assert "dtype-not-kept" in judge("forward", widened)[1]
