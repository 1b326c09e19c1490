"""Every number and checkable equation of lesson 17.04 (ALiBi), checked against the reference.

The test reads the pages, so editing a number on a page breaks it: numeric formulas (with
``\\approx`` or ``=``) are evaluated, the slope tables, the worked 4 x 4 bias and its softmax are
compared with ``alibi_slopes`` and ``alibi_bias``, the symbolic identities (the conventions, the
geometric series, the memory of the bias) are checked numerically, and the code blocks are run.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
import torch
from docs_pages import LANGS, decimals, pages
from page_numbers import cell_number, check_all_statements, run_code_blocks, statements

from minimodel.positional.alibi import alibi_bias, alibi_slopes

LESSON = "17/04-alibi.md"
NOT_NUMERIC = {
    "\\alpha_{3,\\cdot} \\approx (0.1015,\\ 0.1674,\\ 0.2760,\\ 0.4551)",  # test_worked_bias
}


@pytest.fixture(params=LANGS)
def page(request):
    return pages(LESSON)[request.param]


def log2_slopes(n_heads: int) -> list[float]:
    return torch.log2(alibi_slopes(n_heads).double()).tolist()


def test_numeric_formulas(page):
    assert check_all_statements(page.math, NOT_NUMERIC) >= 15


def test_slope_rule_tables(page):
    [table] = page.part("non-power-of-two").tables
    for row in table[1:]:
        n_heads = int(row[0])
        stated = [cell_number(x) for x in row[1].split(",")]
        assert np.allclose(stated, log2_slopes(n_heads), atol=1e-6), f"H = {n_heads}"
    slopes12 = alibi_slopes(12)
    assert int(slopes12.argmax()) == 8, "head 9 has the largest slope of all"
    assert not bool((slopes12[1:] <= slopes12[:-1]).all()), "the list is not monotone"
    closed = [2 ** (-8 * h / 12) for h in range(1, 13)]
    assert abs(closed[0] - 0.63) < 0.005 and not np.allclose(closed, slopes12.double())


def test_worked_slopes(page):
    eight, twelve = page.part("worked-example").tables
    heads = [int(h) for h in eight[0][1:]]
    assert heads == list(range(1, 9))
    assert [float(x) for x in eight[1][1:]] == alibi_slopes(8).tolist(), "exact powers of two"
    assert [int(h) for h in twelve[0][1:]] == [9, 10, 11, 12]
    expected = alibi_slopes(12).double()[8:]
    for cell, value in zip(twelve[1][1:], expected.tolist(), strict=True):
        assert abs(float(cell) - value) <= 0.5 * 10 ** -decimals(cell), (cell, value)


def test_worked_bias(page):
    found = [s for s in statements(page.part("worked-example").math) if s.startswith("B =")]
    [matrix] = found
    body = matrix.split("\\begin{pmatrix}")[1].split("\\end{pmatrix}")[0]
    rows = [[c.strip() for c in row.split("&")] for row in body.split("\\\\") if row.strip()]
    written = np.array([[-np.inf if c == "-\\infty" else float(c) for c in r] for r in rows])
    assert np.array_equal(written, alibi_bias(4, 4, alibi_slopes(8))[0].numpy())

    last = torch.tensor(written[3])
    weights = last.softmax(dim=-1).tolist()
    [alpha] = [s for s in page.math if s.startswith("\\alpha_{3,\\cdot} \\approx")]
    stated = [float(x) for x in re.findall(r"\d\.\d{4}", alpha)]
    assert np.allclose(stated, weights, atol=5e-5)
    text = page.part("worked-example").text
    assert "2.1975" in text and abs(math.fsum(math.exp(x) for x in written[3]) - 2.1975) < 5e-5
    row_constant = torch.tensor([0.0, 0.5, 1.0, 1.5])
    assert "(0, 0.5, 1, 1.5)" in page.part("worked-example").math
    assert torch.allclose(row_constant.softmax(-1), last.softmax(-1).float())
    assert np.allclose(np.array(weights[:-1]) / np.array(weights[1:]), math.exp(-0.5))


def test_conventions_give_the_same_causal_softmax(page):
    table = page.part("conventions").tables[0]
    forms = [row[1] for row in table[1:]]
    assert forms == ["$-m_h\\,(i - j)$", "$+m_h\\,j$", "$m_h\\,(j - (T - 1))$"]
    assert "m_h\\,j = -m_h\\,(i - j) + m_h\\,i" in page.math
    torch.manual_seed(0)
    T, slopes = 9, alibi_slopes(6)
    logits = torch.randn(6, T, T)
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    m = slopes[:, None, None]
    future = j > i
    ours = alibi_bias(T, T, slopes)
    assert torch.allclose(ours, (-m * (i - j)).masked_fill(future, float("-inf")))
    for other in (m * j + 0 * i, m * (j - (T - 1)) + 0 * i):
        other = other.masked_fill(future, float("-inf"))
        assert torch.allclose((logits + ours).softmax(-1), (logits + other).softmax(-1), atol=1e-6)
    flipped = (m * (i - j)).masked_fill(future, float("-inf"))  # the sign mistake
    assert int(flipped.softmax(-1)[0, -1].argmax()) == 0, "the far past gets rewarded"
    # Without a mask, +m j is not the symmetric bias: attention goes to the end.
    symmetric = alibi_bias(T, T, slopes, causal=False)
    assert torch.allclose(symmetric, -m * (i - j).abs())
    assert not torch.allclose((logits + symmetric).softmax(-1), (logits + m * j).softmax(-1))
    assert int((m * j + 0 * i).softmax(-1)[0, 0].argmax()) == T - 1


def test_kv_cache_alignment(page):
    assert "p_i = k - q + i" in page.math
    full = alibi_bias(7, 7, alibi_slopes(4))
    for q in range(1, 8):
        assert torch.equal(alibi_bias(q, 7, alibi_slopes(4)), full[:, 7 - q :])


def test_extrapolation_numbers(page):
    math_text = " ".join(page.part("extrapolation").math)
    assert "\\frac{\\sum_{k \\ge K} e^{-m k}}{\\sum_{k \\ge 0} e^{-m k}} = e^{-m K}" in math_text
    for m in (0.5, 1 / 256):
        k = np.arange(200_000)
        series = np.exp(-m * k)
        assert np.isclose(series[10:].sum() / series.sum(), math.exp(-m * 10))
    slopes = alibi_slopes(8).double()
    # "e^{-256} for the first head and e^{-2} for the last" (L = 512); e^{-4} with L = 1024.
    for exponent in (slopes[0] * 512, slopes[-1] * 512, slopes[-1] * 1024):
        assert f"e^{{-{exponent.item():g}}}" in math_text
    assert "32 \\cdot 8192^2 \\cdot 4\\ \\text{B}" in math_text
    bias = alibi_bias(64, 64, alibi_slopes(32))
    assert bias.numel() * bias.element_size() == 32 * 64**2 * 4, "H * T^2 float32 numbers"


def test_geometric_slopes(page):
    for n_heads in (1, 2, 4, 8, 16, 32, 64):
        h = torch.arange(1, n_heads + 1, dtype=torch.float64)
        assert torch.allclose(alibi_slopes(n_heads).double(), 2 ** (-8 * h / n_heads))
        assert alibi_slopes(n_heads)[-1].item() == 2**-8, "the last slope is always 1/256"
    assert "k_{10} = \\frac{10}{m_h}" in page.math
    reach = 10 / alibi_slopes(8).double()
    assert (
        reach[0] == 20
        and reach[-1] == 2560
        and torch.allclose(reach[1:] / reach[:-1], 2 * torch.ones(7, dtype=torch.float64))
    )


def test_largest_power_of_two_not_above_h(page):
    text = " ".join(page.section("non-power-of-two").split())
    assert "not above $H$" in text or "que no supera $H$" in text
    for n_heads in range(1, 65):
        c = 2 ** math.floor(math.log2(n_heads))
        assert c <= n_heads < 2 * c
        assert (c == n_heads) == (n_heads & (n_heads - 1) == 0), "equal exactly for powers of two"


def test_is_causal_with_attn_mask_on_this_cpu(page):
    # What the page says SDPA does on CPU with both arguments, in the PyTorch it names.
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    text = " ".join(page.section("sdpa").split())
    version = ".".join(torch.__version__.split(".")[:2])
    assert f"PyTorch {version}" in text and "CPU" in text
    torch.manual_seed(0)
    H, T, D = 2, 5, 8
    q, k, v = (torch.randn(1, H, T, D) for _ in range(3))
    bias = torch.randn(H, T, T)
    with pytest.raises(RuntimeError, match="is_causal"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=bias, is_causal=True)  # 3-D
    assert "`SDPBackend.FLASH_ATTENTION`" in text and "`SDPBackend.MATH`" in text
    with warnings.catch_warnings(record=True) as said, sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError):  # the fused kernel takes no 3-D mask
            F.scaled_dot_product_attention(q, k, v, attn_mask=bias, is_causal=True)
    assert any("2d" in str(w.message) and "4d" in str(w.message) for w in said)
    with sdpa_kernel(SDPBackend.MATH), pytest.raises(RuntimeError, match="is_causal"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=bias[None], is_causal=True)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):  # the one that takes 4-D masks and adds both
        F.scaled_dot_product_attention(q, k, v, attn_mask=bias[None], is_causal=True)
    for mask in (bias[:1, None], bias[None], bias[0]):  # 4-D (1, 1, T, T), (1, H, T, T), 2-D
        for q_len in (T, 2):  # the causal mask aligned to the start, also with fewer queries
            start = torch.full((q_len, T), float("-inf")).triu(1)
            part = mask[..., -q_len:, :]
            both = F.scaled_dot_product_attention(
                q[:, :, -q_len:], k, v, attn_mask=part, is_causal=True
            )
            added = F.scaled_dot_product_attention(q[:, :, -q_len:], k, v, attn_mask=part + start)
            alone = F.scaled_dot_product_attention(q[:, :, -q_len:], k, v, attn_mask=part)
            assert torch.allclose(both, added, atol=1e-6), "both masks, silently added"
            assert not torch.allclose(both, alone, atol=1e-3)


def test_code_blocks_run_and_print_what_the_page_shows():
    # Both languages have the same code (test_docs_parity); run it once.
    found = pages(LESSON)
    assert found["es"].code == found["en"].code
    assert run_code_blocks(found["en"]) == 2
