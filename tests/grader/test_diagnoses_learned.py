"""Judges of lab 17.02 (learned positions) on synthetic outputs: each mistake is named."""

from __future__ import annotations

import numpy as np

from grader.hidden import lab_17_02 as learned
from grader.hidden import registry
from grader.hidden.common import bf16
from grader.references import References
from grader.verdicts import GroupOutcome, JudgeContext

INPUTS = learned.inputs()


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
    context = JudgeContext(item, group, run, None, References("17.02").group(item.group),
                           checks.inputs(), f"{group.module}.py", {},
                           False, None)
    verdict = item.judge(context)
    return verdict, {f.code for f in verdict.findings}


def interpolated(convention="corners", dtype_of=lambda d: d):
    cases = []
    for key, dtype, n in learned.INTERP_CASES:
        table = INPUTS[key].astype(dtype).astype(np.float64)
        cases.append([output(learned.resize(table, n, convention), dtype_of(dtype))])
    return cases


def test_interpolate_reference_and_mistakes():
    verdict, codes = judge("interpolate", interpolated())
    assert verdict.score == verdict.points and not codes
    verdict, codes = judge("interpolate", interpolated("centres"))
    assert "centres" in codes and verdict.score < verdict.points
    assert "nearest" in judge("interpolate", interpolated("nearest"))[1]
    assert "dtype-not-kept" in judge("interpolate", interpolated(dtype_of=lambda d: "float32"))[1]


def test_forward_offset_and_dtype():
    right = [[output(INPUTS[f"x{k}"], dtype)]
             for k, (_, _, _, dtype, _) in enumerate(learned.FORWARD_CASES)]
    verdict, codes = judge("forward", right)
    assert verdict.score == verdict.points and not codes
    broken = [None if learned.FORWARD_CASES[k][4] else case for k, case in enumerate(right)]
    verdict, codes = judge("forward", broken)
    assert "offset" in codes and verdict.score < verdict.points
    widened = [[output(INPUTS[f"x{k}"], "float32")] for k in range(len(right))]
    assert "dtype-not-kept" in judge("forward", widened)[1]
