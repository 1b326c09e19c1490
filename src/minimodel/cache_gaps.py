"""How far a decode through a KV cache lands from the full pass, on a fresh Mini-GPT.

Given code that the grader runs in its sandbox on the student's encodings (lab 19.01): the model
imports the student's files by the encoding's name (``minimodel.positional``), so the gaps say
whether those files give a chunk fed after a cache the positions of the full pass. The decode
itself is an argument (the grader's, or the lab's ``cached_logits``, which is the student's to
write): nothing here feeds the tokens.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import torch

from minimodel.kv_cache import KVCache
from minimodel.model import GPT, GPTConfig

Decode = Callable[[GPT, torch.Tensor, int, KVCache], torch.Tensor]


def cache_gaps(module: ModuleType | None, decode: Decode, positional: str, tokens: torch.Tensor,
               prompt_lens: list[int], *, seed: int, **config) -> torch.Tensor:
    """Largest ``|decode - full pass|`` of ``GPT(GPTConfig(positional=positional, **config))``,
    built after ``torch.manual_seed(seed)``, in eval mode, on ``tokens`` ``(B, T)`` int64.

    ``decode(model, tokens, prompt_len, cache)`` gives the logits ``(B, T, vocab_size)`` through
    the new, empty ``cache``, once per prompt length. ``module`` (the probe group's student
    module, as a given case receives it) is not used: the model imports the student's files
    itself. Returns the gaps ``(len(prompt_lens),)``, float32, without gradients.
    """
    torch.manual_seed(seed)
    model = GPT(GPTConfig(positional=positional, **config)).eval()
    tokens = tokens.long()
    with torch.no_grad():
        full = model(tokens)[0]
        gaps = [(decode(model, tokens, p, KVCache(model.config.n_layer)) - full).abs().amax()
                for p in prompt_lens]
    return torch.stack(gaps).float()
