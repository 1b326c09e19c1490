"""Hidden checks of lab 18.02 (RoPE scaling) on real sources: the reference, the stub, the
reference with one typical mistake written in, and a student's rope.py that scaling.py calls.

Each expected score follows from how many hidden cases the mistake changes (the case lists are
in ``solutions/labs/18_02_rope_scaling/checks.py``): e.g. multiplying by ``s`` leaves only the
``factor=1`` case of four right, so linear keeps 1/4 of its point.
"""

from __future__ import annotations

import pytest
from source_runs import (
    assert_not_implemented,
    codes,
    grade_sources,
    mutated,
    points,
    reference,
    scoring,
    stub,
)

from grader.hidden import registry

ROPE = reference("rope")
ITEM_POINTS = {"linear": 1, "ntk": 1, "dynamic_ntk": 2, "yarn_range": 1, "yarn": 2,
               "yarn_factor": 1, "llama3": 1, "hf_config": 1, "longrope": 1,
               "longrope_factor": 1}
FACTOR = "attention_factor = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0"
NTK_BASE = "new_base = base * factor ** (rotary_dim / (rotary_dim - 2))"
DYNAMIC_SCALE = "scale = factor * seq_len / original_max_len - (factor - 1)"
ROUND = "lo, hi = math.floor(lo), math.ceil(hi)"
RANGE_CALL = "rotary_dim, base, original_max_len, beta_fast, beta_slow, truncate=truncate"
BLEND = "inv_freq = inv_freq * (1 - ramp) + (inv_freq / factor) * ramp"
SWITCH = "if seq_len is not None and seq_len > original_max_len:  # past L0: the long set"
LONG = "inv_freq = theta / torch.as_tensor(long_factor, dtype=torch.float32)"
SHORT = "inv_freq = theta / torch.as_tensor(short_factor, dtype=torch.float32)"
LONGROPE_FACTOR = "math.sqrt(1 + math.log(factor) / math.log(original_max_len)) if factor > 1"

MISTAKES = [
    # (name, replacements in scaling.py, {item: score left}, diagnosis)
    ("linear-multiplied", [("rope_frequencies(rotary_dim, base) / factor, 1.0",
                            "rope_frequencies(rotary_dim, base) * factor, 1.0")],
     {"linear": 0.25}, "multiplied"),  # factor=1 unchanged
    ("linear-float64", [("rope_frequencies(rotary_dim, base) / factor, 1.0",
                         "rope_frequencies(rotary_dim, base).double() / factor, 1.0")],
     {"linear": 0.0}, "float64-output"),
    ("ntk-no-exponent", [(NTK_BASE, "new_base = base * factor")], {"ntk": 0.25}, "no-exponent"),
    ("ntk-inverted", [(NTK_BASE, "new_base = base * factor ** ((rotary_dim - 2) / rotary_dim)")],
     {"ntk": 0.25}, "inverted-exponent"),
    ("ntk-divided", [(NTK_BASE + "\n    return rope_frequencies(rotary_dim, new_base), 1.0",
                      "return rope_frequencies(rotary_dim, base) / factor, 1.0")],
     {"ntk": 0.25}, "divided"),
    ("dynamic-ratio-only", [(DYNAMIC_SCALE, "scale = seq_len / original_max_len")],
     {"dynamic_ntk": 1.33}, "ratio-only"),  # two of the three cases past L0 have s > 1
    ("dynamic-static", [("if seq_len is None or seq_len <= original_max_len:", "if factor == 1:"),
                        (DYNAMIC_SCALE, "scale = factor")], {"dynamic_ntk": 0.0}, "static"),
    ("dynamic-below", [("if seq_len is None or seq_len <= original_max_len:",
                        "if seq_len is None:")], {"dynamic_ntk": 1.67}, "below-original"),
    ("dynamic-no-exponent", [("new_base = base * scale ** (rotary_dim / (rotary_dim - 2))",
                              "new_base = base * scale")], {"dynamic_ntk": 1.0},
     "dynamic-no-exponent"),
    # yarn_scaling is right on top of its own wrong range: only the range item pays
    ("range-not-rounded", [(ROUND, "lo, hi = lo, hi")], {"yarn_range": 0.29}, "not-rounded"),
    ("range-rounded-in", [(ROUND, "lo, hi = math.ceil(lo), math.floor(hi)")],
     {"yarn_range": 0.29}, "rounded-in"),
    ("range-always-rounded", [("    if truncate:\n", "    if True:\n")],
     {"yarn_range": 0.71}, "always-rounded"),
    ("range-swapped", [("lo, hi = pair_turning(beta_fast), pair_turning(beta_slow)",
                        "lo, hi = pair_turning(beta_slow), pair_turning(beta_fast)")],
     {"yarn_range": 0.0}, "swapped"),
    ("range-not-clamped", [("lo, hi = max(float(lo), 0.0), min(float(hi), float(rotary_dim - 1))",
                            "lo, hi = float(lo), float(hi)")], {"yarn_range": 0.57},
     "not-clamped"),
    ("range-no-two-pi", [("math.log(wavelength / (2 * math.pi))", "math.log(wavelength)")],
     {"yarn_range": 0.0}, "no-two-pi"),
    ("yarn-ramp-reversed", [(BLEND, "inv_freq = inv_freq * ramp + (inv_freq / factor) * "
                                    "(1 - ramp)")], {"yarn": 0.25}, "ramp-reversed"),
    ("yarn-all-divided", [(BLEND, "inv_freq = inv_freq / factor")], {"yarn": 0.25},
     "all-divided"),
    ("yarn-extended-length", [(RANGE_CALL, "rotary_dim, base, int(original_max_len * factor), "
                                           "beta_fast, beta_slow, truncate=truncate")],
     {"yarn": 0.5}, "extended-length"),
    ("yarn-truncate-ignored", [(RANGE_CALL, "rotary_dim, base, original_max_len, beta_fast, "
                                            "beta_slow")], {"yarn": 1.75}, "truncate-ignored"),
    ("factor-squared", [(FACTOR, "attention_factor = (0.1 * math.log(factor) + 1.0) ** 2 "
                                 "if factor > 1 else 1.0")], {"yarn_factor": 0.25}, "squared"),
    ("factor-sqrt", [(FACTOR, "attention_factor = math.sqrt(0.1 * math.log(factor) + 1.0) "
                              "if factor > 1 else 1.0")], {"yarn_factor": 0.25}, "sqrt"),
    ("factor-log10", [(FACTOR, "attention_factor = 0.1 * math.log10(factor) + 1.0 "
                               "if factor > 1 else 1.0")], {"yarn_factor": 0.25}, "log10"),
    ("factor-given-ignored", [("if attention_factor is None:\n        attention_factor = 0.1",
                               "if True:\n        attention_factor = 0.1")],
     {"yarn_factor": 0.88}, "given-ignored"),
    ("factor-tensor", [("1.0 if factor > 1 else 1.0\n    return inv_freq, float(attention_factor)",
                        "1.0 if factor > 1 else 1.0\n"
                        "    return inv_freq, torch.tensor(attention_factor)")],
     {"yarn_factor": 0.0}, "factor-type"),
    ("llama3-bands-swapped", [
        ("scaled = torch.where(wavelength > long, inv_freq / factor, blended)",
         "scaled = torch.where(wavelength > long, inv_freq, blended)"),
        ("return torch.where(wavelength < short, inv_freq, scaled), 1.0",
         "return torch.where(wavelength < short, inv_freq / factor, scaled), 1.0")],
     {"llama3": 0.2}, "bands-swapped"),
    ("llama3-weights-swapped", [("blended = (1 - w) * inv_freq / factor + w * inv_freq",
                                 "blended = w * inv_freq / factor + (1 - w) * inv_freq")],
     {"llama3": 0.2}, "weights-swapped"),
    # LongRoPE: of its ten cases, three have s·L0 > seq_len > L0 with other long factors, one
    # is at L0 exactly, seven divide by given factors other than 1, eight need the attention
    # factor
    ("longrope-switch-extended", [(SWITCH, "if seq_len is not None and seq_len > factor * "
                                           "original_max_len:")], {"longrope": 0.7},
     "switch-extended"),
    ("longrope-switch-at-original", [(SWITCH, "if seq_len is not None and seq_len >= "
                                              "original_max_len:")], {"longrope": 0.9},
     "switch-at-original"),
    ("longrope-factor-multiplied", [(LONG, LONG.replace("theta /", "theta *")),
                                    (SHORT, SHORT.replace("theta /", "theta *"))],
     {"longrope": 0.3}, "factor-multiplied"),
    ("longrope-attention-forgotten", [(LONGROPE_FACTOR, "1.0 if factor > 1")],
     {"longrope_factor": 0.2}, "attention-factor-forgotten"),
    ("longrope-attention-yarn", [(LONGROPE_FACTOR, "0.1 * math.log(factor) + 1.0 if factor > 1")],
     {"longrope_factor": 0.2}, "attention-factor-yarn"),
]


# What each mistake costs in ``hf_config`` (YaRN and Llama 3 from Hugging Face configs, run through
# the student's own methods): a catalogue mistake of yarn_correction_range, yarn_scaling or
# llama3_scaling costs nothing there (it is exactly what the mistake gives, credited and said where
# the mistake is); a broken return contract, which no catalogue replays, costs where it shows.
HF_CONFIG = {"factor-tensor": 0.5}


def test_item_points():
    assert {i.key: i.points for i in registry()["18.02"].items} == ITEM_POINTS


def test_reference_scores_full_marks(tmp_path):
    verdicts = grade_sources("18.02", {"scaling": reference("scaling"), "rope": ROPE}, tmp_path)
    assert points(verdicts) == 12
    assert all(v.status == "passed" and not v.findings for v in verdicts.values())


def test_stub_scores_zero_and_says_not_implemented(tmp_path):
    for rope in (ROPE, stub("rope")):  # its own stub is named, even when rope.py is a stub too
        assert_not_implemented(grade_sources("18.02", {"scaling": stub("scaling"), "rope": rope},
                                             tmp_path))


@pytest.mark.parametrize("name, replacements, scores, code", MISTAKES,
                         ids=[m[0] for m in MISTAKES])
def test_mistake_is_named_and_costs_its_points(tmp_path, name, replacements, scores, code):
    verdicts = grade_sources("18.02", {"scaling": mutated("scaling", *replacements),
                                       "rope": ROPE}, tmp_path)
    (item,) = scores
    assert code in scoring(verdicts[item])
    finding = next(f for f in verdicts[item].findings if f.code == code)
    assert finding.es and finding.en and finding.es != finding.en
    assert {k: v.score for k, v in verdicts.items()} == {
        **ITEM_POINTS, **scores, "hf_config": HF_CONFIG.get(name, 1)}
    if name.startswith("range-") and name != "range-always-rounded":
        assert "depends-on-range" in codes(verdicts["yarn"])
    if name in ("yarn-ramp-reversed", "yarn-all-divided"):  # LongRoPE without long factors
        assert "depends-on-yarn" in codes(verdicts["longrope"])


def test_stub_rope_py_is_named_as_the_cause(tmp_path):
    verdicts = grade_sources("18.02", {"scaling": reference("scaling"), "rope": stub("rope")},
                             tmp_path)
    assert verdicts["yarn_range"].score == 1  # the only function that does not call rope.py
    for key, verdict in verdicts.items():
        if key == "yarn_range":
            continue
        assert verdict.score == 0 and scoring(verdict) == {"depends-on-rope"}, key
        finding = verdict.findings[0]
        assert "rope_frequencies" in finding.es and "no está implementado" in finding.es
        assert "depends on rope.py" in finding.en and "17.03" in finding.en


def test_wrong_rope_py_costs_nothing_when_scaling_is_right_on_top_of_it(tmp_path):
    exponent = ROPE.replace(
        "exponents = torch.arange(0, rotary_dim, 2, device=device).to(torch.float32) / rotary_dim",
        "exponents = torch.arange(0, rotary_dim // 2, device=device).to(torch.float32) "
        "/ rotary_dim")
    assert exponent != ROPE
    verdicts = grade_sources("18.02", {"scaling": reference("scaling"), "rope": exponent},
                             tmp_path)
    assert points(verdicts) == 12
    assert all(not scoring(v) for v in verdicts.values())
    assert "depends-on-rope" in codes(verdicts["ntk"])
    # a scaling mistake on top of the same rope.py still costs its points
    verdicts = grade_sources("18.02", {"scaling": mutated("scaling", *MISTAKES[0][1]),
                                       "rope": exponent}, tmp_path)
    assert verdicts["linear"].score == 0.25


def test_judges_answer_nonsense_outputs_with_no_points():
    from source_runs import judge_garbage

    assert all(v.score < v.points for v in judge_garbage("18.02"))
