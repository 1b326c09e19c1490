"""Your RoPE inside a real Hugging Face Llama (labs 17.03 and 18.02).

A tiny random ``LlamaForCausalLM`` is built from a ``LlamaConfig`` (nothing is downloaded: no
``from_pretrained``, no hub), and run with a course RoPE module (``minimodel.positional.rope``,
yours in the labs) in place of its rotary embedding. Hugging Face computes the layers'
``position_embeddings`` once per forward pass in ``model.model.rotary_emb`` and rotates the
queries and keys with ``apply_rotary_pos_emb`` (the half, "rotate-half", convention). Both are
replaced while :func:`rope_in_llama` is active: the rotary module by one that returns your
``rope_cos_sin`` tables, and the rotation by your ``apply_rotary`` in the convention you choose.
``apply_rotary_pos_emb`` is a module-level function that ``LlamaAttention.forward`` looks up at
call time, so it is swapped in ``modeling_llama`` and put back on exit.

:func:`scaling_from_rope_parameters` calls a course scaling (``minimodel.positional.scaling``)
with the parameters of a config's ``rope_parameters``, the dictionary from which Hugging Face's
``ROPE_INIT_FUNCTIONS`` compute theirs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import torch
from torch import nn

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a config and random weights: never the hub

from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402
from transformers.models.llama import modeling_llama  # noqa: E402

TINY = {"vocab_size": 128, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 4, "max_position_embeddings": 256}
# Random weights with a spread of 0.02 (Hugging Face's default) give near-uniform attention, where
# any rotation gives almost the same logits; 0.3 makes attention depend on the positions.
INIT_SPREAD = 0.3


def tiny_config(**overrides) -> LlamaConfig:
    """A ``LlamaConfig`` of 2 layers, hidden size 64, 4 heads of 16 dimensions, vocabulary 128,
    eager attention; ``overrides`` replace any field (``rope_parameters``, say)."""
    return LlamaConfig(**{**TINY, "initializer_range": INIT_SPREAD,
                          "attn_implementation": "eager", **overrides})


def tiny_llama(seed: int = 0, **overrides) -> LlamaForCausalLM:
    """A random ``LlamaForCausalLM`` of :func:`tiny_config` (float32, eval mode), the same for
    the same ``seed``."""
    torch.manual_seed(seed)
    return LlamaForCausalLM(tiny_config(**overrides)).eval()


class CourseRotary(nn.Module):
    """Stands in for ``LlamaRotaryEmbedding``: ``position_embeddings`` are ``rope``'s tables.

    Args:
        rope: a course RoPE module (``rope_frequencies``, ``rope_cos_sin``).
        head_dim: the head dimension ``D`` (all of it rotates).
        base: the RoPE base (``config.rope_parameters["rope_theta"]``).
    """

    def __init__(self, rope: ModuleType, head_dim: int, base: float) -> None:
        super().__init__()
        self.rope = rope
        self.inv_freq = rope.rope_frequencies(head_dim, base)  # (D/2,)

    def forward(self, x: torch.Tensor, position_ids: torch.Tensor):
        """``(cos, sin)`` of shape ``(B, T, D/2)``, float32, for the hidden states ``x (B, T, C)``
        at ``position_ids (1 or B, T)`` (Hugging Face passes one row for the whole batch)."""
        positions = position_ids.expand(x.shape[0], -1)
        return self.rope.rope_cos_sin(positions, self.inv_freq.to(positions.device))


@contextmanager
def rope_in_llama(model: LlamaForCausalLM, rope: ModuleType, convention: str = "half",
                  reorder: torch.Tensor | None = None) -> Iterator[LlamaForCausalLM]:
    """Run ``model`` with ``rope`` in place of its rotary embedding, in ``convention``.

    Args:
        model: a ``LlamaForCausalLM``; its weights are not changed.
        rope: a course RoPE module (``rope_frequencies``, ``rope_cos_sin``, ``apply_rotary``).
        convention: ``"half"`` (Hugging Face's) or ``"interleaved"`` (Meta's).
        reorder: ``(D,)`` indices: each head's query and key dimensions are taken in this order
            before rotating, which is what permuting the rows of ``q_proj`` and ``k_proj`` inside
            every head does (``None``: as they are).

    Yields:
        ``model``, whose forward passes use ``rope`` until the block ends.
    """
    config, inner = model.config, model.model
    head_dim = config.head_dim

    def rotate(q, k, cos, sin, unsqueeze_dim=1):  # HF's signature; q, k (B, H, T, D)
        if reorder is not None:
            q, k = q[..., reorder], k[..., reorder]
        return (rope.apply_rotary(q, cos, sin, convention=convention),
                rope.apply_rotary(k, cos, sin, convention=convention))

    hf_rotary, hf_rotate = inner.rotary_emb, modeling_llama.apply_rotary_pos_emb
    inner.rotary_emb = CourseRotary(rope, head_dim, config.rope_parameters["rope_theta"])
    modeling_llama.apply_rotary_pos_emb = rotate
    try:
        yield model
    finally:
        inner.rotary_emb, modeling_llama.apply_rotary_pos_emb = hf_rotary, hf_rotate


def llama_logits(model: LlamaForCausalLM, tokens: torch.Tensor, rope: ModuleType | None = None,
                 convention: str = "half", reorder: torch.Tensor | None = None) -> torch.Tensor:
    """The logits of ``model`` on ``tokens (B, T)``: ``(B, T, vocab_size)`` float32; with its own
    rotary embedding when ``rope`` is ``None``, else with ``rope`` (:func:`rope_in_llama`)."""
    with torch.no_grad():
        if rope is None:
            return model(tokens).logits
        with rope_in_llama(model, rope, convention, reorder):
            return model(tokens).logits


def scaling_from_rope_parameters(scaling: ModuleType, rope_parameters: dict, head_dim: int, *,
                                 max_position_embeddings: int | None = None,
                                 seq_len: int | None = None) -> tuple[torch.Tensor, float]:
    """A course scaling called with a config's ``rope_parameters`` (``"yarn"``, ``"llama3"`` or
    ``"longrope"``).

    Hugging Face's names become the course's: ``rope_theta`` is ``base``,
    ``original_max_position_embeddings`` is ``original_max_len``, and ``factor``, ``beta_fast``,
    ``beta_slow``, ``truncate``, ``attention_factor``, ``low_freq_factor``, ``high_freq_factor``,
    ``short_factor`` and ``long_factor`` keep theirs. A ``partial_rotary_factor`` rotates its
    share of ``head_dim``. Without a ``factor`` (Phi-3's configs), it is
    ``max_position_embeddings / original_max_position_embeddings``, as transformers computes it.

    Args:
        seq_len: the current length, for the methods that depend on it (``"longrope"`` switches
            to its long factors past the original length); ``None``: the original length.

    Returns:
        ``(inv_freq, attention_factor)`` of ``scaling.SCALINGS[rope_type]``: ``(rotary_dim // 2,)``
        float32 and a float, to compare with ``ROPE_INIT_FUNCTIONS[rope_type](config)``.
    """
    params = dict(rope_parameters)
    kind = params.pop("rope_type")
    original = params["original_max_position_embeddings"]
    if params.get("factor") is None and max_position_embeddings is not None:
        params["factor"] = max_position_embeddings / original
    options = {name: params[name] for name in (
        "factor", "beta_fast", "beta_slow", "truncate", "attention_factor", "low_freq_factor",
        "high_freq_factor", "short_factor", "long_factor") if params.get(name) is not None}
    if seq_len is not None:
        options["seq_len"] = seq_len
    rotary_dim = int(head_dim * params.get("partial_rotary_factor", 1.0))
    return scaling.SCALINGS[kind](rotary_dim, params["rope_theta"], original_max_len=original,
                                  **options)


def course_rope_logits(rope: ModuleType, tokens: torch.Tensor, *, seed: int = 0,
                       convention: str = "half", converted: bool = False) -> torch.Tensor:
    """The logits of ``tiny_llama(seed)`` on ``tokens (B, T)`` run with ``rope``:
    ``(B, T, vocab_size)`` float32. ``converted=True``: each head's queries and keys are first
    put in the interleaved layout with ``torch.argsort(rope.rope_permutation(D))``, as a
    checkpoint converted back to Meta's layout would give them (lab 17.03, part 7)."""
    model = tiny_llama(seed)
    reorder = torch.argsort(rope.rope_permutation(model.config.head_dim)) if converted else None
    return llama_logits(model, tokens.long(), rope, convention, reorder)
