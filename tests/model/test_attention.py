"""Attention through SDPA equals attention written out by hand, for every path the model takes."""

import math

import pytest
import torch
from conftest import tiny_model

from minimodel.hooks import causal_mask


def test_causal_mask_is_aligned_to_the_end():
    mask = causal_mask(2, 5)  # queries at positions 3 and 4
    assert mask.tolist() == [[0, 0, 0, 0, -math.inf], [0, 0, 0, 0, 0]]
    assert torch.equal(causal_mask(4, 4), torch.full((4, 4), -math.inf).triu(1))


def manual_attention(model, x, layer=0):
    """Softmax attention of ``layer`` written out: scores / sqrt(d) + bias, causal mask, values."""
    attn, hooks = model.blocks[layer].attn, model.hooks
    B, T, C = x.shape
    H = attn.n_head
    q, k, v = attn.c_attn(x).split(C, dim=2)
    q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
    q, k = hooks.rotate(q, k, 0)
    scores = q @ k.transpose(-1, -2) / math.sqrt(C // H)  # (B, H, T, T)
    bias = hooks.attention_bias(T, T)
    scores = scores + (bias if bias is not None else causal_mask(T, T))
    y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, C)
    return attn.c_proj(y)


@pytest.mark.parametrize("encoding", ["none", "rope", "alibi", "t5"])
@torch.no_grad()
def test_sdpa_equals_manual_attention(encoding):
    model = tiny_model(encoding)
    x = torch.randn(2, 12, model.config.n_embd, generator=torch.Generator().manual_seed(0))
    bias = model.hooks.attention_bias(12, 12)
    got = model.blocks[0].attn(x, model.hooks, 0, bias, None, 0)
    torch.testing.assert_close(got, manual_attention(model, x), atol=1e-6, rtol=1e-5)


def test_bias_hooks_fold_in_the_causal_mask():
    for encoding in ("alibi", "t5"):
        bias = tiny_model(encoding).hooks.attention_bias(3, 7)  # (1, H, 3, 7)
        assert bias.shape == (1, 4, 3, 7)
        future = causal_mask(3, 7).isinf()
        assert bias[0][:, future].isinf().all() and bias[0][:, ~future].isfinite().all()
    assert tiny_model("rope").hooks.attention_bias(3, 7) is None  # fused causal path
