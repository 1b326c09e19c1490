"""The reference RoPE scalings against the published formulas, worked cases and their laws.

Worked numbers come from research note B, section 4 (checked there with an independent NumPy
implementation); each formula is also rewritten here in float64, one pair at a time.
"""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from minimodel.positional.rope import apply_rope, rope_frequencies
from minimodel.positional.scaling import (
    SCALINGS,
    dynamic_ntk_scaling,
    get_scaling,
    linear_scaling,
    llama3_scaling,
    longrope_scaling,
    ntk_scaling,
    yarn_correction_range,
    yarn_scaling,
)

BILINGUAL = r"(?s)\[es\].*\[en\]"


def plain(r: int, base: float = 10000.0) -> torch.Tensor:
    """theta_i = base^(-2i/r) in float64."""
    return torch.tensor([base ** (-2 * i / r) for i in range(r // 2)], dtype=torch.float64)


def ratio(inv_freq: torch.Tensor, r: int, base: float = 10000.0) -> torch.Tensor:
    return inv_freq.double() / plain(r, base)


# --- the registry -------------------------------------------------------------------------------


def test_registry_has_the_six_methods_under_their_names():
    assert list(SCALINGS) == ["linear", "ntk", "dynamic_ntk", "yarn", "llama3", "longrope"]
    assert get_scaling("yarn") is yarn_scaling
    with pytest.raises(ValueError, match=BILINGUAL):
        get_scaling("ntk_by_parts")


@pytest.mark.parametrize("name", list(SCALINGS))
def test_every_method_takes_the_models_call_and_returns_float32_pairs(name):
    # The call the Mini-GPT makes (minimodel.hooks.Rope.rope_frequencies).
    inv_freq, factor = SCALINGS[name](32, 10000.0, factor=4.0, original_max_len=128, seq_len=512)
    assert inv_freq.shape == (16,) and inv_freq.dtype == torch.float32
    assert isinstance(factor, float) and factor >= 1.0
    assert torch.all(inv_freq > 0)


@pytest.mark.parametrize("name", list(SCALINGS))
def test_factor_one_is_plain_rope(name):
    inv_freq, factor = SCALINGS[name](64, 500.0, factor=1.0, original_max_len=100, seq_len=100)
    torch.testing.assert_close(inv_freq, rope_frequencies(64, 500.0))
    assert factor == 1.0


@pytest.mark.parametrize("name", list(SCALINGS))
def test_no_pair_turns_faster_and_none_slower_than_interpolation(name):
    # dynamic_ntk with factor 1 at seq_len = 8 L0 divides its slowest pair by exactly 8 too.
    factor = 1.0 if name == "dynamic_ntk" else 8.0
    inv_freq, _ = SCALINGS[name](128, 10000.0, factor=factor, original_max_len=256, seq_len=2048)
    r = ratio(inv_freq, 128)
    assert torch.all(r <= 1 + 1e-6) and torch.all(r >= 1 / 8 - 1e-6)


# --- linear (position interpolation) -------------------------------------------------------------


def test_linear_divides_every_frequency():
    inv_freq, factor = linear_scaling(64, factor=4.0)
    torch.testing.assert_close(inv_freq.double(), plain(64) / 4, rtol=1e-6, atol=0)
    assert factor == 1.0


@pytest.mark.parametrize("convention", ["interleaved", "half"])
@pytest.mark.parametrize("s", [2, 4, 8])
def test_linear_scaling_equals_rope_at_positions_p_over_s(s, convention):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 40, 32)
    short = torch.arange(40)  # p / s
    scaled, _ = linear_scaling(32, factor=float(s))
    got = apply_rope(x, s * short, scaled, convention=convention)
    want = apply_rope(x, short, rope_frequencies(32), convention=convention)
    torch.testing.assert_close(got, want, atol=2e-5, rtol=1e-5)


# --- NTK-aware ----------------------------------------------------------------------------------


def test_ntk_is_rope_with_base_times_s_to_the_r_over_r_minus_2():
    r, s = 128, 4.0
    inv_freq, _ = ntk_scaling(r, factor=s)
    torch.testing.assert_close(
        inv_freq.double(), plain(r, 1e4 * s ** (r / (r - 2))), rtol=1e-5, atol=0
    )


@settings(max_examples=30, deadline=None)
@given(half=st.integers(2, 64), s=st.floats(1.0, 64.0), base=st.floats(100.0, 1e6))
def test_ntk_keeps_the_fastest_pair_and_divides_the_slowest_by_s(half, s, base):
    r = 2 * half
    q = ratio(ntk_scaling(r, base, factor=s)[0], r, base)
    assert math.isclose(q[0], 1.0, rel_tol=1e-6)
    assert math.isclose(q[-1], 1 / s, rel_tol=1e-4)
    # pair i is divided by s^(2i/(r-2)): a geometric ramp between the two ends
    i = torch.arange(half, dtype=torch.float64)
    torch.testing.assert_close(q, s ** (-2 * i / (r - 2)), rtol=1e-4, atol=0)


# --- dynamic NTK --------------------------------------------------------------------------------


def test_dynamic_ntk_base_at_twice_the_length_worked_case():
    # Note B: base 1e4, factor 2, r = 128, L = 2 * max  ->  base' = 30527.74
    r, L0 = 128, 4096
    inv_freq, _ = dynamic_ntk_scaling(r, factor=2.0, original_max_len=L0, seq_len=2 * L0)
    # base' from the slowest pair: theta_{r/2-1} = base'^(-(r-2)/r)
    new_base = inv_freq[-1].double().item() ** (-r / (r - 2))
    assert new_base == pytest.approx(30527.74, rel=2e-6)
    assert 1e4 * (2 * 2 - 1) ** (r / (r - 2)) == pytest.approx(30527.74, abs=0.005)
    torch.testing.assert_close(inv_freq.double(), plain(r, 30527.7367488067), rtol=1e-5, atol=0)


@pytest.mark.parametrize("seq_len", [1, 2, 64, 127, 128, None])
def test_dynamic_ntk_is_plain_rope_up_to_the_original_length(seq_len):
    inv_freq, factor = dynamic_ntk_scaling(32, factor=4.0, original_max_len=128, seq_len=seq_len)
    assert torch.equal(inv_freq, rope_frequencies(32))
    assert factor == 1.0


def test_dynamic_ntk_grows_the_base_with_the_length():
    lengths = [129, 256, 512, 1024]
    last = [
        dynamic_ntk_scaling(32, factor=1.0, original_max_len=128, seq_len=n)[0][-1].item()
        for n in lengths
    ]
    assert last == sorted(last, reverse=True)
    # factor = 1: base' = base * (L / L0)^(r/(r-2)), so the slowest pair is divided by L / L0
    assert last[-1] == pytest.approx(rope_frequencies(32)[-1].item() / 8, rel=1e-5)


def test_dynamic_ntk_model_sees_the_length_of_the_sequence_not_of_the_position():
    # One long sequence uses one enlarged base for all its positions, even the first ones.
    short, _ = dynamic_ntk_scaling(32, factor=2.0, original_max_len=128, seq_len=100)
    long, _ = dynamic_ntk_scaling(32, factor=2.0, original_max_len=128, seq_len=1000)
    assert not torch.equal(short, long)


# --- YaRN ---------------------------------------------------------------------------------------


def test_yarn_ramp_boundaries_worked_case():
    # Note B: r = 128, base 1e4, L0 = 4096: raw range (20.94, 45.03) -> lo = 20, hi = 46.
    lo, hi = yarn_correction_range(128, 10000.0, 4096, 32.0, 1.0, truncate=False)
    assert (round(lo, 2), round(hi, 2)) == (20.94, 45.03)
    assert yarn_correction_range(128, 10000.0, 4096) == (20.0, 46.0)


def test_yarn_correction_range_is_the_pair_turning_beta_times():
    r, base, L0 = 64, 10000.0, 2048
    lo, hi = yarn_correction_range(r, base, L0, 32.0, 1.0, truncate=False)
    for index, turns in ((lo, 32.0), (hi, 1.0)):
        wavelength = 2 * math.pi * base ** (2 * index / r)
        assert L0 / wavelength == pytest.approx(turns, rel=1e-9)


def test_yarn_frequencies_and_attention_factor_worked_case():
    # Note B: s = 4 -> af = 1.138629; inv/inv_orig = 1 for i <= 20, 0.971154 at 21, 0.25 for i >= 46
    inv_freq, factor = yarn_scaling(128, 10000.0, factor=4.0, original_max_len=4096)
    assert factor == pytest.approx(1.138629, abs=5e-7)
    assert factor == pytest.approx(0.1 * math.log(4) + 1, rel=1e-12)
    q = ratio(inv_freq, 128)
    torch.testing.assert_close(q[:21], torch.ones(21, dtype=torch.float64), rtol=1e-6, atol=0)
    assert q[21].item() == pytest.approx(0.971154, abs=1e-6)
    torch.testing.assert_close(
        q[46:], torch.full((18,), 0.25, dtype=torch.float64), rtol=1e-6, atol=0
    )
    # in between: linear in i
    i = torch.arange(64, dtype=torch.float64)
    ramp = ((i - 20) / 26).clamp(0, 1)
    torch.testing.assert_close(q, 1 - ramp + ramp / 4, rtol=1e-6, atol=0)


def test_yarn_truncate_false_uses_the_raw_range():
    lo, hi = yarn_correction_range(128, 10000.0, 4096, truncate=False)
    q = ratio(yarn_scaling(128, factor=4.0, original_max_len=4096, truncate=False)[0], 128)
    i = torch.arange(64, dtype=torch.float64)
    ramp = ((i - lo) / (hi - lo)).clamp(0, 1)
    torch.testing.assert_close(q, 1 - 0.75 * ramp, rtol=1e-6, atol=0)


def test_yarn_small_model_clamps_the_ramp_to_pair_zero():
    # The lab's model: head 32, L0 = 128. No pair turns 32 times over 128 positions.
    assert 32 * math.log(128 / (2 * math.pi * 32)) / (2 * math.log(10000.0)) < 0
    assert yarn_correction_range(32, 10000.0, 128, truncate=False)[0] == 0.0
    assert yarn_correction_range(32, 10000.0, 128) == (0.0, 6.0)


def test_yarn_attention_factor_options():
    assert yarn_scaling(32, factor=1.0, original_max_len=128)[1] == 1.0
    assert yarn_scaling(32, factor=16.0, original_max_len=128)[1] == pytest.approx(1.277259, 1e-6)
    given = yarn_scaling(32, factor=4.0, original_max_len=128, attention_factor=1.5)[1]
    assert given == 1.5


def test_yarn_ends_that_meet_are_separated():
    # beta_fast and beta_slow in the same pair after truncation: hi is nudged, no division by 0.
    lo, hi = yarn_correction_range(8, 10000.0, 100000, 1.2, 1.0)
    assert hi > lo
    assert torch.isfinite(
        yarn_scaling(8, factor=2.0, original_max_len=100000, beta_fast=1.2, beta_slow=1.0)[0]
    ).all()


def test_attention_factor_multiplies_cos_and_sin_so_logits_scale_by_its_square():
    torch.manual_seed(1)
    q, k = torch.randn(1, 2, 16, 32), torch.randn(1, 2, 16, 32)
    pos = torch.arange(16)
    inv_freq, af = yarn_scaling(32, factor=4.0, original_max_len=8)
    plain_logits = apply_rope(q, pos, inv_freq) @ apply_rope(k, pos, inv_freq).transpose(-1, -2)
    rq = apply_rope(q, pos, inv_freq, attention_factor=af)
    rk = apply_rope(k, pos, inv_freq, attention_factor=af)
    torch.testing.assert_close(rq, af * apply_rope(q, pos, inv_freq))  # both cos and sin
    logits = rq @ rk.transpose(-1, -2)
    torch.testing.assert_close(logits, af**2 * plain_logits, rtol=1e-5, atol=1e-5)
    assert af**2 == pytest.approx(1.296477, abs=1e-6)


# --- Llama 3 ------------------------------------------------------------------------------------


def test_llama3_bands_worked_case():
    # Note B: r = 128, theta = 5e5, Llama 3.1 defaults: 29 pairs kept, 6 smoothed, 29 divided.
    inv_freq, factor = llama3_scaling(128, 500000.0, factor=8.0, original_max_len=8192)
    q = ratio(inv_freq, 128, 500000.0)
    kept = torch.isclose(q, torch.tensor(1.0, dtype=torch.float64), rtol=1e-6)
    divided = torch.isclose(q, torch.tensor(1 / 8, dtype=torch.float64), rtol=1e-6)
    assert (int(kept.sum()), int((~kept & ~divided).sum()), int(divided.sum())) == (29, 6, 29)
    assert kept[:29].all() and divided[35:].all()
    assert factor == 1.0


def test_llama3_blend_matches_the_formula_pair_by_pair():
    r, base, s, L0 = 128, 500000.0, 8.0, 8192
    q = ratio(llama3_scaling(r, base, factor=s, original_max_len=L0)[0], r, base)
    for i in range(29, 35):
        wavelength = 2 * math.pi * base ** (2 * i / r)
        w = (L0 / wavelength - 1) / (4 - 1)
        assert q[i].item() == pytest.approx((1 - w) / s + w, rel=1e-5)


def test_llama3_is_continuous_at_both_wavelength_boundaries():
    # Sweep the base so that pair 1's wavelength crosses 32 (= 128/4) and 128 (= 128/1) finely:
    # its ratio moves from 1 to 1/s with no jump.
    r, s, L0 = 4, 4.0, 128
    bases = torch.logspace(math.log10(20.0), math.log10(500.0), 4000, dtype=torch.float64)
    ratios, wavelengths = [], []
    for base in bases.tolist():
        inv_freq, _ = llama3_scaling(r, base, factor=s, original_max_len=L0)
        ratios.append(inv_freq[1].item() / (base ** (-2 / r)))
        wavelengths.append(2 * math.pi * base ** (2 / r))
    ratios = torch.tensor(ratios)
    assert min(wavelengths) < L0 / 4 and max(wavelengths) > L0
    assert ratios[0].item() == pytest.approx(1.0) and ratios[-1].item() == pytest.approx(1 / s)
    assert ratios.diff().abs().max() < 2e-3  # a jump would be 1 - 1/s = 0.75


# --- LongRoPE -----------------------------------------------------------------------------------

SHORT = [1.0, 1.0, 1.05, 1.1, 1.2, 1.3, 1.4, 1.5]
LONG = [1.0, 1.1, 1.3, 1.8, 3.0, 5.0, 8.0, 10.0]


def longrope_formula(r: int, base: float, factors) -> torch.Tensor:
    """1 / (lambda_i * base^(2i/r)) in float64, one pair at a time."""
    return torch.tensor([1 / (lam * base ** (2 * i / r)) for i, lam in enumerate(factors)],
                        dtype=torch.float64)


@pytest.mark.parametrize(("seq_len", "factors"), [(None, SHORT), (1, SHORT), (63, SHORT),
                                                   (64, SHORT), (65, LONG), (512, LONG),
                                                   (100000, LONG)])
def test_longrope_divides_each_pair_by_the_factors_of_its_length(seq_len, factors):
    inv_freq, _ = longrope_scaling(16, 10000.0, factor=8.0, original_max_len=64, seq_len=seq_len,
                                   short_factor=SHORT, long_factor=LONG)
    assert inv_freq.dtype == torch.float32 and inv_freq.shape == (8,)
    torch.testing.assert_close(inv_freq.double(), longrope_formula(16, 1e4, factors),
                               rtol=1e-6, atol=0)


@settings(max_examples=40, deadline=None)
@given(half=st.integers(1, 64), L0=st.integers(2, 10000), extra=st.integers(-9999, 9999),
       s=st.floats(1.0, 64.0), base=st.floats(10.0, 1e6), data=st.data())
def test_longrope_switches_exactly_past_the_original_length(half, L0, extra, s, base, data):
    r, seq_len = 2 * half, max(1, L0 + extra)
    rising = st.lists(st.floats(0.5, 100.0), min_size=half, max_size=half)
    short, long = data.draw(rising), data.draw(rising)
    inv_freq, factor = longrope_scaling(r, base, factor=s, original_max_len=L0, seq_len=seq_len,
                                        short_factor=short, long_factor=long)
    want = longrope_formula(r, base, long if seq_len > L0 else short)
    torch.testing.assert_close(inv_freq.double(), want, rtol=2e-6, atol=0)
    # the attention factor depends on s and L0 only, not on which set is used
    assert factor == pytest.approx(math.sqrt(1 + math.log(s) / math.log(L0)), rel=1e-12)


def test_longrope_attention_factor_worked_case():
    # A Phi-3-mini-128k-shaped model: L0 = 4096, s = 32, so ln s / ln L0 = 5 ln 2 / (12 ln 2).
    _, factor = longrope_scaling(96, factor=32.0, original_max_len=4096)
    assert factor == pytest.approx(math.sqrt(17 / 12), rel=1e-12)
    assert round(factor, 6) == 1.190238
    # YaRN's for the same s is larger: 0.1 ln 32 + 1
    assert yarn_scaling(96, factor=32.0, original_max_len=4096)[1] == pytest.approx(1.346574, 1e-6)
    assert longrope_scaling(96, factor=1.0, original_max_len=4096)[1] == 1.0
    given = longrope_scaling(96, factor=32.0, original_max_len=4096, attention_factor=1.1)[1]
    assert given == 1.1


def test_longrope_with_every_factor_s_is_position_interpolation():
    s = 4.0
    got, _ = longrope_scaling(32, factor=s, original_max_len=128, seq_len=512,
                              long_factor=[s] * 16)
    torch.testing.assert_close(got, linear_scaling(32, factor=s)[0], rtol=1e-6, atol=0)


def test_longrope_without_factors_is_plain_rope_then_yarn():
    args = dict(factor=4.0, original_max_len=128)
    short, _ = longrope_scaling(32, seq_len=128, **args)
    assert torch.equal(short, rope_frequencies(32))
    long, _ = longrope_scaling(32, seq_len=129, **args)
    assert torch.equal(long, yarn_scaling(32, **args)[0])
    # YaRN's frequencies are LongRoPE's with the factors theta_i / theta'_i: one point of its
    # search space, the one the search can start from
    yarn_factors = (plain(32) / yarn_scaling(32, **args)[0].double()).tolist()
    from_factors, _ = longrope_scaling(32, seq_len=129, long_factor=yarn_factors, **args)
    torch.testing.assert_close(from_factors, long, rtol=1e-6, atol=0)


def test_longrope_factor_above_one_slows_its_pair_so_s_l0_stays_within_training_angles():
    # positions below s L0 turn pair i by less than s L0 theta_i / lambda_i: with lambda_i = s,
    # less than L0 theta_i, the range plain RoPE covered in training
    r, L0, s = 16, 64, 8.0
    inv_freq, _ = longrope_scaling(r, factor=s, original_max_len=L0, seq_len=int(s * L0),
                                   long_factor=[s] * (r // 2))
    torch.testing.assert_close(s * L0 * inv_freq.double(), L0 * plain(r), rtol=1e-6, atol=0)
    slower, _ = longrope_scaling(r, factor=s, original_max_len=L0, seq_len=int(s * L0),
                                 long_factor=LONG)
    assert torch.all(slower <= rope_frequencies(r)) and slower[-1] < slower[0]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"short_factor": [1.0] * 7},
        {"long_factor": [1.0] * 9},
        {"long_factor": [1.0] * 7 + [0.0]},
        {"short_factor": [1.0] * 7 + [-2.0]},
        {"long_factor": [1.0] * 7 + [float("nan")]},
        {"long_factor": "11111111"},
        {"short_factor": [[1.0] * 8]},
        {"original_max_len": 1},
        {"seq_len": 0},
        {"attention_factor": 0.0},
    ],
)
def test_longrope_bad_arguments_give_bilingual_errors(kwargs):
    args = {"factor": 4.0, "original_max_len": 64, **kwargs}
    with pytest.raises((ValueError, TypeError), match=BILINGUAL):
        longrope_scaling(16, **args)


def test_longrope_factors_may_be_lists_tuples_or_tensors():
    want, _ = longrope_scaling(16, factor=8.0, original_max_len=64, long_factor=LONG, seq_len=99)
    for kind in (tuple, torch.tensor):
        got, _ = longrope_scaling(16, factor=8.0, original_max_len=64, long_factor=kind(LONG),
                                  seq_len=99)
        assert torch.equal(got, want)


# --- bad arguments ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(SCALINGS))
@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"rotary_dim": 7}, ValueError),
        ({"rotary_dim": 32.0}, TypeError),
        ({"base": 1.0}, ValueError),
        ({"factor": 0.5}, ValueError),
        ({"factor": "4"}, ValueError),
        ({"factor": True}, ValueError),
    ],
)
def test_bad_common_arguments_give_bilingual_errors(name, kwargs, error):
    args = {
        "rotary_dim": 32,
        "base": 10000.0,
        "factor": 2.0,
        "original_max_len": 128,
        "seq_len": 256,
        **kwargs,
    }
    rotary_dim, base = args.pop("rotary_dim"), args.pop("base")
    with pytest.raises(error, match=BILINGUAL):
        SCALINGS[name](rotary_dim, base, **args)


@pytest.mark.parametrize("name", ["dynamic_ntk", "yarn", "llama3", "longrope"])
def test_methods_that_need_the_training_length_say_so(name):
    with pytest.raises(ValueError, match=r"(?s)\[es\].*original_max_len.*\[en\].*original_max_len"):
        SCALINGS[name](32, 10000.0, factor=2.0)
    with pytest.raises(ValueError, match=BILINGUAL):
        SCALINGS[name](32, 10000.0, factor=2.0, original_max_len=0)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: ntk_scaling(2, factor=2.0), ValueError),
        (lambda: dynamic_ntk_scaling(32, factor=2.0, original_max_len=128, seq_len=0), ValueError),
        (lambda: dynamic_ntk_scaling(32, factor=2.0, original_max_len=128, seq_len=9.5), TypeError),
        (lambda: yarn_scaling(32, factor=2.0, original_max_len=128, beta_fast=1.0), ValueError),
        (lambda: yarn_scaling(32, factor=2.0, original_max_len=128, beta_slow=0.0), ValueError),
        (
            lambda: yarn_scaling(32, factor=2.0, original_max_len=128, attention_factor=0.0),
            ValueError,
        ),
        (
            lambda: llama3_scaling(32, factor=2.0, original_max_len=128, high_freq_factor=1.0),
            ValueError,
        ),
        (
            lambda: llama3_scaling(32, factor=2.0, original_max_len=128, low_freq_factor=-1.0),
            ValueError,
        ),
    ],
)
def test_method_specific_bad_arguments_give_bilingual_errors(call, error):
    with pytest.raises(error, match=BILINGUAL):
        call()
