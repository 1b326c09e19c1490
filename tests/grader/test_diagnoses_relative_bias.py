"""Judges of lab 17.05 (T5 buckets, relative bias, Swin index): on synthetic outputs, and on the
reference, the stub and copies of the reference with one mistake each, through the probe."""

from __future__ import annotations

import numpy as np
import pytest
from source_runs import codes, grade_source, mutated, points, reference, stub

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
                           checks.inputs(), f"{group.module}.py", {},
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


# --- the whole module, through the probe: reference, stub, and the reference with one mistake ---

def test_reference_full_marks_and_stub_zero(tmp_path):
    verdicts = grade_source("17.05", reference("relative_bias"), tmp_path)
    assert {k: v.score for k, v in verdicts.items()} == {"buckets": 3, "bias": 2, "swin": 1}
    assert not any(codes(v) for v in verdicts.values())
    verdicts = grade_source("17.05", stub("relative_bias"), tmp_path)
    assert points(verdicts) == 0
    assert all(codes(v) == {"not-implemented"} for v in verdicts.values())


FORWARD = "torch.arange(k_len - q_len, k_len, device=device)[:, None]"
BIAS_MISTAKES = {
    "start-aligned": [(FORWARD, "torch.arange(q_len, device=device)[:, None]")],
    "sign": [("            key - query,", "            query - key,")],
    "reshape": [(".permute(2, 0, 1)  # (H", ".reshape(self.n_heads, q_len, k_len)  # (H")],
    "transposed": [(".permute(2, 0, 1)  # (H", ".permute(2, 1, 0)  # (H")],
    "bidirectional-ignored": [("bidirectional=self.bidirectional,", "bidirectional=False,")],
    "defaults": [("            num_buckets=self.num_buckets,\n"
                  "            max_distance=self.max_distance,\n", "")],
}


@pytest.mark.parametrize("mistake", sorted(BIAS_MISTAKES))
def test_bias_mistakes_are_named(mistake, tmp_path):
    verdicts = grade_source("17.05", mutated("relative_bias", *BIAS_MISTAKES[mistake]), tmp_path)
    bias = verdicts["bias"]
    assert mistake in codes(bias), bias.findings
    assert bias.score < bias.points
    assert verdicts["buckets"].score == 3 and verdicts["swin"].score == 1
    finding = next(f for f in bias.findings if f.code == mistake)
    assert finding.es != finding.en


def test_bias_mistakes_lose_the_right_points(tmp_path):
    """Each mistake fails exactly the hidden cases it changes and keeps the others' points."""
    lost = {}
    for mistake, replacements in BIAS_MISTAKES.items():
        verdict = grade_source("17.05", mutated("relative_bias", *replacements), tmp_path)["bias"]
        lost[mistake] = verdict.total - verdict.passed
        assert verdict.score == round(2 * verdict.passed / verdict.total, 2)
    cases = len(rb.BIAS_CASES)
    square = sum(q == k for *_, q, k in rb.BIAS_CASES)
    single_head = sum(h == 1 for h, *_ in rb.BIAS_CASES)
    assert lost["start-aligned"] == cases - square
    assert lost["sign"] == cases
    assert lost["reshape"] == cases - single_head
    assert lost["transposed"] == cases
    assert lost["bidirectional-ignored"] == sum(bi for _, _, _, bi, _, _ in rb.BIAS_CASES)
    assert lost["defaults"] == sum((nb, md) != (32, 128) for _, nb, md, *_ in rb.BIAS_CASES)
