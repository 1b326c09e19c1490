"""The course's RoPE inside a Hugging Face Llama (``minimodel.hf_llama``, labs 17.03 and 18.02):
equal logits with the half convention and after the weight permutation, other logits with the
interleaved one, and the scalings equal to ``transformers``' own ``rope_parameters`` path.
Offline: a config and random weights, never the hub."""

from __future__ import annotations

import copy

import pytest
import torch
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama import modeling_llama

from grader.hidden import lab_18_02
from minimodel.hf_llama import (
    course_rope_logits,
    llama_logits,
    rope_in_llama,
    scaling_from_rope_parameters,
    tiny_config,
    tiny_llama,
)
from minimodel.positional import rope, scaling

TOKENS = torch.arange(24).reshape(2, 12) * 37 % 128


@pytest.fixture(scope="module")
def llama():
    return tiny_llama(seed=0)


@pytest.fixture(scope="module")
def hf_logits(llama):
    return llama_logits(llama, TOKENS)


def test_tiny(llama):
    config = llama.config
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads,
            config.head_dim, config.vocab_size) == (2, 64, 4, 16, 128)


def test_half_convention_gives_the_models_logits(llama, hf_logits):
    assert hf_logits.shape == (2, 12, 128) and hf_logits.abs().max() > 1.0
    torch.testing.assert_close(llama_logits(llama, TOKENS, rope, "half"), hf_logits,
                               rtol=1e-5, atol=1e-4)


def test_interleaved_convention_changes_the_logits(llama, hf_logits):
    assert (llama_logits(llama, TOKENS, rope, "interleaved") - hf_logits).abs().max() > 0.1


def test_permuted_weights_run_with_the_interleaved_convention(llama, hf_logits):
    """The notebook's conversion: rows of q_proj and k_proj reordered inside each head by the
    inverse of rope_permutation, then Meta's convention."""
    n_heads, head_dim = llama.config.num_attention_heads, llama.config.head_dim
    back = torch.argsort(rope.rope_permutation(head_dim))
    meta = copy.deepcopy(llama)
    with torch.no_grad():
        for layer in meta.model.layers:
            for proj in (layer.self_attn.q_proj, layer.self_attn.k_proj):
                proj.weight.copy_(proj.weight.reshape(n_heads, head_dim, -1)[:, back]
                                  .reshape(n_heads * head_dim, -1))
    torch.testing.assert_close(llama_logits(meta, TOKENS, rope, "interleaved"), hf_logits,
                               rtol=1e-5, atol=1e-4)
    assert (llama_logits(meta, TOKENS, rope, "half") - hf_logits).abs().max() > 0.1


def test_the_graded_logits(hf_logits):
    """What the grader computes from the student's module (lab 17.03, item ``llama``)."""
    torch.testing.assert_close(course_rope_logits(rope, TOKENS), hf_logits, rtol=1e-5, atol=1e-4)
    converted = course_rope_logits(rope, TOKENS, convention="interleaved", converted=True)
    torch.testing.assert_close(converted, hf_logits, rtol=1e-5, atol=1e-4)
    assert (course_rope_logits(rope, TOKENS, convention="interleaved") - hf_logits).abs().max() \
        > 0.1


def test_the_model_gets_its_own_rope_back(llama, hf_logits):
    own = llama.model.rotary_emb, modeling_llama.apply_rotary_pos_emb
    with pytest.raises(RuntimeError), rope_in_llama(llama, rope, "interleaved"):
        assert llama.model.rotary_emb is not own[0]
        raise RuntimeError
    assert (llama.model.rotary_emb, modeling_llama.apply_rotary_pos_emb) == own
    torch.testing.assert_close(llama_logits(llama, TOKENS), hf_logits, rtol=0, atol=0)


# Configurations shaped like real ones (Llama 3.1: base 5e5, factor 8, L0 8192; a YaRN model:
# base 1e6, factor 4, L0 32768), the tiny Llama's, and the options each method has.
ROPE_PARAMETERS = [
    (128, 131072, {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                   "original_max_position_embeddings": 8192, "low_freq_factor": 1.0,
                   "high_freq_factor": 4.0}),
    (16, 256, {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 4.0,
               "original_max_position_embeddings": 64, "low_freq_factor": 2.0,
               "high_freq_factor": 8.0}),
    (128, 131072, {"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 4.0,
                   "original_max_position_embeddings": 32768}),
    (16, 512, {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 8.0,
               "original_max_position_embeddings": 64, "beta_fast": 16.0, "beta_slow": 2.0}),
    (64, 4096, {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
                "original_max_position_embeddings": 1024, "truncate": False}),
    (32, 1024, {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
                "original_max_position_embeddings": 256, "attention_factor": 1.3}),
]


# and the configurations 18.02's hidden item ``hf_config`` grades (its references are then
# transformers' own numbers)
HIDDEN = [(r, 4 * p["original_max_position_embeddings"], p) for r, p in lab_18_02.HF_CASES]


@pytest.mark.parametrize(("head_dim", "max_len", "parameters"), ROPE_PARAMETERS + HIDDEN,
                         ids=lambda v: v["rope_type"] if isinstance(v, dict) else str(v))
def test_scalings_equal_transformers_rope_parameters(head_dim, max_len, parameters):
    config = tiny_config(hidden_size=4 * head_dim, max_position_embeddings=max_len,
                         rope_parameters=dict(parameters))
    assert config.head_dim == head_dim
    theirs, their_factor = ROPE_INIT_FUNCTIONS[parameters["rope_type"]](config, "cpu")
    ours, our_factor = scaling_from_rope_parameters(scaling, parameters, head_dim)
    torch.testing.assert_close(ours, theirs.float(), rtol=1e-6, atol=0)
    assert our_factor == pytest.approx(their_factor, rel=1e-12)


def test_a_scaled_llama_runs_with_the_course_tables():
    """rope_parameters reach the model: its rotary embedding holds the course's YaRN table."""
    parameters = ROPE_PARAMETERS[3][2]
    model = tiny_llama(seed=1, max_position_embeddings=512, rope_parameters=dict(parameters))
    ours, factor = scaling_from_rope_parameters(scaling, parameters, 16)
    torch.testing.assert_close(model.model.rotary_emb.inv_freq, ours, rtol=1e-6, atol=0)
    assert model.model.rotary_emb.attention_scaling == pytest.approx(factor)
