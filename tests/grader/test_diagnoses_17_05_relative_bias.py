"""Judges of lab 17.05 (T5 buckets, relative bias, Swin index) on the reference, the stub and
copies of the reference with one mistake each, through the probe."""

from __future__ import annotations

import pytest
from mistaken_sources import MISTAKEN
from source_runs import codes, grade_source, mutated, points, reference, stub

from grader.hidden import lab_17_05 as rb

EDITS = MISTAKEN["relative_bias"]  # the catalogue's mistakes, written into the reference


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """mistake -> the verdicts of the reference with that mistake written in."""
    folder = tmp_path_factory.mktemp("relative_bias")
    return {name: grade_source("relative_bias", mutated("relative_bias", edit), folder)
            for name, edit in EDITS.items()}


def test_buckets_mistakes(graded):
    assert "sign" in codes(graded["sign"]["buckets"])
    verdict = graded["not-halved"]["buckets"]
    assert "not-halved" in codes(verdict) and 0 < verdict.score < verdict.points
    assert "causal-abs" in codes(graded["causal-abs"]["buckets"])


def test_swin_mistakes(graded):
    for mistake in ("t5-sign", "stride", "stride-height"):
        verdict = graded[mistake]["swin"]
        assert mistake in codes(verdict) and verdict.score < verdict.points, mistake


# --- the whole module, through the probe: reference, stub, and the reference with one mistake ---

def test_reference_full_marks_and_stub_zero(tmp_path):
    verdicts = grade_source("relative_bias", reference("relative_bias"), tmp_path)
    assert {k: v.score for k, v in verdicts.items()} == {"buckets": 3, "bias": 2, "swin": 1}
    assert not any(codes(v) for v in verdicts.values())
    verdicts = grade_source("relative_bias", stub("relative_bias"), tmp_path)
    assert points(verdicts) == 0
    assert all(codes(v) == {"not-implemented"} for v in verdicts.values())


BIAS_MISTAKES = {  # the module's own mistakes; its sign (not the bucket function's) is "sign" too
    **{name: [EDITS[name]] for name in ("start-aligned", "reshape", "transposed",
                                        "bidirectional-ignored", "defaults")},
    "sign": [("            key - query,", "            query - key,")],
}


@pytest.mark.parametrize("mistake", sorted(BIAS_MISTAKES))
def test_bias_mistakes_are_named(mistake, tmp_path):
    verdicts = grade_source("relative_bias", mutated("relative_bias", *BIAS_MISTAKES[mistake]),
                            tmp_path)
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
        source = mutated("relative_bias", *replacements)
        verdict = grade_source("relative_bias", source, tmp_path)["bias"]
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
