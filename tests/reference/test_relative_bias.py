"""The reference T5 buckets, relative-bias module and Swin index against hand-worked tables."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from minimodel.positional.relative_bias import (
    RelativePositionBias,
    relative_position_bucket,
    swin_relative_index,
)

BILINGUAL = r"(?s)\[es\].*\[en\]"

# Research note B, section 6 (rel = key - query, 32 buckets, max distance 128).
RELATIVE = [-1000, -128, -64, -32, -16, -9, -8, -7, -1, 0, 1, 7, 8, 16, 32, 64, 127, 128, 1000]
BIDIRECTIONAL = [15, 15, 14, 12, 10, 8, 8, 7, 1, 0, 17, 23, 24, 26, 28, 30, 31, 31, 31]
CAUSAL = [31, 31, 26, 21, 16, 9, 8, 7, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]


def by_hand(rel: int, bidirectional: bool, num_buckets: int = 32, max_distance: int = 128) -> int:
    """One bucket with Python integers and float32 arithmetic, the way T5 defines it."""
    offset = 0
    if bidirectional:
        num_buckets //= 2
        offset = num_buckets if rel > 0 else 0
        n = abs(rel)
    else:
        n = max(-rel, 0)
    exact = num_buckets // 2
    if n < exact:
        return offset + n
    f32 = torch.tensor(n / exact, dtype=torch.float32).log() / math.log(max_distance / exact)
    return offset + min(exact + int(f32 * (num_buckets - exact)), num_buckets - 1)


@pytest.mark.parametrize(("bidirectional", "table"), [(True, BIDIRECTIONAL), (False, CAUSAL)])
def test_buckets_match_the_table_worked_by_hand(bidirectional, table):
    rel = torch.tensor(RELATIVE)
    got = relative_position_bucket(rel, bidirectional=bidirectional)
    assert got.dtype == torch.long and got.tolist() == table
    assert [by_hand(r, bidirectional) for r in RELATIVE] == table


@settings(max_examples=60, deadline=None)
@given(
    rel=st.integers(-3000, 3000),
    bidirectional=st.booleans(),
    num_buckets=st.integers(4, 64),
    max_distance=st.integers(40, 1000),
)
def test_buckets_match_the_scalar_definition(rel, bidirectional, num_buckets, max_distance):
    got = relative_position_bucket(
        torch.tensor([rel]),
        bidirectional=bidirectional,
        num_buckets=num_buckets,
        max_distance=max_distance,
    )
    assert got.item() == by_hand(rel, bidirectional, num_buckets, max_distance)


@pytest.mark.parametrize("num_buckets", [4, 8, 32, 33])
@pytest.mark.parametrize("max_distance", [20, 128, 500])
def test_buckets_are_monotone_in_distance_and_in_range(num_buckets, max_distance):
    rel = torch.arange(-2000, 2001)
    for bidirectional in (True, False):
        if bidirectional and num_buckets // 2 // 2 >= max_distance:
            continue
        b = relative_position_bucket(
            rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
        )
        assert b.min() >= 0 and b.max() < num_buckets
        past = b[:2001].flip(0)  # rel = 0, -1, -2, ...: distance growing
        assert torch.all(past.diff() >= 0)
        future = b[2000:]  # rel = 0, 1, 2, ...
        if bidirectional:
            assert torch.all(future[1:].diff() >= 0) and future[1:].min() >= num_buckets // 2
            assert past.max() < num_buckets // 2  # the two sides never share a bucket
        else:
            assert torch.all(future == 0)  # every future key falls in bucket 0
        # all distances past max_distance share the last bucket of their side
        assert past[max_distance:].unique().numel() == 1


def test_buckets_keep_shape_and_device():
    rel = torch.arange(-6, 6).view(3, 4)
    assert relative_position_bucket(rel, bidirectional=True).shape == (3, 4)
    meta = torch.zeros(2, 5, dtype=torch.long, device="meta")
    assert relative_position_bucket(meta, bidirectional=False).device.type == "meta"
    int32 = torch.tensor(-40, dtype=torch.int32)  # 16 + int(log(40/16) / log(8) * 16) = 23
    assert relative_position_bucket(int32, bidirectional=False).item() == 23 == by_hand(-40, False)


# ---------------------------------------------------------------------------------- module


def test_module_looks_up_the_bucket_of_key_minus_query_per_head():
    module = RelativePositionBias(3, bidirectional=True)
    bias = module(4, 6)  # queries at positions 2..5
    assert bias.shape == (3, 4, 6) and bias.dtype == torch.float32
    weight = module.bias.weight  # (num_buckets, H)
    for i in range(4):
        for j in range(6):
            bucket = by_hand(j - (2 + i), bidirectional=True)
            torch.testing.assert_close(bias[:, i, j], weight[bucket])


@settings(max_examples=25, deadline=None)
@given(k_len=st.integers(1, 50), q_len=st.integers(1, 50), bidirectional=st.booleans())
def test_module_decoding_rows_are_the_last_rows_of_the_full_bias(k_len, q_len, bidirectional):
    q_len = min(q_len, k_len)
    torch.manual_seed(0)
    module = RelativePositionBias(2, num_buckets=8, max_distance=20, bidirectional=bidirectional)
    full = module(k_len, k_len)
    assert torch.equal(module(q_len, k_len), full[:, -q_len:])
    # a relative bias depends only on key - query: constant along each diagonal
    if k_len > 1:
        assert torch.equal(full[:, 1:, 1:], full[:, :-1, :-1])


def test_module_has_one_parameter_per_bucket_and_head_and_learns():
    module = RelativePositionBias(4, num_buckets=32)
    assert sum(p.numel() for p in module.parameters()) == 32 * 4
    module(5, 5).sum().backward()
    assert module.bias.weight.grad is not None
    rel = torch.arange(5)[None] - torch.arange(5)[:, None]
    used = relative_position_bucket(rel, bidirectional=False)
    assert torch.equal(module.bias.weight.grad.abs().sum(1) > 0, torch.isin(torch.arange(32), used))


def test_module_follows_its_device():
    module = RelativePositionBias(2).to("meta")
    assert module(3, 4).device.type == "meta"


# ------------------------------------------------------------------------------------ Swin


def test_swin_2x2_index_matches_the_research_note():
    assert swin_relative_index(2, 2).tolist() == [
        [4, 3, 1, 0],
        [5, 4, 2, 1],
        [7, 6, 4, 3],
        [8, 7, 5, 4],
    ]


@pytest.mark.parametrize(("h", "w"), [(1, 1), (1, 3), (2, 3), (7, 7), (4, 2)])
def test_swin_index_against_the_original_construction(h, w):
    # Swin's code: coords, relative = coords[:, :, None] - coords[:, None, :], shift, scale, sum.
    coords = torch.stack(torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij"))
    flat = torch.flatten(coords, 1)
    relative = (flat[:, :, None] - flat[:, None, :]).permute(1, 2, 0).contiguous()
    relative[:, :, 0] += h - 1
    relative[:, :, 1] += w - 1
    relative[:, :, 0] *= 2 * w - 1
    want = relative.sum(-1)
    got = swin_relative_index(h, w)
    assert got.dtype == torch.long and torch.equal(got, want)
    assert got.min() == 0 and got.max() == (2 * h - 1) * (2 * w - 1) - 1
    centre = (h - 1) * (2 * w - 1) + (w - 1)
    assert torch.all(got.diagonal() == centre)
    # query - key: swapping query and key mirrors the offset around the centre
    assert torch.equal(got + got.T, torch.full_like(got, 2 * centre))


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: relative_position_bucket(torch.arange(3.0), bidirectional=True), ValueError),
        (lambda: relative_position_bucket([1, 2], bidirectional=True), TypeError),
        (lambda: relative_position_bucket(torch.arange(3), bidirectional=True, num_buckets=2), ValueError),  # noqa: E501
        (lambda: relative_position_bucket(torch.arange(3), bidirectional=False, max_distance=8, num_buckets=32), ValueError),  # noqa: E501
        (lambda: RelativePositionBias(0), ValueError),
        (lambda: RelativePositionBias(4, num_buckets=3, bidirectional=True), ValueError),
        (lambda: RelativePositionBias(4)(5, 3), ValueError),
        (lambda: RelativePositionBias(4)(0, 3), ValueError),
        (lambda: swin_relative_index(0, 2), ValueError),
        (lambda: swin_relative_index(2, 2.0), TypeError),
    ],
)
def test_bad_arguments_give_bilingual_errors(call, error):
    with pytest.raises(error, match=BILINGUAL):
        call()
