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


OWN = {"apply_rotary": {"rotary"}, "rope_frequencies": {"frequencies"},
       "rope_cos_sin": {"cos_sin"}, "RotaryEmbedding.forward": {"module", "device"}}
TARGETS = {"exponent": "rope_frequencies", "positive-exponent": "rope_frequencies",
           "base-ignored": "rope_frequencies", "sign": "rope_cos_sin",
           "bf16-angles": "rope_cos_sin", "factor-ignored": "rope_cos_sin",
           "direction": "apply_rotary", "convention-swapped": "apply_rotary",
           "tail": "apply_rotary", "offset-ignored": "RotaryEmbedding.forward"}


@pytest.mark.parametrize("mistake", sorted(NAMED_IN))
def test_a_rope_mistake_costs_only_in_its_functions_items(mistake, rope_graded):
    """One mistake costs once: the items built on the function that holds it (apply_rope,
    RotaryEmbedding, the device, the Llama) keep their points, and each one that it changes says,
    in both languages, which function of the student's it is built on."""
    target = TARGETS[mistake]
    assert codes(rope_graded[mistake][NAMED_IN[mistake]]) >= {mistake}
    for item, verdict in rope_graded[mistake].items():
        if item in OWN[target]:
            continue
        assert verdict.score == verdict.points, (item, [f.en for f in verdict.findings])
        notes = [f for f in verdict.findings if f.code == "built-on-mistake"]
        assert all(not f.scoring and f.en.startswith(f"Built on your {target}, which has the "
                                                     "mistake named above") for f in notes)


@pytest.mark.parametrize("item", ["apply_rope", "module", "device", "llama"])
def test_rope_swapped_conventions_are_carried_forward(item, rope_graded):
    verdict = rope_graded["convention-swapped"][item]
    assert verdict.score == verdict.points
    assert "built-on-mistake" in codes(verdict) and "convention-swapped" not in codes(verdict)
    note = next(f for f in verdict.findings if f.code == "built-on-mistake")
    assert "apply_rotary" in note.en and "apply_rotary" in note.es


def test_rope_inside_hugging_face_llama(rope_graded):
    """The module in a Hugging Face Llama: the right convention gives its logits (both cases),
    the catalogue's wrong convention is carried forward from apply_rotary; converted heads with
    rope_permutation the identity (no classic mistake of the catalogue) cost there, and the
    feedback says the item cannot be judged apart from the functions it composes."""
    assert rope_graded[""]["llama"].score == rope_graded[""]["llama"].points == 2
    assert rope_graded["convention-swapped"]["llama"].score == 2
    identity = rope_graded["identity-permutation"]["llama"]
    assert 0 < identity.score < 2 and "composed" in codes(identity)


def test_rope_dropped_tail_and_dtype(rope_graded):
    assert "tail" in codes(rope_graded["tail-dropped"]["rotary"])
    assert "dtype-not-kept" in codes(rope_graded["dtype-not-kept"]["rotary"])


def test_two_mistakes_at_once_are_each_named_in_their_function(tmp_path):
    """rope_frequencies ignores base and RotaryEmbedding ignores the offset: each item names the
    mistake of its own function, after the function's name, as the self-check does."""
    verdicts = grade_source("rope", mutated("rope", ROPE["base-ignored"], ROPE["offset-ignored"]),
                            tmp_path)
    frequencies = next(f for f in verdicts["frequencies"].findings if f.code == "base-ignored")
    assert frequencies.en.startswith("rope_frequencies: ")
    module = next(f for f in verdicts["module"].findings if f.code == "offset-ignored")
    assert module.en.startswith("RotaryEmbedding.forward: ")
    assert module.es.startswith("RotaryEmbedding.forward: ")
