"""Generating text with a trained Mini-GPT, one token at a time through a KV cache.

The prompt is fed once (prefill); then each new token is fed alone, at position ``cache.length``,
and attends to the cached keys and values. For every encoding this gives exactly the logits of
running the whole sequence again, at a fraction of the cost. The one exception is RoPE with
dynamic NTK scaling past its original length: its frequencies grow with the length, and the
cached keys keep the ones they were rotated with (lesson 18.02).
"""

from __future__ import annotations

import argparse
import sys

import torch

from minimodel.checkpoint import load_model
from minimodel.data import load_data
from minimodel.data.text import BOS, CharVocab
from minimodel.device import DEVICES, autocast, resolve_device
from minimodel.kv_cache import KVCache
from minimodel.model import GPT


@torch.no_grad()
def generate(
    model: GPT,
    idx: torch.Tensor,
    max_new_tokens: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
) -> torch.Tensor:
    """Continue each sequence of ``idx`` ``(B, T0)`` by ``max_new_tokens`` sampled tokens.

    Args:
        temperature: divides the logits; ``0`` means greedy (argmax).
        top_k: sample only among the ``top_k`` most likely tokens.
        generator: random generator for sampling (on the CPU), for reproducible samples.
        use_cache: ``False`` recomputes the whole sequence at every step (same result, slower).

    Returns:
        ``(B, T0 + max_new_tokens)`` token ids.
    """
    model.hooks.check_length(idx.size(1) + max_new_tokens)
    device = idx.device
    cache = KVCache(model.config.n_layer) if use_cache else None
    chunk = idx
    for _ in range(max_new_tokens):
        with autocast(device):
            logits, _ = model(chunk if use_cache else idx, cache=cache)
        logits = logits[:, -1].float()
        if temperature == 0:
            next_id = logits.argmax(-1, keepdim=True)
        else:
            logits = logits / temperature
            if top_k is not None:
                kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, -1:]
                logits = logits.masked_fill(logits < kth, float("-inf"))
            probs = torch.softmax(logits, dim=-1).cpu()
            next_id = torch.multinomial(probs, 1, generator=generator).to(device)
        idx = torch.cat([idx, next_id], dim=1)
        chunk = next_id
    return idx


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkpoint", help="checkpoint.pt written by `minimodel train`")
    parser.add_argument("--prompt", default="def ", help="start of the text / inicio del texto")
    parser.add_argument("--tokens", type=int, default=200, help="new tokens / tokens nuevos")
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--top-k", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-cache", action="store_true", help="recompute without KV cache")
    parser.add_argument("--device", choices=DEVICES, default="auto")


def run(args: argparse.Namespace) -> int:
    device = resolve_device(args.device)
    model, state = load_model(args.checkpoint, device)
    vocab = CharVocab(state["vocab"]) if state.get("vocab") else None
    if vocab is None:  # a synthetic task: no text prompt, show the tokens
        data = load_data(state["data"])
        prompt = torch.tensor([[BOS]])
        decode = data.decode
    else:
        prompt = torch.tensor([[BOS, *vocab.encode(args.prompt).tolist()]])
        decode = vocab.decode
    generator = torch.Generator().manual_seed(args.seed)
    out = generate(
        model,
        prompt.to(device),
        args.tokens,
        temperature=args.temperature,
        top_k=args.top_k,
        generator=generator,
        use_cache=not args.no_cache,
    )
    sys.stdout.write(decode(out[0].tolist()) + "\n")
    return 0
