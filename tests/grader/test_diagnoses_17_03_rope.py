"""Judges of lab 17.03 (RoPE): each mistake is named.

The mistakes are written into copies of the reference source and run through the probes
(``source_runs``)."""

from __future__ import annotations

import pytest
from mistaken_sources import MISTAKEN
from source_runs import codes, grade_source, mutated

ROPE = MISTAKEN["rope"]  # RoPE's classic mistakes, written into the reference


ROPE_OTHERS = {  # mistakes the judges name without the catalogue (or only score)
    "tail-dropped": ("rotated = torch.cat((rotated, x[..., r:]), dim=-1)", "rotated = rotated"),
    "dtype-not-kept": (
        "return apply_rotary(x.float(), cos, sin, convention=convention).to(x.dtype)",
        "return apply_rotary(x.float(), cos, sin, convention=convention)"),
    "identity-permutation": (
        "return torch.cat([torch.arange(0, r, 2), torch.arange(1, r, 2), torch.arange(r, D)])",
        "return torch.arange(D)"),
}


NAMED_IN = {"exponent": "frequencies", "positive-exponent": "frequencies",
            "base-ignored": "frequencies", "sign": "cos_sin",
            "bf16-angles": "cos_sin", "factor-ignored": "cos_sin", "direction": "rotary",
            "convention-swapped": "rotary", "tail": "rotary", "offset-ignored": "module"}


@pytest.fixture(scope="module")
def rope_graded(tmp_path_factory):
    """mistake -> the verdicts of the reference with that mistake written in ("": none)."""
    folder = tmp_path_factory.mktemp("rope")
    graded = {name: grade_source("rope", mutated("rope", edit), folder)
              for name, edit in {**ROPE, **ROPE_OTHERS}.items()}
    return {**graded, "": grade_source("rope", mutated("rope"), folder)}


def test_rope_reference_scores_full_marks(rope_graded):
    assert all(v.score == v.points and not v.findings for v in rope_graded[""].values())


def test_every_rope_mistake_is_looked_for():
    assert sorted(NAMED_IN) == sorted(ROPE)


@pytest.mark.parametrize("mistake", sorted(NAMED_IN))
def test_rope_mistakes_are_named(mistake, rope_graded):
    verdict = rope_graded[mistake][NAMED_IN[mistake]]
    assert mistake in codes(verdict) and verdict.score < verdict.points


@pytest.mark.parametrize("mistake", ["tail", "offset-ignored", "base-ignored"])
def test_rope_mistakes_of_some_cases_cost_only_those(mistake, rope_graded):
    verdict = rope_graded[mistake][NAMED_IN[mistake]]
    assert 0 < verdict.score < verdict.points


@pytest.mark.parametrize("item", ["apply_rope", "module", "llama"])
def test_rope_swapped_conventions_are_named_where_inherited(item, rope_graded):
    verdict = rope_graded["convention-swapped"][item]
    assert "convention-swapped" in codes(verdict) and verdict.score < verdict.points


def test_rope_inside_hugging_face_llama(rope_graded):
    """The module in a Hugging Face Llama: the right convention gives its logits (both cases);
    the other convention does not, nor the converted heads when rope_permutation is the
    identity."""
    assert rope_graded[""]["llama"].score == rope_graded[""]["llama"].points == 2
    assert rope_graded["convention-swapped"]["llama"].score == 0
    assert 0 < rope_graded["identity-permutation"]["llama"].score < 2


def test_rope_dropped_tail_and_dtype(rope_graded):
    assert "tail" in codes(rope_graded["tail-dropped"]["rotary"])
    assert "dtype-not-kept" in codes(rope_graded["dtype-not-kept"]["rotary"])
