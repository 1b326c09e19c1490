"""Every number and checkable equation of lesson 17.05 (relative biases), against the reference.

Numeric formulas are evaluated; the bucket formula and its boundaries, the bucket tables, the
worked buckets, Shaw's gather identity and costs, Swin's index, centre and symmetry are compared
with ``relative_position_bucket``, ``RelativePositionBias`` and ``swin_relative_index``; the code
blocks are run.
"""

from __future__ import annotations

import math
import re

import pytest
import torch
from docs_pages import LANGS, pages
from page_numbers import cell_number, check_all_statements, run_code_blocks, statements

from minimodel.positional.relative_bias import (
    RelativePositionBias,
    relative_position_bucket,
    swin_relative_index,
)

LESSON = "17/05-relative-bias.md"


@pytest.fixture(params=LANGS)
def page(request):
    return pages(LESSON)[request.param]


def first_distance(bidirectional: bool) -> dict[int, int]:
    n = torch.arange(0, 2000)
    starts: dict[int, int] = {}
    for distance, bucket in zip(
        n.tolist(), relative_position_bucket(-n, bidirectional=bidirectional).tolist(), strict=True
    ):
        starts.setdefault(bucket, distance)
    return starts


def test_numeric_formulas(page):
    assert check_all_statements(page.math, set()) >= 15


def test_four_terms_of_the_absolute_logit(page):
    expansion = (
        "(x_i + p_i)\\, W\\, (x_j + p_j)^\\top = x_i W x_j^\\top + x_i W p_j^\\top "
        "+ p_i W x_j^\\top + p_i W p_j^\\top"
    )
    assert expansion in page.math
    g = torch.Generator().manual_seed(0)
    x, p, w = (torch.randn(5, 5, generator=g, dtype=torch.float64) for _ in range(3))
    xi, xj, pi, pj = x[0], x[1], p[0], p[1]
    total = xi @ w @ xj + xi @ w @ pj + pi @ w @ xj + pi @ w @ pj
    assert torch.isclose((xi + pi) @ w @ (xj + pj), total)


def test_shaw_gather_and_its_cost(page):
    assert "q_i \\cdot a^K_{ij} = \\big(q A^\\top\\big)_{i,\\ r + K}" in page.math
    T, d, K = 64, 16, 4
    g = torch.Generator().manual_seed(1)
    q, table = torch.randn(T, d, generator=g), torch.randn(2 * K + 1, d, generator=g)
    r = (torch.arange(T)[None, :] - torch.arange(T)[:, None]).clamp(-K, K)
    direct = (q[:, None, :] * table[r + K]).sum(-1)
    assert torch.allclose((q @ table.T).gather(1, r + K), direct, atol=1e-5)
    shaw = page.part("shaw")
    assert "T = 64" in shaw.math and "d = 16" in shaw.math and "K = 4" in shaw.math
    assert T * (2 * K + 1) == 576 and "576" in shaw.math
    assert T * T * d == 65_536 and "65\\,536" in shaw.math
    u = torch.randn(d, generator=g)
    fixed = (u.expand(T, d) @ table.T).gather(1, r + K)
    assert torch.allclose(fixed, (table @ u)[r + K], atol=1e-5), "a fixed query gives a scalar bias"


def test_t5_parameters(page):
    module = RelativePositionBias(12)
    assert sum(p.numel() for p in module.parameters()) == 384
    assert "32 \\cdot 12 = 384" in page.part("t5").math


def test_bucket_formula_as_written(page):
    [formula] = [s for s in statements(page.math) if s.startswith("\\operatorname{bucket}(n) =")]
    assert "\\frac{\\ln(n/e)}{\\ln(D/e)}\\,(n_b - e)" in formula and "n_b - 1" in formula
    for bidirectional, side, start in ((True, 16, 0), (False, 32, 0)):
        e, D = side // 2, 128
        n = torch.arange(e, 3000)
        # The page's formula, with the logarithm in float32 as the page says.
        scaled = torch.log(n.float() / e) / math.log(D / e) * (side - e)
        written = (e + scaled.long()).clamp(max=side - 1)
        got = relative_position_bucket(-n, bidirectional=bidirectional)
        assert torch.equal(got - start, written)
        small = torch.arange(0, e)
        assert torch.equal(relative_position_bucket(-small, bidirectional=bidirectional), small)
    future = torch.arange(1, 500)
    assert torch.all(relative_position_bucket(future, bidirectional=False) == 0)
    right = relative_position_bucket(future, bidirectional=True)
    assert torch.all((right >= 16) & (right < 32))


def test_bucket_boundaries(page):
    text = page.part("buckets")
    for k in range(9):
        assert math.isclose(8 * 16 ** (k / 8), 8 * 2 ** (k / 2)), "8 * 16^(k/8) = 8 * 2^(k/2)"
    bidirectional = first_distance(True)
    listed = text.math[text.math.index("8, 12, 16, 23, 32, 46, 64, 91")]
    stated = [int(x) for x in re.findall(r"\d+", listed)]
    assert stated == [bidirectional[b] for b in range(8, 16)]
    for k, first in zip(range(8), stated, strict=True):
        assert math.ceil(8 * 2 ** (k / 2) - 1e-9) == first
    causal = first_distance(False)
    assert causal[31] == 113 == math.ceil(16 * 8 ** (15 / 16)) and "113" in text.math
    assert all(causal[16 + k] == math.ceil(16 * 8 ** (k / 16) - 1e-9) for k in range(16))
    # Everything from D = 128 on shares the last bucket; it starts earlier (91, 113).
    far = -torch.arange(128, 10_000)
    assert torch.all(relative_position_bucket(far, bidirectional=True) == 15)
    assert torch.all(relative_position_bucket(far, bidirectional=False) == 31)
    assert bidirectional[15] == 91 and "91" in text.math


def test_bucket_tables(page):
    worked = page.part("worked-example")
    full, widths = worked.tables
    rel = torch.tensor([int(cell_number(c)) for c in full[0][1:]])
    for row, mode in zip(full[1:], (True, False), strict=True):
        stated = [int(c) for c in row[1:]]
        assert stated == relative_position_bucket(rel, bidirectional=mode).tolist()
    starts = first_distance(True)
    buckets = [int(b) for b in widths[0][1:]]
    assert buckets == list(range(8, 16))
    for bucket, cell in zip(buckets, widths[1][1:], strict=True):
        low, _, high = cell.partition("–")
        assert int(low) == starts[bucket]
        if high:
            assert int(high) == starts[bucket + 1] - 1
        else:
            assert bucket == 15, "only the last bucket is open"


def test_worked_buckets_by_hand(page):
    items = " ".join(page.part("worked-example").math)
    cases = {(-32, True): 12, (16, True): 26, (-32, False): 21, (-64, False): 26}
    for (rel, mode), bucket in cases.items():
        assert relative_position_bucket(torch.tensor([rel]), bidirectional=mode).item() == bucket
        assert f"= {bucket}" in items
    assert "r = -32" in items and "r = 16" in items and "r = -64" in items


def test_swin_index(page):
    swin = page.part("swin")
    assert (
        "\\operatorname{idx}(a, b) = (\\Delta_r + M_h - 1)\\,(2M_w - 1) + (\\Delta_c + M_w - 1)"
        in swin.math
    )
    for h, w in ((1, 1), (2, 2), (2, 3), (3, 2), (7, 7), (4, 6)):
        index = swin_relative_index(h, w)
        rows, cols = torch.arange(h * w) // w, torch.arange(h * w) % w
        d_row = rows[:, None] - rows[None, :]  # query - key
        d_col = cols[:, None] - cols[None, :]
        assert torch.equal(index, (d_row + h - 1) * (2 * w - 1) + (d_col + w - 1))
        centre = (h - 1) * (2 * w - 1) + w - 1
        assert torch.all(index.diagonal() == centre)
        assert torch.all(index + index.T == (2 * h - 1) * (2 * w - 1) - 1)
        assert index.max().item() == (2 * h - 1) * (2 * w - 1) - 1 and index.min().item() == 0
    assert "84" in swin.math and "168" in swin.math and (7 - 1) * 13 + 6 == 84


def test_swin_worked_window(page):
    worked = page.part("worked-example")
    [matrix] = [s for s in worked.math if s.startswith("\\operatorname{idx} = \\begin{pmatrix}")]
    body = matrix.split("\\begin{pmatrix}")[1].split("\\end{pmatrix}")[0]
    written = [[int(c) for c in row.split("&")] for row in body.split("\\\\") if row.strip()]
    index = swin_relative_index(2, 2)
    assert written == index.tolist()
    assert index[0, 3].item() == 0 and index[3, 0].item() == 8
    assert "3 \\cdot 3 = 9" in worked.math


def test_end_alignment(page):
    assert "p_i = k - q + i" in page.math
    module = RelativePositionBias(3, bidirectional=True)
    full = module(9, 9)
    for q in range(1, 10):
        assert torch.equal(module(q, 9), full[:, 9 - q :])


def test_pretrained_t5_through_sdpa_needs_scale_one(page):
    # T5's logits are q.k + b; SDPA divides q.k by sqrt(d) unless scale=1.0.
    import torch.nn.functional as F

    assert "`scale=1.0`" in page.section("t5", own=True) and "q_i \\cdot k_j + b_h" in page.math
    torch.manual_seed(0)
    H, T, D = 4, 7, 16
    relative = RelativePositionBias(H, bidirectional=True)
    q, k, v = (torch.randn(1, H, T, D) for _ in range(3))
    with torch.no_grad():
        relative.bias.weight.normal_(0.0, 1.0)  # a trained-looking bias
        bias = relative(T, T)
        t5 = (q @ k.transpose(-2, -1) + bias).softmax(-1) @ v
        scaled_as_t5 = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=1.0)
        default = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    assert torch.allclose(scaled_as_t5, t5, atol=1e-5)
    assert not torch.allclose(default, t5, atol=1e-2)


def test_code_blocks_run_and_print_what_the_page_shows():
    # Both languages have the same code (test_docs_parity); run it once.
    found = pages(LESSON)
    assert found["es"].code == found["en"].code
    assert run_code_blocks(found["en"]) == 2
