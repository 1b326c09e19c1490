"""Swapping the encoding changes the encoding's parameters and nothing else."""

import pytest
import torch
from conftest import TINY, tiny_model

from minimodel.encodings import ENCODINGS
from minimodel.model import GPT, GPTConfig


def test_parameter_counts_differ_by_exactly_the_encoding():
    counts = {e: tiny_model(e).num_parameters() for e in ENCODINGS}
    base = counts["none"]
    assert counts["sinusoidal"] == counts["rope"] == counts["alibi"] == base  # no parameters
    assert counts["learned"] - base == TINY["block_size"] * TINY["n_embd"]  # one row per position
    assert counts["t5"] - base == 32 * TINY["n_head"]  # one scalar per (bucket, head)


def test_same_seed_same_weights_whatever_the_encoding():
    reference = tiny_model("none").state_dict()
    for encoding in ENCODINGS:
        state = tiny_model(encoding).state_dict()
        extra = set(state) - set(reference)
        assert all(name.startswith("hooks.") for name in extra), extra
        for name, tensor in reference.items():
            assert torch.equal(state[name], tensor), (encoding, name)


def test_embeddings_are_tied():
    model = tiny_model("rope")
    assert model.lm_head.weight is model.wte.weight


@pytest.mark.parametrize("encoding", ["learned", "t5"])
def test_encoding_parameters_get_gradients(encoding):
    model = tiny_model(encoding).train()
    idx = torch.randint(0, 40, (2, 16))
    _, loss = model(idx, idx)
    loss.backward()
    grads = [p.grad for n, p in model.named_parameters() if n.startswith("hooks.")]
    assert grads and all(g is not None and g.abs().sum() > 0 for g in grads)


def test_every_encoding_trains(encoding):
    """One optimiser step lowers the loss on a fixed batch (gradients flow through the hook)."""
    model = tiny_model(encoding).train()
    optimizer = model.optimizer(lr=3e-3, weight_decay=0.0)
    idx = torch.randint(0, 40, (4, 32), generator=torch.Generator().manual_seed(5))
    losses = []
    for _ in range(3):
        _, loss = model(idx[:, :-1], idx[:, 1:])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_unknown_encoding_is_a_bilingual_error():
    with pytest.raises(ValueError, match=r"\[es\].*positional.*\n\[en\].*positional"):
        GPTConfig(positional="no-such-encoding")
    with pytest.raises(ValueError, match="rope_convention"):
        GPTConfig(rope_convention="neox")
    with pytest.raises(ValueError, match="n_head"):
        GPT(GPTConfig(n_embd=30, n_head=4))
