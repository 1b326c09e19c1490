"""Visible checks for lab 19.01 (the Mini-GPT): your encodings plug into the model by name.

The lab adds no file of its own: it uses the encodings of lessons 17.01-17.05. For each one these
checks build a tiny Mini-GPT with ``positional=<name>`` (so the model imports your file through
``minimodel.positional``), run a forward pass, check that the encoding changes what its hook is
given, and check that decoding with the KV cache gives the logits of the full pass. Students may
read these; the grader's differ.
"""

from __future__ import annotations

import torch

from minimodel.encodings import ENCODINGS
from minimodel.selfcheck import per_encoding
from minimodel.selfcheck.compare import CheckFailure
from minimodel.selfcheck.per_encoding import FILES, tiny_model, tokens

kinds = per_encoding.Kinds()
TINY = dict(block_size=32, n_layer=2, n_head=4, n_embd=32)
ATOL = 2e-5  # float32; cached and full passes differ only in the order of the sums
def full_logits(model, idx: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(idx)[0]


def two_chunk_logits(model, idx: torch.Tensor, prompt_len: int) -> torch.Tensor:
    """Logits ``(B, T, V)`` of ``idx`` ``(B, T)`` in two passes through one KV cache: the first
    ``prompt_len`` tokens, then all the others at once, after the cache (offset ``prompt_len``).
    (The lab's ``cached_logits``, one token per step, is yours to write.)"""
    from minimodel.kv_cache import KVCache

    cache = KVCache(model.config.n_layer)
    with torch.no_grad():
        first = model(idx[:, :prompt_len], cache=cache)[0]
        return torch.cat([first, model(idx[:, prompt_len:], cache=cache)[0]], dim=1)


@kinds.add("forward", "una pasada hacia delante", "a forward pass")
def check_forward(name: str) -> None:
    idx = tokens(24)
    logits = full_logits(tiny_model(name, **TINY), idx)
    expected = (*idx.shape, per_encoding.VOCAB)
    if not isinstance(logits, torch.Tensor) or tuple(logits.shape) != expected:
        shape = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
        raise CheckFailure(
            f"GPT(positional={name!r}): los logits tienen forma {shape}, se esperaba {expected}. "
            f"Revisa que {FILES[name]} devuelva tensores de la forma de su docstring.",
            f"GPT(positional={name!r}): the logits have shape {shape}, expected {expected}. "
            f"Check that {FILES[name]} returns tensors of the shape in its docstring.",
        )
    if logits.dtype != torch.float32 or not torch.isfinite(logits).all():
        raise CheckFailure(
            f"GPT(positional={name!r}): los logits deben ser float32 y finitos; son "
            f"{logits.dtype} y hay {int((~torch.isfinite(logits)).sum())} no finitos. ¿Hay un "
            "-inf fuera de la máscara causal o un cambio de dtype?",
            f"GPT(positional={name!r}): the logits must be float32 and finite; they are "
            f"{logits.dtype} with {int((~torch.isfinite(logits)).sum())} non-finite values. Is "
            "there a -inf outside the causal mask, or a dtype change?",
        )


@kinds.add("changes_output", "la codificación cambia lo que recibe su enganche",
           "the encoding changes what its hook is given")
def check_changes_output(name: str) -> None:
    """The encoding's hook must change what it is given (position 0 of a rotation excepted):
    the largest change any of the three hooks makes."""
    hooks, T = tiny_model(name, **TINY).hooks, 12
    head_dim = TINY["n_embd"] // TINY["n_head"]
    with torch.no_grad():
        x = torch.zeros(1, T, TINY["n_embd"])
        q = torch.ones(1, TINY["n_head"], T, head_dim)
        bias = hooks.attention_bias(T, T)
        changed = max(
            float(hooks.add_to_input(x, offset=0).abs().amax()),  # hook 1: rows added to x
            float((hooks.rotate(q, q.clone(), 0)[0] - q)[:, :, 1:].abs().amax()),  # hook 2
            0.0 if bias is None else float(bias[torch.isfinite(bias)].abs().amax()),  # hook 3
        )
    if changed < 1e-6:
        raise CheckFailure(
            f"GPT(positional={name!r}): la codificación no cambia nada. Tu {FILES[name]} "
            "devuelve su entrada sin modificar, o un sesgo nulo.",
            f"GPT(positional={name!r}): the encoding changes nothing. Your {FILES[name]} "
            "returns its input unchanged, or a zero bias.",
        )


@kinds.add("cache", "con caché KV, los mismos logits que la pasada completa",
           "with the KV cache, the same logits as the full pass")
def check_cache(name: str) -> None:
    model, idx, prompt_len = tiny_model(name, **TINY), tokens(24), 10
    full = full_logits(model, idx)
    cached = two_chunk_logits(model, idx, prompt_len)
    if cached.shape == full.shape and torch.allclose(cached, full, atol=ATOL, rtol=0):
        return
    difference = (cached - full).abs().amax(dim=(0, 2))  # (T,)
    first = int((difference > ATOL).nonzero()[0])
    es, en = (
        f"GPT(positional={name!r}): con la caché KV, los logits difieren de la pasada completa "
        f"desde la posición {first} (diferencia máxima {float(difference.max()):.3g}).",
        f"GPT(positional={name!r}): with the KV cache, the logits differ from the full pass from "
        f"position {first} on (largest difference {float(difference.max()):.3g}).",
    )
    if first >= prompt_len:  # the prefill is right: the positions after the cache are not
        hint_es, hint_en = ENCODINGS[name].hint
        es += f" El llenado inicial está bien; lo que llega después de la caché no. {hint_es}"
        en += f" The prefill is right; what comes after the cache is not. {hint_en}"
    raise CheckFailure(es, en)



checks = kinds.checks()
