"""Every number and checkable claim of lesson 18.01 (extrapolation), checked against the reference.

The test reads the pages, so editing a number on a page breaks it: numeric formulas are
evaluated, the symbolic ones (the mean of a step, the detection delay, the needle distance, the
cost ratio) are checked on the reference functions and on the passkey task itself, the published
table is checked for its ratios, and the code block is run.
"""

from __future__ import annotations

import math

import pytest
import torch
from docs_pages import LANGS, decimals, normalise_math, pages
from page_numbers import check_all_statements, run_code_blocks

from minimodel.data.tasks import PasskeyTask
from minimodel.model import GPT, GPTConfig
from minimodel.positional.extrapolation import (
    bucket_means,
    doubling_buckets,
    failure_position,
    needle_distance,
)
from minimodel.positional.relative_bias import relative_position_bucket

LESSON = "18/01-extrapolation.md"
NOT_NUMERIC: set[str] = set()


@pytest.fixture(params=LANGS)
def page(request):
    return pages(LESSON)[request.param]


def _has(page, anchor: str, formula: str) -> None:
    found = {normalise_math(m) for m in page.part(anchor).math}
    assert normalise_math(formula) in found, f"[{anchor}] no longer on the page: {formula}"


def test_numeric_formulas(page):
    assert check_all_statements(page.math, NOT_NUMERIC) >= 10


def test_mean_of_a_step(page):
    _has(
        page,
        "averages-hide",
        "\\bar\\ell_{[0, L)} = \\frac{F\\,a + (L - F)\\,b}{L} = a + (b - a)\\,\\frac{L - F}{L}",
    )
    a, b = 1.2, 2.0
    for F, L in [(64, 128), (64, 512), (50, 300), (64, 64 * 100)]:
        curve = torch.cat([torch.full((F,), a), torch.full((L - F,), b)]).double()
        expected = a + (b - a) * (L - F) / L
        assert math.isclose(bucket_means(curve, [(0, L)]).item(), expected, rel_tol=1e-6)
        if L >= 2 * F:
            assert math.isclose(bucket_means(curve, [(L // 2, L)]).item(), b, rel_tol=1e-6)
    assert (128 - 64) / 128 == 1 / 2 and (512 - 64) / 512 == 7 / 8  # "half" and "7/8"


def test_early_token_curse(page):
    _has(page, "averages-hide", "\\bar\\ell_{[0, L)} = \\ell_\\infty + e\\,\\frac{s}{L}")
    base, extra, s = 1.5, 2.0, 10
    for L in (20, 100, 1000):
        curve = torch.full((L,), base)
        curve[:s] += extra
        assert math.isclose(curve.double().mean().item(), base + extra * s / L, rel_tol=1e-6)


def test_detection_delay(page):
    _has(
        page,
        "failure-point",
        "F_\\delta = F + \\Big\\lfloor \\frac{w\\,\\delta}{b - a} \\Big\\rfloor",
    )
    T = 64
    for a, b, delta, window in [(1.2, 2.0, 0.1, 20), (1.0, 1.5, 0.07, 32), (2.0, 4.0, 0.3, 9)]:
        curve = torch.cat([torch.full((T,), a), torch.full((7 * T,), b)]).double()
        found = failure_position(curve, T, tolerance=delta, window=window)
        assert found == T + math.floor(window * delta / (b - a)), (a, b, delta, window)
    # The reference is [T/2, T): a high loss at the first positions does not count.
    curve = torch.cat([torch.linspace(5.0, 1.0, 16), torch.ones(48), torch.full((64,), 1.5)])
    assert failure_position(curve, 64, tolerance=0.2, window=4) == 64 + 1


def test_needle_distance_is_the_task_layout(page):
    _has(page, "retrieval-by-depth", "m = (L - k) - (w + 2) = L - k - 2 - w")
    task = PasskeyTask()
    k = task.n_digits
    for L in (32, 64, 256):
        for depth in (0.0, 0.25, 0.5, 0.75, 1.0):
            x, y = task.eval_batch("val", 2, L, depth=depth)
            answers = (y[0] >= 0).nonzero().flatten().tolist()
            assert answers == list(range(L - k, L)), "digits are predicted from L - k on"
            assert x[0, L - k] == 3, "QUERY sits at L - k"
            marks = (x[0] == 2).nonzero().flatten().tolist()  # MARK, then the needle's digits
            assert len(marks) == 1
            first_digit = marks[0] + 1
            assert x[0, first_digit] == y[0, L - k], "the needle holds the first digit"
            assert needle_distance(L, depth) == (L - k) - first_digit
    assert needle_distance(256, 0.0) == 256 - k - 2 and needle_distance(256, 1.0) == k
    assert round(0.5 * (256 - 12)) == 122 and 256 - 5 - 2 - 122 == 127
    assert 10.0**-k == 1e-5  # chance of a whole key


def test_cost_of_attention(page):
    _has(page, "memory-and-latency", "\\frac{2\\,L\\,d}{12\\,d^2} = \\frac{L}{6\\,d}")
    text = page.part("memory-and-latency").text
    assert "$64/768 \\approx 0.083$" in text and "$512/768 \\approx 0.667$" in text
    assert "$L = 6d = 768$" in text
    # 12 d^2 multiply-adds per token and layer: the Mini-GPT's own matrices, counted.
    model = GPT(GPTConfig(vocab_size=10, n_layer=1, n_embd=128, positional="none"))
    block = model.blocks[0]
    matrices = [block.attn.c_attn, block.attn.c_proj, block.mlp.c_fc, block.mlp.c_proj]
    assert sum(m.weight.numel() for m in matrices) == 12 * 128**2
    assert 4 * 512**2 * 4 == 2**22 and "4 MiB" in text


def test_what_is_new_for_t5(page):
    [table] = page.part("what-is-new").tables
    assert [row[0] for row in table[1:]][-1] == "T5"
    # T5's defaults (32 buckets, max_distance 128) trained at T = 64: the distances between T and
    # max_distance reach buckets never seen in training; past 128, the last bucket.
    distances = torch.arange(0, 400)
    buckets = relative_position_bucket(-distances, bidirectional=False)
    seen = set(buckets[:64].tolist())
    assert set(buckets[64:128].tolist()) - seen, "new buckets between T and max_distance"
    assert set(buckets[128:].tolist()) == {31}


def test_buckets(page):
    assert doubling_buckets(64, 512) == [(0, 64), (64, 128), (128, 256), (256, 512)]


def test_published_table(page):
    [table] = page.part("published-results").tables
    rows = {row[0]: [float(c) for c in row[1:]] for row in table[1:]}
    for short, long, ratio in rows.values():
        assert abs(long / short - ratio) <= 0.5 * 10 ** -decimals(f"{ratio}") + 1e-9
    sinusoidal = rows["sinusoidal"]
    assert math.isclose(math.log(sinusoidal[1] / sinusoidal[0]), 2.69, abs_tol=0.005)
    text = page.part("published-results").text
    assert "$121.6$" in text and "$279.7$" in text and "\\times 2.30" in text
    assert abs(279.7 / 121.6 - 2.30) < 0.005 and 2048 / 128 == 16


def test_worked_example(page):
    part = page.part("worked-example")
    text = part.text
    assert "$R = 256 - 12 = 244$" in text and "$w = 122$" in text
    assert ", $249$" in text and ", $5$" in text
    assert needle_distance(256, 0.0) == 249 and needle_distance(256, 1.0) == 5


def test_code_block_runs_and_prints_what_the_page_shows():
    # One language is enough: the parity test makes both pages' code identical.
    assert run_code_blocks(pages(LESSON)["es"]) == 1
