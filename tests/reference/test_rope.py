"""The reference RoPE against independent formulations, its laws, bfloat16 and bad input."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from minimodel.positional.rope import (
    RotaryEmbedding,
    apply_rope,
    apply_rotary,
    rope_cos_sin,
    rope_frequencies,
    rope_permutation,
)

CONVENTIONS = ("interleaved", "half")
BILINGUAL = r"(?s)\[es\].*\[en\]"
ULP = dict(atol=1e-6, rtol=1e-6)  # float32: a rounding or two


def frequencies64(r: int, base: float = 10000.0) -> np.ndarray:
    """theta_i = base^(-2i/r) in float64."""
    return base ** (-np.arange(0, r, 2, dtype=np.float64) / r)


def rotation_matrices(x: np.ndarray, pos: np.ndarray, r: int, convention: str) -> np.ndarray:
    """RoPE with an explicit 2x2 rotation matrix per pair, float64, no vectorised trick.

    x: (..., T, D); pos: (T,). Pair i is (2i, 2i+1) or (i, i + r/2).
    """
    out = x.astype(np.float64).copy()
    theta = frequencies64(r)
    for t, p in enumerate(pos):
        for i, w in enumerate(theta):
            a, b = (2 * i, 2 * i + 1) if convention == "interleaved" else (i, i + r // 2)
            c, s = math.cos(p * w), math.sin(p * w)
            rot = np.array([[c, -s], [s, c]])
            pair = np.stack([x[..., t, a], x[..., t, b]], axis=-1).astype(np.float64)
            turned = pair @ rot.T
            out[..., t, a], out[..., t, b] = turned[..., 0], turned[..., 1]
    return out


def rotate_half_formula(x: torch.Tensor, pos: torch.Tensor, r: int) -> torch.Tensor:
    """Hugging Face Llama: x*cos + rotate_half(x)*sin with cat(freqs, freqs), float64."""
    theta = torch.from_numpy(frequencies64(r))
    freqs = pos.double()[:, None] * theta
    emb = torch.cat((freqs, freqs), dim=-1)
    head, tail = x[..., :r].double(), x[..., r:].double()
    rotated = torch.cat((-head[..., r // 2 :], head[..., : r // 2]), dim=-1)
    return torch.cat((head * emb.cos() + rotated * emb.sin(), tail), dim=-1)


def complex_formula(x: torch.Tensor, pos: torch.Tensor, r: int) -> torch.Tensor:
    """Meta's LLaMA: polar(1, outer(t, freqs)) times view_as_complex(pairs), complex128."""
    theta = torch.from_numpy(frequencies64(r))
    angles = pos.double()[:, None] * theta
    cis = torch.polar(torch.ones_like(angles), angles)
    head = torch.view_as_complex(x[..., :r].double().reshape(*x.shape[:-1], -1, 2))
    turned = torch.view_as_real(head * cis).flatten(-2)
    return torch.cat((turned, x[..., r:].double()), dim=-1)


def rope(x, pos, convention="interleaved", r=None, **kwargs):
    return apply_rope(x, pos, rope_frequencies(r or x.shape[-1]), convention=convention, **kwargs)


# ------------------------------------------------------------------ numbers from the literature


@pytest.mark.parametrize(
    ("convention", "expected"),
    [
        ("half", [-1.984111, 1.959901, 2.462378, 4.019800]),
        ("interleaved", [-1.142640, 1.922076, 2.959851, 4.029800]),
    ],
)
def test_reference_output_x_1234_at_position_1(convention, expected):
    # Research note B, section 3.
    x = torch.tensor([1.0, 2.0, 3.0, 4.0]).view(1, 1, 1, 4)
    out = rope(x, torch.tensor([1]), convention)
    np.testing.assert_allclose(out.flatten().numpy(), expected, atol=1e-6)


def test_frequencies_match_the_formula_and_hugging_face_bit_for_bit():
    for r in (2, 8, 64, 128):
        got = rope_frequencies(r)
        assert got.dtype == torch.float32 and got.shape == (r // 2,)
        np.testing.assert_allclose(got.numpy(), frequencies64(r), rtol=1e-6)
        hf = 1.0 / (10000.0 ** (torch.arange(0, r, 2, dtype=torch.int64).float() / r))
        assert torch.equal(got, hf)
    assert rope_frequencies(8, 500000.0)[0] == 1.0


def test_cos_sin_are_float32_with_the_positions_shape():
    inv = rope_frequencies(8)
    cos, sin = rope_cos_sin(torch.arange(5), inv)
    assert cos.shape == sin.shape == (5, 4) and cos.dtype == sin.dtype == torch.float32
    cos2, _ = rope_cos_sin(torch.arange(10).view(2, 5), inv.double(), attention_factor=2.0)
    assert cos2.shape == (2, 5, 4) and cos2.dtype == torch.float32
    torch.testing.assert_close(cos2[1], 2 * rope_cos_sin(torch.arange(5, 10), inv)[0])


# ------------------------------------------------------------- independent formulations agree


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize(("D", "r"), [(8, 8), (12, 4), (6, 2)])
def test_matches_explicit_rotation_matrices(convention, D, r):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 7, D, dtype=torch.float64)
    pos = torch.tensor([0, 1, 2, 5, 17, 300, 4097])
    got = rope(x, pos, convention, r=r)
    want = rotation_matrices(x.numpy(), pos.numpy(), r, convention)
    # Angles are float32 even for float64 input: ~p * 6e-8 rad of rounding at position p.
    np.testing.assert_allclose(got.numpy(), want, atol=1e-3)
    np.testing.assert_allclose(got[..., :4, :].numpy(), want[..., :4, :], atol=1e-6)


@pytest.mark.parametrize("r", [16, 8])
def test_half_is_rotate_half_and_interleaved_is_complex_multiplication(r):
    torch.manual_seed(1)
    x = torch.randn(2, 4, 33, 16, dtype=torch.float64)
    pos = torch.arange(100, 133)
    # positions ~100: float32 angles are good to ~1e-5 rad
    tol = dict(atol=5e-5, rtol=0)
    torch.testing.assert_close(rope(x, pos, "half", r=r), rotate_half_formula(x, pos, r), **tol)
    torch.testing.assert_close(rope(x, pos, "interleaved", r=r), complex_formula(x, pos, r), **tol)


def test_float32_matches_float64_formula():
    torch.manual_seed(2)
    x = torch.randn(3, 2, 50, 32)
    pos = torch.arange(50)
    for convention, formula in (("half", rotate_half_formula), ("interleaved", complex_formula)):
        got = rope(x, pos, convention)
        assert got.dtype == torch.float32
        # positions < 50: float32 angles and products are good to a few 1e-6
        torch.testing.assert_close(got.double(), formula(x, pos, 32), atol=1e-5, rtol=0)


# ------------------------------------------------------------------------------------- laws

heads = st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(1, 9), st.integers(1, 8))


@settings(max_examples=40, deadline=None)
@given(shape=heads, start=st.integers(0, 5000), seed=st.integers(0, 2**16))
def test_preserves_the_norm_of_every_pair(shape, start, seed):
    B, H, T, half = shape
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, H, T, 2 * half, generator=g)
    pos = torch.arange(start, start + T)
    for convention in CONVENTIONS:
        out = rope(x, pos, convention)
        torch.testing.assert_close(out.norm(dim=-1), x.norm(dim=-1), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(pair_norms(out, convention), pair_norms(x, convention))


def pair_norms(x: torch.Tensor, convention: str) -> torch.Tensor:
    """Length of every rotated pair: (2i, 2i+1) or (i, i + D/2)."""
    half = x.shape[-1] // 2
    if convention == "interleaved":
        return x.unflatten(-1, (half, 2)).norm(dim=-1)
    return x.unflatten(-1, (2, half)).norm(dim=-2)


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_position_zero_is_the_identity(convention):
    x = torch.randn(2, 3, 4, 10)
    assert torch.equal(rope(x, torch.zeros(4, dtype=torch.long), convention), x)


@settings(max_examples=40, deadline=None)
@given(
    m=st.integers(0, 3000),
    n=st.integers(0, 3000),
    shift=st.integers(-1000, 1000),
    half=st.integers(1, 16),
    seed=st.integers(0, 2**16),
)
def test_dot_product_depends_only_on_the_offset(m, n, shift, half, seed):
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, 1, 1, 1, 2 * half, generator=g, dtype=torch.float64)
    for convention in CONVENTIONS:

        def score(a, b, q=q, k=k, convention=convention):
            rq = rope(q, torch.tensor([a]), convention)
            rk = rope(k, torch.tensor([b]), convention)
            return (rq * rk).sum().item()

        # float32 angles at positions of a few thousand are off by < 5e-4 rad, so each pair's
        # product moves by < 1e-3 |q_i||k_i|, and the sum by < 1e-3 |q||k| (Cauchy-Schwarz).
        slack = 2e-3 * (q.norm() * k.norm()).item()
        assert score(m, n) == pytest.approx(score(m + shift, n + shift), abs=slack)
        # and the score is the one of the offset alone, R_0 q with R_(n-m) k
        if n >= m:
            assert score(m, n) == pytest.approx(score(0, n - m), abs=slack)


def test_relative_pairs_from_the_research_note():
    # (5, 3), (12, 10), (102, 100) all have offset 2 and must score the same.
    torch.manual_seed(3)
    q, k = torch.randn(2, 1, 1, 1, 64)
    for convention in CONVENTIONS:
        scores = [
            (rope(q, torch.tensor([m]), convention) * rope(k, torch.tensor([n]), convention)).sum()
            for m, n in [(5, 3), (12, 10), (102, 100)]
        ]
        torch.testing.assert_close(torch.stack(scores), scores[0].expand(3), atol=1e-5, rtol=0)


@settings(max_examples=30, deadline=None)
@given(T=st.integers(2, 40), cut=st.integers(1, 39), seed=st.integers(0, 2**16))
def test_a_chunk_with_an_offset_equals_the_same_rows_of_the_whole(T, cut, seed):
    cut = min(cut, T - 1)
    x = torch.randn(2, 2, T, 8, generator=torch.Generator().manual_seed(seed))
    for convention in CONVENTIONS:
        whole = rope(x, torch.arange(T), convention)
        tail = rope(x[:, :, cut:], torch.arange(cut, T), convention)
        # Equal up to the last bit or so: vectorised and scalar loops may round differently.
        torch.testing.assert_close(tail, whole[:, :, cut:], **ULP)
        module = RotaryEmbedding(8, max_len=64, convention=convention)
        torch.testing.assert_close(module(x[:, :, cut:], offset=cut), whole[:, :, cut:], **ULP)


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_partial_rotation_leaves_the_tail_untouched(convention):
    x = torch.randn(2, 3, 6, 16)
    out = rope(x, torch.arange(6) + 9, convention, r=4)
    assert torch.equal(out[..., 4:], x[..., 4:])
    assert torch.equal(out[..., :4], rope(x[..., :4], torch.arange(6) + 9, convention))


@pytest.mark.parametrize("rotary_dim", [None, 8, 2])
def test_permutation_maps_interleaved_onto_half(rotary_dim):
    D = 12
    r = rotary_dim or D
    perm = rope_permutation(D, rotary_dim)
    assert perm.dtype == torch.long and sorted(perm.tolist()) == list(range(D))
    x = torch.randn(2, 2, 5, D)
    pos = torch.arange(40, 45)
    inter = rope(x, pos, "interleaved", r=r)
    half = rope(x[..., perm], pos, "half", r=r)
    torch.testing.assert_close(half, inter[..., perm], atol=1e-6, rtol=0)
    back = torch.argsort(perm)
    torch.testing.assert_close(half[..., back], inter, atol=1e-6, rtol=0)


def test_permutation_values():
    assert rope_permutation(8).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert rope_permutation(8, 4).tolist() == [0, 2, 1, 3, 4, 5, 6, 7]


def test_permuting_weights_converts_a_checkpoint():
    # Meta -> Hugging Face: permute the rows of W_q and W_k per head; logits are unchanged.
    torch.manual_seed(4)
    D, C, T = 8, 16, 6
    wq, wk, h = torch.randn(D, C), torch.randn(D, C), torch.randn(1, 1, T, C)
    perm, pos = rope_permutation(D), torch.arange(T)

    def logits(wq, wk, convention):
        q, k = rope(h @ wq.T, pos, convention), rope(h @ wk.T, pos, convention)
        return q @ k.transpose(-1, -2)

    torch.testing.assert_close(
        logits(wq[perm], wk[perm], "half"), logits(wq, wk, "interleaved"), atol=1e-4, rtol=1e-5
    )


def test_batch_positions_rotate_each_sequence_by_its_own_positions():
    x = torch.randn(3, 2, 5, 8)
    pos = torch.tensor([[0, 1, 2, 3, 4], [7, 8, 9, 10, 11], [1, 1, 2, 3, 4]])
    for convention in CONVENTIONS:
        out = rope(x, pos, convention)
        for b in range(3):
            torch.testing.assert_close(out[b : b + 1], rope(x[b : b + 1], pos[b], convention))


def test_attention_factor_scales_the_logits_by_its_square():
    q, k = torch.randn(2, 1, 2, 6, 8)
    pos = torch.arange(6)
    plain = rope(q, pos) @ rope(k, pos).transpose(-1, -2)
    scaled = rope(q, pos, attention_factor=1.5) @ rope(k, pos, attention_factor=1.5).mT
    torch.testing.assert_close(scaled, 2.25 * plain)


# ----------------------------------------------------------------------- bfloat16 and dtypes


def test_bfloat16_angles_fail_at_large_positions_and_float32_angles_do_not():
    torch.manual_seed(5)
    D, T = 64, 64
    pos = torch.arange(4096, 4096 + T)
    x = torch.randn(1, 2, T, D).to(torch.bfloat16)
    truth = rotate_half_formula(x, pos, D)  # float64 angles, on the same bf16 input
    scale = x.double().abs().max()

    # The bug: angles computed in bfloat16 (what a model cast with .to(bfloat16) does).
    inv_bf16 = rope_frequencies(D).to(torch.bfloat16)
    angles = pos.to(torch.bfloat16)[:, None] * inv_bf16
    cos, sin = angles.cos().float(), angles.sin().float()
    wrong = apply_rotary(x, cos, sin, convention="half")
    assert (wrong.double() - truth).abs().max() > 0.5 * scale  # radians off: garbage

    # The reference: float32 angles, output rounded once to bfloat16.
    good = apply_rope(x, pos, rope_frequencies(D), convention="half")
    assert good.dtype == torch.bfloat16
    assert (good.double() - truth).abs().max() < 2e-2 * scale  # a couple of bf16 roundings
    # and without the final rounding it is float32-accurate
    exact = apply_rope(x.float(), pos, rope_frequencies(D), convention="half")
    assert (exact.double() - truth).abs().max() < 2e-3 * scale


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("convention", CONVENTIONS)
def test_output_dtype_is_the_input_dtype(dtype, convention):
    x = torch.randn(1, 2, 5, 8).to(dtype)
    out = rope(x, torch.arange(5), convention)
    assert out.dtype == dtype and out.shape == x.shape
    tol = {torch.float16: 2e-3, torch.bfloat16: 2e-2}.get(dtype, 1e-6)
    want = rotate_half_formula(x, torch.arange(5), 8)
    if convention == "interleaved":
        want = complex_formula(x, torch.arange(5), 8)
    torch.testing.assert_close(out.double(), want, atol=tol * 4, rtol=tol)


def test_module_tables_stay_float32_when_the_model_is_cast():
    module = RotaryEmbedding(16, max_len=5000).to(torch.bfloat16)
    assert module.cos.dtype == module.sin.dtype == module.inv_freq.dtype == torch.float32
    assert torch.equal(module.inv_freq, rope_frequencies(16))
    x = torch.randn(1, 1, 4, 16, dtype=torch.bfloat16)
    torch.testing.assert_close(module(x, offset=4090), rope(x, torch.arange(4090, 4094)))
    assert module.half().cos.dtype == torch.float32


# --------------------------------------------------------------- module, offsets, autograd


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_module_decoding_step_by_step_equals_the_whole_sequence(convention):
    module = RotaryEmbedding(8, max_len=16, convention=convention)
    x = torch.randn(2, 3, 12, 8)
    whole = module(x)
    steps = [module(x[:, :, :5])] + [module(x[:, :, t : t + 1], offset=t) for t in range(5, 12)]
    torch.testing.assert_close(torch.cat(steps, dim=2), whole, **ULP)
    torch.testing.assert_close(whole, rope(x, torch.arange(12), convention), **ULP)


def test_module_computes_positions_past_its_table():
    module = RotaryEmbedding(8, max_len=8)
    x = torch.randn(1, 2, 5, 8)
    torch.testing.assert_close(module(x, offset=6), rope(x, torch.arange(6, 11)))
    torch.testing.assert_close(module(x, positions=torch.arange(6, 11)), module(x, offset=6))


def test_module_partial_rotation_and_custom_frequencies():
    module = RotaryEmbedding(4, max_len=32, convention="half", inv_freq=torch.tensor([1.0, 0.5]))
    x = torch.randn(1, 2, 6, 10)
    out = module(x, offset=3)
    assert torch.equal(out[..., 4:], x[..., 4:])
    want = apply_rope(x, torch.arange(3, 9), torch.tensor([1.0, 0.5]), convention="half")
    torch.testing.assert_close(out, want)


def test_module_tables_are_not_saved_in_checkpoints():
    assert RotaryEmbedding(8, max_len=16).state_dict() == {}


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_gradients_flow_through_the_rotation(convention):
    x = torch.randn(1, 2, 4, 6, dtype=torch.float64, requires_grad=True)
    for inv in (rope_frequencies(6), rope_frequencies(4)):
        assert torch.autograd.gradcheck(
            lambda x, inv=inv: apply_rope(x, torch.arange(3, 7), inv, convention=convention), (x,)
        )


def test_non_contiguous_and_oddly_offset_inputs():
    base = torch.randn(2, 5, 3, 8)  # (B, T, H, D), the layout a fused QKV projection gives
    x = base.transpose(1, 2)
    pos = torch.arange(5)
    for convention in CONVENTIONS:
        torch.testing.assert_close(rope(x, pos, convention), rope(x.contiguous(), pos, convention))
    odd = torch.randn(2, 3, 5, 9)[..., 1:]  # storage offset 1, odd strides
    torch.testing.assert_close(rope(odd, pos), rope(odd.contiguous(), pos))


def test_stays_on_the_meta_device():
    # Catches tables created on the CPU while the input lives elsewhere, without a GPU.
    x = torch.empty(2, 3, 5, 8, device="meta")
    for convention in CONVENTIONS:
        assert rope(x, torch.arange(5), convention).device.type == "meta"
        pos = torch.arange(5, device="meta")
        assert apply_rope(x, pos, rope_frequencies(8, device="meta")).device.type == "meta"
        module = RotaryEmbedding(8, max_len=4, convention=convention)
        assert module(x, offset=2).device.type == "meta"  # computed past the table
        assert module(x[:, :, :2], offset=1).device.type == "meta"


# ---------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("x", "pos", "inv", "kwargs"),
    [
        (torch.zeros(3, 5, 8), torch.arange(5), rope_frequencies(8), {}),  # 3-D x
        (torch.zeros(1, 1, 5, 7), torch.arange(5), rope_frequencies(6), {}),  # odd D
        (torch.zeros(1, 1, 5, 8), torch.arange(5.0), rope_frequencies(8), {}),  # float positions
        (torch.zeros(1, 1, 5, 8), torch.arange(4), rope_frequencies(8), {}),  # wrong T
        (torch.zeros(2, 1, 5, 8), torch.zeros(3, 5).long(), rope_frequencies(8), {}),  # wrong B
        (torch.zeros(1, 1, 5, 8), torch.arange(5), rope_frequencies(10), {}),  # 2F > D
        (torch.zeros(1, 1, 5, 8), torch.arange(5), rope_frequencies(8), {"convention": "neox"}),
        (torch.zeros(1, 1, 5, 8), torch.arange(5), rope_frequencies(8), {"attention_factor": 0}),
        (torch.zeros(1, 1, 5, 8, dtype=torch.long), torch.arange(5), rope_frequencies(8), {}),
    ],
)
def test_apply_rope_rejects_bad_input_bilingually(x, pos, inv, kwargs):
    with pytest.raises(ValueError, match=BILINGUAL):
        apply_rope(x, pos, inv, **kwargs)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: rope_frequencies(7), ValueError),
        (lambda: rope_frequencies(8.0), TypeError),
        (lambda: rope_frequencies(8, base=1.0), ValueError),
        (lambda: rope_permutation(7), ValueError),
        (lambda: rope_permutation(8, 10), ValueError),
        (lambda: RotaryEmbedding(9), ValueError),
        (lambda: RotaryEmbedding(8, convention="gptj"), ValueError),
        (lambda: RotaryEmbedding(8, inv_freq=torch.ones(3)), ValueError),
        (lambda: RotaryEmbedding(8)(torch.zeros(1, 1, 2, 6)), ValueError),
        (lambda: RotaryEmbedding(8)(torch.zeros(1, 1, 2, 8), offset=-1), ValueError),
        (lambda: RotaryEmbedding(8)(torch.zeros(1, 1, 2, 8), 1, positions=torch.arange(2)), ValueError),  # noqa: E501
        (lambda: rope_cos_sin(torch.arange(3.0), rope_frequencies(4)), ValueError),
        (lambda: apply_rotary(torch.zeros(1, 1, 3, 8), torch.zeros(3, 4), torch.zeros(2, 4)), ValueError),  # noqa: E501
    ],
)
def test_other_bad_arguments_give_bilingual_errors(call, error):
    with pytest.raises(error, match=BILINGUAL):
        call()
