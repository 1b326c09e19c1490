"""Visible checks for lab 19.02 (experiments): your encodings train and run past their length.

The lab trains a Mini-GPT with each encoding of lessons 17.01-17.05 and evaluates it on sequences
up to eight times longer than the ones it was trained on. These checks make sure that works with
your files before you spend minutes training: for each encoding, a few optimiser steps lower the
loss (the gradient reaches the encoding's own parameters, if it has any), and a model trained at
one length runs at four times that length, with the same logits on the positions it knows.
Students may read these; the grader's differ.
"""

from __future__ import annotations

import torch

from minimodel.encodings import ENCODINGS
from minimodel.hooks import Rotate
from minimodel.selfcheck import per_encoding
from minimodel.selfcheck.compare import CheckFailure
from minimodel.selfcheck.per_encoding import FILES, tiny_model, tokens

kinds = per_encoding.Kinds()
TINY = dict(block_size=16, n_layer=2, n_head=4, n_embd=32)


@kinds.add("learns", "unos pasos de entrenamiento bajan la pérdida",
           "a few training steps lower the loss")
def check_learns(name: str) -> None:
    model = tiny_model(name, **TINY).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    idx = tokens(TINY["block_size"] + 1)
    losses = []
    for step in range(4):
        _, loss = model(idx[:, :-1], idx[:, 1:])
        optimizer.zero_grad()
        loss.backward()
        if step == 0:
            own = [(n, p) for n, p in model.named_parameters() if n.startswith("hooks.")]
            silent = [n for n, p in own if p.grad is None or not bool(p.grad.abs().sum() > 0)]
            if silent:
                raise CheckFailure(
                    f"GPT(positional={name!r}): los parámetros {silent} no reciben gradiente, así "
                    f"que el entrenamiento no los cambia. ¿Usa tu {FILES[name]} .detach(), "
                    ".data o torch.no_grad() en forward?",
                    f"GPT(positional={name!r}): parameters {silent} get no gradient, so training "
                    f"does not change them. Does your {FILES[name]} use .detach(), .data or "
                    "torch.no_grad() in forward?",
                )
        optimizer.step()
        losses.append(loss.item())
    if not losses[-1] < losses[0]:
        raise CheckFailure(
            f"GPT(positional={name!r}): cuatro pasos de AdamW sobre el mismo lote no bajan la "
            f"pérdida ({losses[0]:.4f} -> {losses[-1]:.4f}).",
            f"GPT(positional={name!r}): four AdamW steps on the same batch do not lower the loss "
            f"({losses[0]:.4f} -> {losses[-1]:.4f}).",
        )


@kinds.add("longer", "funciona a 4 veces la longitud de entrenamiento",
           "runs at 4 times the training length")
def check_longer(name: str) -> None:
    """Run at 4x the training length; the first positions' logits must not change."""
    from minimodel.evaluate import allow_length

    T = TINY["block_size"]
    # Small tables, so that 4x the training length goes past them: RoPE must compute the angles
    # it has no table for, T5 must put distances past max_distance in its last bucket.
    hook = ENCODINGS[name].hook
    model = allow_length(tiny_model(name, **TINY, **hook.covering(T)), 4 * T)
    idx = tokens(4 * T)
    with torch.no_grad():
        long_logits = model(idx)[0]
        short_logits = model(idx[:, :T])[0]
    if not torch.isfinite(long_logits).all():
        raise CheckFailure(
            f"GPT(positional={name!r}) a {4 * T} tokens (4 veces la longitud de entrenamiento) da "
            "logits no finitos.",
            f"GPT(positional={name!r}) at {4 * T} tokens (4 times the training length) gives "
            "non-finite logits.",
        )
    if not torch.allclose(long_logits[:, :T], short_logits, atol=2e-5, rtol=0):
        raise CheckFailure(
            f"GPT(positional={name!r}): las {T} primeras posiciones dan otros logits cuando la "
            f"secuencia es más larga ({4 * T} tokens). Una codificación causal no puede depender "
            "de lo que viene después.",
            f"GPT(positional={name!r}): the first {T} positions give different logits when the "
            f"sequence is longer ({4 * T} tokens). A causal encoding cannot depend on what comes "
            "later.",
        )
    if issubclass(hook, Rotate):  # past the cos/sin table: the angles of a table that covers it
        full_table = allow_length(tiny_model(name, **TINY, **hook.covering(8 * T)), 4 * T)
        with torch.no_grad():
            reference = full_table(idx)[0]
        if not torch.allclose(long_logits, reference, atol=2e-5, rtol=0):
            raise CheckFailure(
                "RotaryEmbedding con max_len=16 da otros resultados que con una tabla que cubre "
                "las 64 posiciones: más allá de la tabla, calcula los ángulos de las posiciones "
                "offset .. offset+T-1 con rope_cos_sin.",
                "RotaryEmbedding with max_len=16 gives other results than with a table covering "
                "the 64 positions: past the table, compute the angles of positions "
                "offset .. offset+T-1 with rope_cos_sin.",
            )



checks = kinds.checks()
