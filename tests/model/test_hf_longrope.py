"""The course's ``longrope_scaling`` against ``transformers``' own (``ROPE_INIT_FUNCTIONS
["longrope"]``, the one Phi-3, Phi-3.5 and Phi-4-mini use) on configurations built here, offline:
Phi-3-family shapes (``Phi3Config``: 128k context from 4k, ``factor`` left for transformers to
compute from the two lengths, partial rotation as in Phi-4-mini) and Llama-style ones with every
option, each below, at and past the original length. Factors are made up, rising from pair 0 to the
slowest pair as a search with LongRoPE's constraint gives them; nothing is downloaded."""

from __future__ import annotations

import itertools

import pytest
import torch
from transformers import LlamaConfig, Phi3Config, Phi3ForCausalLM
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.utils import logging

from minimodel.hf_llama import scaling_from_rope_parameters
from minimodel.positional import scaling

logging.set_verbosity_error()  # transformers warns that Phi-3's configs have no `factor`


def rising(pairs: int, top: float, seed: int) -> list[float]:
    """``pairs`` factors from about 1 up to about ``top``, non-decreasing, with a seeded wobble."""
    g = torch.Generator().manual_seed(seed)
    steps = torch.rand(pairs, generator=g, dtype=torch.float64) ** 2
    curve = 1 + (top - 1) * (steps.cumsum(0) - steps[0]) / (steps.sum() - steps[0])
    return [round(v, 4) for v in curve.tolist()]


# Phi-3 family shapes: (hidden_size, heads, partial_rotary_factor); base 1e4, 4096 -> 131072
PHI3_SHAPES = {
    "phi3-mini-128k": (3072, 32, 1.0),  # 96 dimensions per head, 48 pairs (also Phi-3.5-mini)
    "phi3-medium-128k": (5120, 40, 1.0),  # 128 per head, 64 pairs
    "phi4-mini": (3072, 24, 0.75),  # 128 per head, 96 of them rotate: 48 pairs
}


def phi3_configs():
    for (name, (hidden, heads, partial)), seed, explicit in itertools.product(
            PHI3_SHAPES.items(), (0, 1, 2), (False, True)):
        pairs = int(hidden // heads * partial) // 2
        parameters = {"rope_type": "longrope", "rope_theta": 10000.0,
                      "short_factor": rising(pairs, 2.5, seed),
                      "long_factor": rising(pairs, 60.0, seed + 10)}
        if explicit:
            parameters["factor"] = 32.0
        config = Phi3Config(hidden_size=hidden, num_attention_heads=heads,
                            num_key_value_heads=heads, partial_rotary_factor=partial,
                            max_position_embeddings=131072,
                            original_max_position_embeddings=4096, rope_parameters=parameters)
        yield f"{name}-seed{seed}{'-factor' if explicit else ''}", config


def llama_configs():
    grid = itertools.product((16, 32, 64, 128), (10000.0, 500000.0), (64, 2048),
                             (None, 8.0), (None, 1.3))
    for k, (head_dim, base, original, factor, attention) in enumerate(grid):
        if k % 2:  # half of the grid: 32 configurations, every value of each option
            continue
        pairs = head_dim // 2
        parameters = {"rope_type": "longrope", "rope_theta": base,
                      "original_max_position_embeddings": original,
                      "short_factor": rising(pairs, 1.5, k), "long_factor": rising(pairs, 12.0, k)}
        if factor is not None:
            parameters["factor"] = factor
        if attention is not None:
            parameters["attention_factor"] = attention
        config = LlamaConfig(hidden_size=4 * head_dim, num_attention_heads=4,
                             max_position_embeddings=16 * original, rope_parameters=parameters)
        yield f"llama-{head_dim}-{base:g}-{original}-{factor}-{attention}", config


# plus s = 1 (no extension: attention factor 1) and lists of ones (plain RoPE)
def edge_configs():
    for head_dim, ones in itertools.product((32, 96), (False, True)):
        pairs = head_dim // 2
        factors = [1.0] * pairs if ones else rising(pairs, 4.0, head_dim)
        config = LlamaConfig(hidden_size=4 * head_dim, num_attention_heads=4,
                             max_position_embeddings=1024,
                             rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0,
                                              "original_max_position_embeddings": 1024,
                                              "short_factor": factors, "long_factor": factors})
        yield f"edge-{head_dim}-{'ones' if ones else 'rising'}", config


CONFIGS = [*phi3_configs(), *llama_configs(), *edge_configs()]


def test_at_least_fifty_configurations_and_phi3s_among_them():
    assert len(CONFIGS) >= 50
    assert sum(name.startswith("phi") for name, _ in CONFIGS) == 18


@pytest.mark.parametrize(("name", "config"), CONFIGS, ids=[name for name, _ in CONFIGS])
def test_longrope_equals_transformers(name, config):
    parameters = config.rope_parameters
    original = parameters["original_max_position_embeddings"]
    head_dim = config.hidden_size // config.num_attention_heads
    for seq_len in (None, 1, original, original + 1, 4 * original):
        theirs, their_factor = ROPE_INIT_FUNCTIONS["longrope"](config, "cpu", seq_len=seq_len)
        ours, our_factor = scaling_from_rope_parameters(
            scaling, parameters, head_dim, max_position_embeddings=config.max_position_embeddings,
            seq_len=seq_len)
        assert ours.dtype == torch.float32 and ours.shape == theirs.shape
        torch.testing.assert_close(ours, theirs.float(), rtol=1e-6, atol=0)
        assert our_factor == pytest.approx(their_factor, rel=1e-12), seq_len


def test_a_tiny_phi3_switches_its_frequencies_where_the_course_does():
    """A random Phi-3 (2 layers, 4 heads of 16, L0 = 32, s = 8) in eval mode: after a forward
    pass of at most 32 tokens its rotary embedding holds the short table, after a longer one the
    long table, and its attention scaling is the course's attention factor."""
    parameters = {"rope_type": "longrope", "rope_theta": 10000.0,
                  "short_factor": rising(8, 1.5, 3), "long_factor": rising(8, 9.0, 4)}
    config = Phi3Config(vocab_size=128, hidden_size=64, intermediate_size=128,
                        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
                        max_position_embeddings=256, original_max_position_embeddings=32,
                        rope_parameters=parameters, pad_token_id=0, bos_token_id=1,
                        eos_token_id=2)
    torch.manual_seed(0)
    model = Phi3ForCausalLM(config).eval()
    rotary = model.model.rotary_emb
    for length in (32, 33, 32):
        with torch.no_grad():
            model(torch.arange(length)[None] % 128)
        ours, factor = scaling.longrope_scaling(16, 10000.0, factor=8.0, original_max_len=32,
                                                seq_len=length, **{
                                                    k: parameters[k]
                                                    for k in ("short_factor", "long_factor")})
        torch.testing.assert_close(rotary.inv_freq, ours, rtol=1e-6, atol=0)
        assert rotary.attention_scaling == pytest.approx(factor, rel=1e-12)
