"""Cached decoding equals the full forward pass, for every encoding and any way of chunking."""

import pytest
import torch
from conftest import tiny_model
from hypothesis import given, settings
from hypothesis import strategies as st

from minimodel.generate import generate
from minimodel.kv_cache import KVCache

ATOL = 2e-5  # float32; the two paths differ only in the order of floating-point sums


def cached_logits(model, idx, cuts):
    """Feed ``idx`` in chunks ending at ``cuts`` through one KV cache; concatenate the logits."""
    cache, out, start = KVCache(model.config.n_layer), [], 0
    for end in [*cuts, idx.size(1)]:
        if end > start:
            out.append(model(idx[:, start:end], cache=cache)[0])
            start = end
    assert cache.length == idx.size(1)
    return torch.cat(out, dim=1)


@torch.no_grad()
def test_token_by_token_equals_full_forward(encoding):
    model = tiny_model(encoding)
    idx = torch.randint(0, 40, (2, 24), generator=torch.Generator().manual_seed(1))
    full, _ = model(idx)
    step_by_step = cached_logits(model, idx, list(range(1, 24)))
    torch.testing.assert_close(step_by_step, full, atol=ATOL, rtol=0)


@torch.no_grad()
def test_chunked_prefill_equals_full_forward(encoding):
    model = tiny_model(encoding)
    idx = torch.randint(0, 40, (2, 30), generator=torch.Generator().manual_seed(2))
    full, _ = model(idx)
    torch.testing.assert_close(cached_logits(model, idx, [7, 8, 19, 27]), full, atol=ATOL, rtol=0)


@pytest.mark.parametrize(
    "options",
    [
        {"positional": "rope", "rope_convention": "half"},
        {"positional": "rope", "rope_dim": 4},  # partial rotation
        {"positional": "rope", "rope_scaling": "linear", "rope_scaling_factor": 4.0},
        {"positional": "rope", "rope_scaling": "yarn", "rope_scaling_factor": 4.0},
        {"positional": "alibi", "n_head": 6, "n_embd": 48},  # not a power of two
        {"positional": "t5", "t5_num_buckets": 8, "t5_max_distance": 128},
    ],
    ids=lambda o: "-".join(str(v) for v in o.values()),
)
@torch.no_grad()
def test_variants_decode_exactly(options):
    model = tiny_model(**options)
    idx = torch.randint(0, 40, (1, 32), generator=torch.Generator().manual_seed(3))
    full, _ = model(idx)
    torch.testing.assert_close(cached_logits(model, idx, [5, 6, 20]), full, atol=ATOL, rtol=0)


@pytest.mark.parametrize("scaling", ["dynamic_ntk", "longrope"])
@torch.no_grad()
def test_length_dependent_scalings_decode_exactly_only_up_to_the_original_length(scaling):
    """Dynamic NTK's and LongRoPE's frequencies depend on the current length: past the original
    length the cached keys keep the frequencies they were rotated with, so cached decoding is no
    longer the full pass (both are what Hugging Face's dynamic and longrope scalings do; lesson
    18.02)."""
    options = {"rope_scaling": scaling, "rope_scaling_factor": 2.0,
               "rope_original_max_len": 12}
    model = tiny_model("rope", **options)
    for block in model.blocks:  # sharper attention, so that the rotation shows in the logits
        block.attn.c_attn.weight.mul_(8)
    idx = torch.randint(0, 40, (1, 24), generator=torch.Generator().manual_seed(4))
    full, _ = model(idx)
    step_by_step = cached_logits(model, idx, list(range(1, 24)))
    within = model(idx[:, :12])[0]
    torch.testing.assert_close(step_by_step[:, :12], within, atol=ATOL, rtol=0)
    assert (step_by_step[:, 12:] - full[:, 12:]).abs().amax(-1).min() > 1e-3


@settings(max_examples=15, deadline=None)
@given(
    encoding=st.sampled_from(["sinusoidal", "rope", "alibi", "t5"]),
    cuts=st.lists(st.integers(1, 19), max_size=6).map(lambda c: sorted(set(c))),
)
@torch.no_grad()
def test_any_chunking_gives_the_same_logits(encoding, cuts):
    model = tiny_model(encoding, n_layer=1)
    idx = torch.arange(20).remainder(40)[None]
    full, _ = model(idx)
    torch.testing.assert_close(cached_logits(model, idx, cuts), full, atol=ATOL, rtol=0)


def test_greedy_generation_is_the_same_with_and_without_cache(encoding):
    model = tiny_model(encoding)
    prompt = torch.randint(0, 40, (2, 5), generator=torch.Generator().manual_seed(4))
    with_cache = generate(model, prompt, 20, temperature=0)
    without = generate(model, prompt, 20, temperature=0, use_cache=False)
    assert torch.equal(with_cache, without)
    assert with_cache.shape == (2, 25) and torch.equal(with_cache[:, :5], prompt)
