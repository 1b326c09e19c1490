"""The reference ALiBi against the paper's slopes, the closed form, SDPA and bad input."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from minimodel.positional.alibi import alibi_bias, alibi_slopes

BILINGUAL = r"(?s)\[es\].*\[en\]"


def original_get_slopes(n: int) -> list[float]:
    """The recursion of the original ALiBi repository (fairseq/models/transformer.py)."""

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + original_get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


def closed_form_log2(n: int) -> list[float]:
    """log2 of the slopes: -8k/c for k = 1..c, then -8(2k-1)/(2c) for k = 1..n-c."""
    c = 1 << (n.bit_length() - 1)
    first = [-8 * k / c for k in range(1, c + 1)]
    return first + [-4 * (2 * k - 1) / c for k in range(1, n - c + 1)]


# ------------------------------------------------------------------------------------ slopes


@pytest.mark.parametrize(
    ("n", "log2_slopes"),
    [
        (8, [-1, -2, -3, -4, -5, -6, -7, -8]),
        (12, [-1, -2, -3, -4, -5, -6, -7, -8, -0.5, -1.5, -2.5, -3.5]),
        (6, [-2, -4, -6, -8, -1, -3]),
        (1, [-8]),
        (2, [-4, -8]),
    ],
)
def test_slopes_match_the_table_of_the_research_note(n, log2_slopes):
    slopes = alibi_slopes(n)
    assert slopes.dtype == torch.float32 and slopes.shape == (n,)
    torch.testing.assert_close(torch.log2(slopes.double()), torch.tensor(log2_slopes).double())


@pytest.mark.parametrize("n", [*range(1, 41), 48, 64, 96, 112, 128])
def test_slopes_match_the_original_code_and_the_closed_form(n):
    got = alibi_slopes(n).double()
    original = torch.tensor(original_get_slopes(n)).double()
    torch.testing.assert_close(got, original, rtol=1e-7, atol=0)
    torch.testing.assert_close(torch.log2(got), torch.tensor(closed_form_log2(n)).double())


def test_slopes_are_not_monotone_when_heads_are_not_a_power_of_two():
    assert torch.all(alibi_slopes(8).diff() < 0)
    assert not torch.all(alibi_slopes(12).diff() < 0)


def test_slopes_on_the_meta_device():
    assert alibi_slopes(4, device="meta").device.type == "meta"


# -------------------------------------------------------------------------------------- bias


def test_small_causal_example_by_hand():
    slopes = torch.tensor([0.5])  # one head, slope 1/2
    bias = alibi_bias(3, 3, slopes)
    inf = float("-inf")
    expected = torch.tensor([[[0.0, inf, inf], [-0.5, 0.0, inf], [-1.0, -0.5, 0.0]]])
    assert torch.equal(bias, expected)
    # the diagonal is +0.0, not -0.0
    assert not torch.signbit(bias.diagonal(dim1=-2, dim2=-1)).any()


def test_queries_are_aligned_to_the_end_of_the_keys():
    slopes = torch.tensor([1.0, 0.25])
    bias = alibi_bias(2, 5, slopes)  # queries at positions 3 and 4
    assert bias.shape == (2, 2, 5) and bias.dtype == torch.float32
    torch.testing.assert_close(bias[0, 0, :4], torch.tensor([-3.0, -2.0, -1.0, 0.0]))
    assert bias[0, 0, 4] == float("-inf")
    torch.testing.assert_close(bias[1, 1], torch.tensor([-1.0, -0.75, -0.5, -0.25, 0.0]))


@settings(max_examples=40, deadline=None)
@given(H=st.integers(1, 12), k_len=st.integers(1, 64), q_len=st.integers(1, 64))
def test_decoding_rows_are_the_last_rows_of_the_full_bias(H, k_len, q_len):
    q_len = min(q_len, k_len)
    slopes = alibi_slopes(H)
    for causal in (True, False):
        full = alibi_bias(k_len, k_len, slopes, causal=causal)
        assert torch.equal(alibi_bias(q_len, k_len, slopes, causal=causal), full[:, -q_len:])
        assert torch.equal(alibi_bias(1, k_len, slopes, causal=causal), full[:, -1:])


@settings(max_examples=30, deadline=None)
@given(H=st.integers(1, 12), T=st.integers(1, 48))
def test_distance_form_and_symmetric_form(H, T):
    slopes = alibi_slopes(H)
    causal, symmetric = alibi_bias(T, T, slopes), alibi_bias(T, T, slopes, causal=False)
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    want = -slopes[:, None, None] * (i - j).abs()
    torch.testing.assert_close(symmetric, want)
    torch.testing.assert_close(symmetric, symmetric.transpose(-1, -2))
    past = (j <= i).expand(H, T, T)
    assert torch.equal(causal[past], symmetric[past])
    assert torch.all(causal[~past] == float("-inf"))
    assert torch.all(causal.diagonal(dim1=-2, dim2=-1) == 0)
    assert torch.all(symmetric <= 0)


@settings(max_examples=30, deadline=None)
@given(H=st.integers(1, 8), T=st.integers(1, 40), seed=st.integers(0, 2**16))
def test_row_constant_form_gives_the_same_causal_softmax(H, T, seed):
    # Original fairseq code adds +m*j: a constant per row away from -m*(i-j).
    logits = torch.randn(H, T, T, generator=torch.Generator().manual_seed(seed))
    slopes = alibi_slopes(H)
    j = torch.arange(T)
    mask = torch.full((T, T), float("-inf")).triu(1)
    row_constant = slopes[:, None, None] * j[None, None, :] + mask
    torch.testing.assert_close(
        torch.softmax(logits + alibi_bias(T, T, slopes), -1),
        torch.softmax(logits + row_constant, -1),
    )


@pytest.mark.parametrize(("q_len", "k_len"), [(7, 7), (1, 9), (3, 10)])
@pytest.mark.parametrize("causal", [True, False])
def test_sdpa_with_the_bias_equals_manual_attention(q_len, k_len, causal):
    torch.manual_seed(0)
    B, H, d = 2, 6, 16
    q, k, v = torch.randn(B, H, q_len, d), torch.randn(B, H, k_len, d), torch.randn(B, H, k_len, d)
    bias = alibi_bias(q_len, k_len, alibi_slopes(H), causal=causal)
    got = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype))
    weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d) + bias, dim=-1)
    torch.testing.assert_close(got, weights @ v, atol=1e-5, rtol=1e-5)
    if causal and q_len == k_len:  # with no slope left, the folded mask is plain causal SDPA
        zero = alibi_bias(q_len, k_len, torch.zeros(H))
        plain = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        torch.testing.assert_close(F.scaled_dot_product_attention(q, k, v, attn_mask=zero), plain)


def test_bias_follows_the_slopes_device_and_has_no_fully_masked_row():
    bias = alibi_bias(4, 6, alibi_slopes(4, device="meta"))
    assert bias.device.type == "meta" and bias.shape == (4, 4, 6)
    cpu = alibi_bias(1, 1, alibi_slopes(3))
    assert torch.all(torch.isfinite(cpu.amax(dim=-1)))


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: alibi_slopes(0), ValueError),
        (lambda: alibi_slopes(4.0), TypeError),
        (lambda: alibi_bias(5, 4, alibi_slopes(2)), ValueError),
        (lambda: alibi_bias(0, 4, alibi_slopes(2)), ValueError),
        (lambda: alibi_bias(2, 4, alibi_slopes(2)[None]), ValueError),
        (lambda: alibi_bias(2, 4, torch.tensor([1, 2])), ValueError),
        (lambda: alibi_bias(2, 4, [0.5, 0.25]), TypeError),
    ],
)
def test_bad_arguments_give_bilingual_errors(call, error):
    with pytest.raises(error, match=BILINGUAL):
        call()
