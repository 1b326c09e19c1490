# ---------------------------------------------------------------------------------------------
# [es] Completa los bloques marcados "TU CÓDIGO" (lección 17.00). Este archivo es tuyo: una
#      vez que lo editas, ninguna orden del curso lo sobrescribe.
# [en] Fill in the blocks marked "YOUR CODE" (lesson 17.00). This file is yours: once you
#      edit it, no course command overwrites it.
# minimodel-generated:c7f8e778d502
# ---------------------------------------------------------------------------------------------
"""Testing permutation equivariance, the property that makes position necessary. Lesson 17.00.

A layer ``f`` that maps a sequence ``x`` of shape ``(B, T, d)`` to one of shape ``(B, T, d')`` is
permutation-equivariant when shuffling the input rows shuffles the output rows the same way:
``f(x[:, perm]) == f(x)[:, perm]`` for every permutation ``perm`` of ``0 .. T-1``. Self-attention
without positional information and without a mask is; adding positions or a causal mask breaks it.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from minimodel.messages import bilingual
from minimodel.validation import require_int_tensor, require_tensor


def permutation_equivariance_gap(
    layer: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, perm: torch.Tensor
) -> float:
    """How far ``layer`` is from being permutation-equivariant on one input.

    Args:
        layer: a function or module mapping ``(B, T, d)`` to ``(B, T, d_out)``, row ``t`` of the
            output belonging to row ``t`` of the input (e.g. self-attention).
        x: float tensor of shape ``(B, T, d)``: a batch of ``B`` sequences of ``T`` vectors.
        perm: integer tensor of shape ``(T,)`` holding a permutation of ``0 .. T-1``; the
            permuted input is ``x[:, perm]`` (row ``t`` of it is row ``perm[t]`` of ``x``).

    Returns:
        ``max |layer(x[:, perm]) - layer(x)[:, perm]|`` over every entry, as a Python ``float``,
        computed without gradients: ``0`` (up to rounding, about ``1e-6`` in float32) for an
        equivariant layer, clearly larger for one that sees positions.

    Raises:
        ValueError: ``x`` is not a 3-D float tensor, or ``perm`` is not a permutation of
            ``0 .. T-1``.
    """
    require_tensor("x", x, "(B, T, d)", 3)
    require_int_tensor("perm", perm, "(T,)", 1)
    T = x.shape[1]
    if perm.shape[0] != T or not torch.equal(perm.sort().values.cpu(), torch.arange(T)):
        raise ValueError(
            bilingual(
                f"perm debe ser una permutación de 0 .. {T - 1} (forma ({T},)); "
                f"recibí {perm.tolist()}.",
                f"perm must be a permutation of 0 .. {T - 1} (shape ({T},)); "
                f"got {perm.tolist()}.",
            )
        )
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar permutation_equivariance_gap (lección 17.00). Pista: dentro "
        "de torch.no_grad(), calcula layer(x[:, perm]) y layer(x)[:, perm] (mueve perm al "
        "dispositivo de x) y devuelve el máximo de su diferencia absoluta con .item().\n[en] "
        "permutation_equivariance_gap is not implemented yet (lesson 17.00). Hint: inside "
        "torch.no_grad(), compute layer(x[:, perm]) and layer(x)[:, perm] (move perm to x's "
        "device) and return the maximum of their absolute difference with .item()."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======
