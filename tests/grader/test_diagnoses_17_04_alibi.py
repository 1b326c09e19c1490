"""Judges of lab 17.04 (ALiBi): each mistake is named.

The mistakes are written into copies of the reference source and run through the probes
(``source_runs``)."""

from __future__ import annotations

import pytest
from mistaken_sources import MISTAKEN
from source_runs import grade_source, mutated

ALIBI = MISTAKEN["alibi"]  # ALiBi's classic mistakes, written into the reference


@pytest.fixture(scope="module")
def alibi_graded(tmp_path_factory):
    """mistake -> the verdicts of the reference with that mistake written in ("": none)."""
    folder = tmp_path_factory.mktemp("alibi")
    edits = {**ALIBI, "finite-mask": ('masked_fill(distance < 0, float("-inf"))',
                                      "masked_fill(distance < 0, -1e9)")}
    graded = {name: grade_source("alibi", mutated("alibi", edit), folder)
              for name, edit in edits.items()}
    return {**graded, "": grade_source("alibi", mutated("alibi"), folder)}


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
