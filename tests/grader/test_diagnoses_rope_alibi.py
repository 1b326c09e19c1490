"""Judges of labs 17.03 (RoPE) and 17.04 (ALiBi): each mistake is named.

RoPE's on synthetic outputs; ALiBi's mistakes are written into copies of the reference source and
run through the probes (``source_runs``)."""

from __future__ import annotations

import numpy as np
import pytest
from mistaken_sources import MISTAKEN
from source_runs import grade_source, mutated

from grader.hidden import lab_17_03 as rope
from grader.hidden import registry
from grader.hidden.common import bf16
from grader.references import References
from grader.verdicts import GroupOutcome, JudgeContext


def output(array, dtype=None, kind="tensor"):
    array = np.asarray(array)
    if dtype == "bfloat16":
        array = bf16(array.astype(np.float32))
    elif dtype is not None:
        array = array.astype(dtype)
    return {"kind": kind, "dtype": dtype or str(array.dtype), "shape": tuple(array.shape),
            "device": "cpu", "exact_type": True, "value": None, "array": array}


def judge(lab, key, cases):
    checks = registry()[lab]
    item = next(i for i in checks.items if i.key == key)
    group = checks.group(item.group)
    run = GroupOutcome("cpu", "finished", [{"ok": True, "outputs": outs, "error": None}
                                           for outs in cases])
    context = JudgeContext(item, group, run, None, References(lab).group(item.group),
                           checks.inputs(), f"{group.module}.py", {},
                           False, None)
    verdict = item.judge(context)
    return verdict, {f.code for f in verdict.findings}


INPUTS = rope.inputs()


def rotary_outputs(convention_of=lambda c: c, **options):
    cases = []
    for x, dtype, c, s, conv in rope.ROTARY_CASES:
        result = rope.rotate(INPUTS[x], INPUTS[c], INPUTS[s], convention_of(conv), **options)
        cases.append([output(result, dtype)])
    return cases


def test_rope_rotary_reference_and_mistakes():
    verdict, _ = judge("17.03", "rotary", rotary_outputs())
    assert verdict.score == verdict.points
    assert "convention-swapped" in judge("17.03", "rotary", rotary_outputs(rope.OTHER.get))[1]
    assert "direction" in judge("17.03", "rotary", rotary_outputs(direction=-1))[1]
    verdict, codes = judge("17.03", "rotary", rotary_outputs(tail="zero"))
    assert "tail" in codes and 0 < verdict.score < verdict.points
    cases = rotary_outputs()
    cases[5] = [output(cases[5][0]["array"], "float32")]  # bfloat16 in, float32 out
    assert "dtype-not-kept" in judge("17.03", "rotary", cases)[1]


def test_rope_bfloat16_angles_and_exponent():
    cases = []
    for p, f, factor in rope.COS_SIN_CASES:
        positions, inv_freq = INPUTS[p].astype(np.float32), INPUTS[f]
        angles = bf16(bf16(positions)[..., None] * bf16(inv_freq)).astype(np.float64)
        cases.append([output(np.cos(angles) * factor, "float32"),
                      output(np.sin(angles) * factor, "float32")])
    verdict, codes = judge("17.03", "cos_sin", cases)
    assert "bf16-angles" in codes and verdict.score < verdict.points
    right = [[output(np.cos(INPUTS[p].astype(np.float64)[..., None] * INPUTS[f]) * a, "float32"),
              output(np.sin(INPUTS[p].astype(np.float64)[..., None] * INPUTS[f]) * a, "float32")]
             for p, f, a in rope.COS_SIN_CASES]
    assert judge("17.03", "cos_sin", right)[0].score == 1
    exponent = [[output(b ** (-np.arange(r // 2) / r), "float32")] for r, b in rope.FREQ_CASES]
    assert "exponent" in judge("17.03", "frequencies", exponent)[1]


def test_rope_offset_ignored():
    cases = []
    for x, r, _, base, conv, _offset in rope.MODULE_CASES:
        cos, sin = rope._tables(np.arange(INPUTS[x].shape[-2]), rope.freqs(r, base))
        cases.append([output(rope.rotate(INPUTS[x], cos, sin, conv), "float32")])
    verdict, codes = judge("17.03", "module", cases)
    assert "offset-ignored" in codes and 0 < verdict.score < verdict.points


ALIBI = MISTAKEN["17.04"]  # ALiBi's classic mistakes, written into the reference


@pytest.fixture(scope="module")
def alibi_graded(tmp_path_factory):
    """mistake -> the verdicts of the reference with that mistake written in ("": none)."""
    folder = tmp_path_factory.mktemp("alibi")
    edits = {**ALIBI, "finite-mask": ('masked_fill(distance < 0, float("-inf"))',
                                      "masked_fill(distance < 0, -1e9)")}
    graded = {name: grade_source("17.04", mutated("alibi", edit), folder)
              for name, edit in edits.items()}
    return {**graded, "": grade_source("17.04", mutated("alibi"), folder)}


def test_alibi_reference_scores_full_marks(alibi_graded):
    assert all(v.score == v.points for v in alibi_graded[""].values())


@pytest.mark.parametrize("rule", ["geometric", "odd-half", "sorted", "off-by-one"])
def test_alibi_slope_rules(rule, alibi_graded):
    verdict = alibi_graded[rule]["slopes"]
    assert rule in {f.code for f in verdict.findings} and verdict.score < 2


@pytest.mark.parametrize("mistake", ["sign", "start-aligned", "no-mask", "row-constant",
                                     "masked", "signed", "finite-mask"])
def test_alibi_bias_mistakes(mistake, alibi_graded):
    verdict = alibi_graded[mistake]["bias"]
    assert mistake in {f.code for f in verdict.findings} and verdict.score < 2
