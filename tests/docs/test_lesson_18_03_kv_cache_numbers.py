"""Every number and checkable claim of lesson 18.03 (KV cache), checked against the reference.

The test reads the pages, so editing a number on a page breaks it: numeric formulas are
evaluated, the matrices of the worked example are compared with ``cache_positions``,
``alibi_bias`` and ``relative_position_bucket``, the table of classic bugs is checked by running
each bug on small Mini-GPTs of every encoding, the memory figures are recomputed, and the code
blocks are run.
"""

from __future__ import annotations

import math
import re

import pytest
import torch
import torch.nn.functional as F
from docs_pages import LANGS, pages
from page_numbers import check_all_statements, run_code_blocks, statements

from minimodel.encodings import COURSE as ENCODINGS
from minimodel.hooks import T5, Alibi
from minimodel.kv_cache import KVCache
from minimodel.model import GPT, GPTConfig
from minimodel.positional.alibi import alibi_bias
from minimodel.positional.cache_positions import (
    causal_mask_after_cache,
    chunk_positions,
    relative_positions,
)
from minimodel.positional.relative_bias import relative_position_bucket

LESSON = "18/03-kv-cache.md"
NOT_NUMERIC = {
    "\\alpha_{0,\\cdot} \\approx (0.1015,\\ 0.1674,\\ 0.2760,\\ 0.4551,\\ 0)",  # test_worked_alibi
}


@pytest.fixture(params=LANGS)
def page(request):
    return pages(LESSON)[request.param]


def pmatrix(tex: str, name: str) -> torch.Tensor:
    """The matrix written as ``name = \\begin{pmatrix} ... \\end{pmatrix}`` in ``tex``."""
    body = tex.split(f"{name} = \\begin{{pmatrix}}", 1)[1].split("\\end{pmatrix}", 1)[0]
    rows = [[c.strip() for c in row.split("&")] for row in body.split("\\\\") if row.strip()]
    return torch.tensor([[-math.inf if c == "-\\infty" else float(c) for c in row] for row in rows])


# The reports the page cites by number: each is a link to its own thread.
REPORTS = {
    "103082": "https://github.com/pytorch/pytorch/issues/103082",  # is_causal is top-left
    "93": "https://github.com/ml-explore/mlx-lm/pull/93",  # GPT-2 positions restarted at 0
    "25104": "https://github.com/huggingface/transformers/issues/25104",  # dynamic NTK + cache
}


def test_the_reports_it_cites_are_links(page):
    links = re.findall(r"\[([^\]]+)\]\((https://[^)\s]+)\)", page.text)
    assert {re.search(r"\d+", text).group(): url for text, url in links} == REPORTS


def test_numeric_formulas(page):
    assert check_all_statements(page.math, NOT_NUMERIC) >= 8


def test_positions_and_mask(page):
    math_text = " ".join(page.part("positions").math)
    assert "p_i = c + i = k - q + i" in math_text
    assert "r_{ij} = j - p_i = j - c - i" in math_text
    for c, q in [(0, 4), (3, 2), (7, 1)]:
        k = c + q
        assert chunk_positions(c, q).tolist() == [c + i for i in range(q)]
        rel = relative_positions(c, q)
        assert rel.tolist() == [[j - c - i for j in range(k)] for i in range(q)]
        square = causal_mask_after_cache(0, k)
        assert torch.equal(causal_mask_after_cache(c, q), square[c:]), "last q rows"
        assert torch.equal(causal_mask_after_cache(c, q) == 0, rel <= 0)
    assert (causal_mask_after_cache(9, 1) == 0).all(), "q = 1: the only row is all zeros"


def test_cost_of_recomputing(page):
    text = page.part("incremental-decoding").text
    assert sum(range(1, 513)) == 131328 and 512 * 513 // 2 == 131328
    assert "$256$" in text and round(131328 / 512) == 256


def test_mask_alignment(page):
    math_text = " ".join(page.part("mask-alignment").math)
    right, flag = pmatrix(math_text, "M"), pmatrix(math_text, "M^{\\text{is\\_causal}}")
    assert torch.equal(right, causal_mask_after_cache(3, 2))
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 1, n, 8, generator=g) for n in (2, 5, 5))
    with_flag = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert torch.allclose(with_flag, F.scaled_dot_product_attention(q, k, v, attn_mask=flag))
    from torch.nn.attention.bias import causal_lower_right

    lower_right = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(2, 5))
    assert torch.allclose(lower_right, F.scaled_dot_product_attention(q, k, v, attn_mask=right))
    assert "causal_lower_right" in page.part("mask-alignment").text


def test_worked_example(page):
    part = page.part("worked-example")
    math_text = " ".join(part.math)
    r = pmatrix(math_text, "r")
    assert torch.equal(r.long(), relative_positions(3, 2))
    B = pmatrix(math_text, "B")
    slope = torch.tensor([0.5])
    assert torch.equal(B, alibi_bias(2, 5, slope)[0])
    assert torch.equal(B, (0.5 * r).masked_fill(r > 0, -math.inf))
    # The weights of the first row with zero content logits, as in lesson 17.04.
    [alpha] = [s for s in statements(part.math) if s.startswith("\\alpha_{0,\\cdot}")]
    stated = [float(x) for x in re.findall(r"\d\.\d{4}", alpha)]
    weights = B[0].softmax(-1)
    assert torch.allclose(torch.tensor(stated), weights[:4], atol=5e-5) and weights[4] == 0
    # The restart bug: queries at 0 and 1, the right mask; the row shifts by m c = 1.5.
    restarted = 0.5 * (torch.arange(5)[None] - torch.arange(2)[:, None])
    restarted = restarted.masked_fill(r > 0, -math.inf)
    assert restarted[0, :4].tolist() == [0.0, 0.5, 1.0, 1.5]
    assert "(0,\\ 0.5,\\ 1,\\ 1.5,\\ -\\infty)" in math_text and "m\\,c = 1.5" in math_text
    assert torch.allclose(restarted[:, :4] - B[:, :4], torch.full((2, 4), 1.5)[:, :4])
    assert torch.allclose(restarted.softmax(-1), B.softmax(-1))
    # T5, causal, 32 buckets.
    buckets = relative_position_bucket(r.long()[0, :4], bidirectional=False)
    assert buckets.tolist() == [3, 2, 1, 0] and "(3, 2, 1, 0)" in math_text
    bug = relative_position_bucket(torch.arange(4), bidirectional=False)
    assert bug.tolist() == [0, 0, 0, 0] and "r = (0, 1, 2, 3)" in math_text
    # Top-left mask: the first new query only sees key 0, weight 1.
    top_left = B[0].clone()
    top_left[1:] = -math.inf
    assert top_left.softmax(-1)[0] == 1.0 and "$0.1015$" in part.text and "$1$" in part.text
    assert 5 * 2 * 4 * 128 * 4 == 20480


def test_memory_figures(page):
    text = page.part("memory-and-latency").text
    formula = lambda L, B, T, width, s: 2 * L * B * T * width * s  # noqa: E731
    assert formula(2, 2, 64, 64, 4) == 131072
    assert formula(4, 1, 1024, 128, 4) == 4 * 2**20 and "4 MiB" in text
    llama2 = formula(32, 1, 4096, 32 * 128, 2)
    assert llama2 == 2**31 and llama2 / 4096 == 2**19  # half a MiB per token
    llama3_per_token = formula(32, 1, 1, 8 * 128, 2)
    assert llama3_per_token == 131072 and llama3_per_token * 4 == llama2 / 4096
    # The lab measures a filled cache of the lab's model (2 layers, width 64, 2 x 64 tokens).
    model = _model("rope", n_layer=2, n_embd=64)
    cache = KVCache(2)
    with torch.no_grad():
        model(torch.zeros(2, 64, dtype=torch.long), cache=cache)
    assert sum(t.numel() * t.element_size() for t in cache.keys + cache.values) == 131072


# --- the table of classic bugs, run for real ------------------------------------------------
def _model(encoding: str, n_layer: int = 2, n_embd: int = 32) -> GPT:
    torch.manual_seed(0)
    config = GPTConfig(
        vocab_size=40, block_size=32, n_layer=n_layer, n_head=4, n_embd=n_embd,
        positional=encoding, t5_num_buckets=8, t5_max_distance=16,
    )  # fmt: skip
    model = GPT(config).eval()
    with torch.no_grad():  # larger weights than at initialisation: peaked attention
        for block in model.blocks:
            block.attn.c_attn.weight.normal_(0.0, 0.3)
        if encoding == "t5":
            model.hooks.relative.bias.weight.normal_(0.0, 1.0)
    return model


@torch.no_grad()
def _decode(model: GPT, idx: torch.Tensor, prefill: int, bug: str | None) -> torch.Tensor:
    """Prefill, then one token per step, with a decoding step written out (as in the lab)."""
    hooks, H, C = model.hooks, model.config.n_head, model.config.n_embd
    cache, out = KVCache(model.config.n_layer), []
    chunks = [idx[:, :prefill]] + [idx[:, t : t + 1] for t in range(prefill, idx.size(1))]
    for chunk in chunks:
        B, q_len = chunk.shape
        c = cache.length
        k_len = c + q_len
        start = {"restart": 0, "off-by-one": c + 1 if c else 0}.get(bug, c)
        positions = torch.arange(start, start + q_len)
        rel = torch.arange(k_len)[None] - positions[:, None]
        mask = causal_mask_after_cache(c, q_len)
        if bug == "top-left":
            mask = torch.zeros(q_len, k_len).masked_fill(
                ~torch.ones(q_len, k_len, dtype=torch.bool).tril(), -math.inf
            )
        x = hooks.add_to_input(model.wte(chunk), offset=start)
        if isinstance(hooks, Alibi):
            bias = hooks.slopes[:, None, None] * rel + mask
        elif isinstance(hooks, T5):
            table = hooks.relative
            buckets = relative_position_bucket(
                rel, bidirectional=False, num_buckets=table.num_buckets,
                max_distance=table.max_distance,
            )  # fmt: skip
            bias = table.bias(buckets).permute(2, 0, 1) * hooks.bias_scale + mask
        else:
            bias = mask.expand(H, q_len, k_len)
        for layer, block in enumerate(model.blocks):
            q, k, v = block.attn.c_attn(block.ln_1(x)).split(C, dim=2)
            q, k, v = (t.view(B, q_len, H, C // H).transpose(1, 2) for t in (q, k, v))
            q, k = hooks.rotate(q, k, start)  # the identity but for RoPE
            k, v = cache.update(layer, k, v)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
            x = x + block.attn.c_proj(y.transpose(1, 2).reshape(B, q_len, C))
            x = x + block.mlp(block.ln_2(x))
        out.append(model.lm_head(model.ln_f(x)))
    return torch.cat(out, dim=1)


def _bug_table(page) -> dict[str, set[str]]:
    """Rows of the classic-bugs table that every encoding can have: bug -> encodings."""
    [table] = page.part("classic-bugs").tables
    names = {
        "sinusoidal": "sinusoidal", "learned": "learned", "aprendida": "learned", "RoPE": "rope",
        "T5": "t5", "ALiBi": "alibi", "NTK dinámico": "rope", "dynamic NTK": "rope",
    }  # fmt: skip
    found = {}
    for row in table[1:]:
        affected = row[2]
        if affected in ("todas", "all"):
            found[row[0]] = set(ENCODINGS)
        else:
            found[row[0]] = {names[part.strip()] for part in affected.split(",")}
    return found


BUGS = {0: "restart", 1: "top-left", 2: "off-by-one"}  # rows of the table, in order


def test_classic_bugs_table_is_what_happens(page):
    table = _bug_table(page)
    rows = list(table.values())
    idx = torch.randint(0, 40, (2, 24), generator=torch.Generator().manual_seed(1))
    for encoding in ENCODINGS:
        model = _model(encoding)
        with torch.no_grad():
            full = model(idx)[0]
        exact = (_decode(model, idx, 8, None) - full).abs().max()
        assert exact < 1e-4, f"{encoding}: the written-out step is exact"
        for row, bug in BUGS.items():
            delta = (_decode(model, idx, 8, bug) - full).abs().max()
            affected = encoding in rows[row]
            assert (delta > 1e-2) if affected else (delta < 1e-4), (encoding, bug, float(delta))
    assert rows[3] == {"rope"} and rows[4] == {"rope"}  # twice-rotated keys; dynamic NTK


def test_code_blocks_run_and_print_what_the_page_shows():
    # One language is enough: the parity test makes both pages' code identical.
    assert run_code_blocks(pages(LESSON)["es"]) == 2
