"""Attention through SDPA equals attention written out by hand, for every path the model takes."""

import importlib
import math

import pytest
import torch
from conftest import tiny_model, use_released_stub

from minimodel.hooks import causal_mask
from minimodel.kv_cache import KVCache


def test_causal_mask_is_aligned_to_the_end():
    mask = causal_mask(2, 5)  # queries at positions 3 and 4
    assert mask.tolist() == [[0, 0, 0, 0, -math.inf], [0, 0, 0, 0, 0]]
    assert torch.equal(causal_mask(4, 4), torch.full((4, 4), -math.inf).triu(1))
    assert torch.equal(causal_mask(1, 5), torch.zeros(1, 5))  # a new token sees every key


def test_a_chunk_after_a_cache_is_masked_by_the_students_lab_18_03(monkeypatch):
    cache_positions = importlib.import_module("minimodel.positional.cache_positions")
    calls = []

    def mask(cache_len, q_len, *, device=None):  # a student's causal_mask_after_cache
        calls.append((cache_len, q_len))
        return torch.full((q_len, cache_len + q_len), 7.0)

    monkeypatch.setattr(cache_positions, "causal_mask_after_cache", mask)
    assert torch.equal(causal_mask(2, 5), torch.full((2, 5), 7.0)) and calls == [(3, 2)]
    causal_mask(4, 4), causal_mask(1, 5)
    assert calls == [(3, 2)], "the square mask and one new token need no lab 18.03"


@torch.no_grad()
def test_a_stub_lab_18_03_stops_a_chunk_after_a_cache_only(monkeypatch):
    use_released_stub(monkeypatch, "cache_positions")
    model = tiny_model("t5")
    x = torch.randint(model.config.vocab_size, (2, 8), generator=torch.Generator().manual_seed(0))
    cache = KVCache(model.config.n_layer)
    model(x[:, :5], cache=cache)  # a prompt: the square mask
    model(x[:, 5:6], cache=cache)  # one new token
    with pytest.raises(NotImplementedError) as raised:
        model(x[:, 6:8], cache=cache)
    said = str(raised.value)
    assert "[es] Un trozo de varios tokens tras la caché KV se enmascara con tu función " \
        "causal_mask_after_cache de cache_positions.py (laboratorio 18.03), que aún no está " \
        "completa" in said
    assert "[en] A chunk of several tokens after a KV cache is masked with your " \
        "causal_mask_after_cache of cache_positions.py (lab 18.03), which is not complete " \
        "yet" in said


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
