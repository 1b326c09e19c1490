"""Judges of lab 17.05 (T5 buckets, relative bias, Swin index) on synthetic outputs."""

from __future__ import annotations

import numpy as np

from grader.hidden import lab_17_05 as rb
from grader.hidden import registry
from grader.references import References
from grader.verdicts import GroupOutcome, JudgeContext

INPUTS = rb.inputs()


def output(array, dtype="int64"):
    array = np.asarray(array).astype(dtype)
    return {"kind": "tensor", "dtype": dtype, "shape": tuple(array.shape), "device": "cpu",
            "exact_type": True, "value": None, "array": array}


def judge(key, cases):
    checks = registry()["17.05"]
    item = next(i for i in checks.items if i.key == key)
    group = checks.group(item.group)
    run = GroupOutcome("cpu", "finished", [{"ok": True, "outputs": outs, "error": None}
                                           for outs in cases])
    context = JudgeContext(item, group, run, None, References("17.05").group(item.group),
                           checks.inputs(), checks.hidden_numbers(), f"{group.module}.py", {},
                           False, None)
    verdict = item.judge(context)
    return verdict, {f.code for f in verdict.findings}


def buckets(**options):
    cases = []
    for k in range(len(rb.BUCKET_CASES)):
        key, bi, nb, md = rb._bucket_args(k)
        rel = -INPUTS[key] if options.get("sign") else INPUTS[key]
        extra = {name: value for name, value in options.items() if name != "sign"}
        cases.append([output(rb.bucket(rel, bi, nb, md, **extra))])
    return cases


def test_buckets_reference_and_mistakes():
    verdict, codes = judge("buckets", buckets())
    assert verdict.score == verdict.points and not codes
    assert "sign" in judge("buckets", buckets(sign=True))[1]
    verdict, codes = judge("buckets", buckets(halve=False))
    assert "not-halved" in codes and 0 < verdict.score < verdict.points
    assert "causal-abs" in judge("buckets", buckets(causal_abs=True))[1]


def test_swin_reference_and_mistakes():
    verdict, codes = judge("swin", [[output(rb.swin_index(h, w))] for h, w in rb.WINDOWS])
    assert verdict.score == verdict.points and not codes
    assert "t5-sign" in judge("swin", [[output(rb.swin_index(h, w, sign=-1))]
                                       for h, w in rb.WINDOWS])[1]
    assert "stride" in judge("swin", [[output(rb.swin_index(h, w, stride=w))]
                                      for h, w in rb.WINDOWS])[1]
