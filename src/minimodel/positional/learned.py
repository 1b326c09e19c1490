# ---------------------------------------------------------------------------------------------
# [es] Completa los bloques marcados "TU CÓDIGO" (lección 17.02). Este archivo es tuyo: una
#      vez que lo editas, ninguna orden del curso lo sobrescribe.
# [en] Fill in the blocks marked "YOUR CODE" (lesson 17.02). This file is yours: once you
#      edit it, no course command overwrites it.
# minimodel-generated:c3f51491903a
# ---------------------------------------------------------------------------------------------
"""Learned absolute positional embeddings (GPT-2, BERT, ViT). Lesson 17.02.

A table of ``max_len x d_model`` trainable parameters, one row per position, added to the token
embeddings. Unlike the sinusoidal table it has nothing to say about positions it never saw: past
``max_len`` there is no row, and this module says so instead of failing deep inside an index.
"""

from __future__ import annotations

import torch
from torch import nn

from minimodel.messages import bilingual
from minimodel.validation import require_int, require_tensor


class LearnedPositionalEmbedding(nn.Module):
    """A trainable table of positions, added to the input at any offset (for a KV cache).

    Args:
        max_len: number of positions the table holds (``>= 1``); the model cannot read longer
            sequences.
        d_model: width of the token embeddings.
        init_std: standard deviation of the normal initialisation (0.02, as Hugging Face's GPT-2
            and nanoGPT; OpenAI's original GPT-2 code draws its position table with 0.01).

    Attributes:
        weight: ``nn.Parameter`` of shape ``(max_len, d_model)``, float32; row ``p`` is the
            embedding of position ``p``. ``max_len * d_model`` parameters.
    """

    def __init__(self, max_len: int, d_model: int, init_std: float = 0.02) -> None:
        super().__init__()
        require_int("max_len", max_len, 1)
        require_int("d_model", d_model, 1)
        self.max_len = max_len
        self.d_model = d_model
        self.weight = nn.Parameter(torch.empty(max_len, d_model))
        nn.init.normal_(self.weight, mean=0.0, std=init_std)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """Add the embeddings of positions ``offset .. offset + T - 1``.

        Args:
            x: token embeddings of shape ``(..., T, d_model)``, any float dtype, on the device of
                ``weight``.
            offset: position of the first row of ``x`` (the number of tokens already cached).

        Returns:
            Tensor with the shape and dtype of ``x``: ``x + weight[offset : offset + T]``.
            Gradients reach exactly the rows used.

        Raises:
            ValueError: ``x`` is not ``(..., T, d_model)``, ``offset < 0``, or
                ``offset + T > max_len`` (the message names the limit).
        """
        require_tensor("x", x, f"(..., T, {self.d_model})", range(2, 9))
        if x.shape[-1] != self.d_model:
            raise ValueError(
                bilingual(
                    f"x debe tener forma (..., T, {self.d_model}); recibí {tuple(x.shape)}.",
                    f"x must have shape (..., T, {self.d_model}); got {tuple(x.shape)}.",
                )
            )
        require_int("offset", offset, 0)
        T = x.shape[-2]
        if offset + T > self.max_len:
            raise ValueError(
                bilingual(
                    f"Las posiciones {offset} .. {offset + T - 1} no caben en la tabla aprendida: "
                    f"max_len = {self.max_len} (posiciones 0 .. {self.max_len - 1}). Una tabla "
                    "aprendida no tiene filas más allá de su longitud; recorta el contexto a "
                    f"{self.max_len} tokens, o amplía la tabla (interpolate_positions) y "
                    "reentrena el modelo.",
                    f"Positions {offset} .. {offset + T - 1} do not fit in the learned table: "
                    f"max_len = {self.max_len} (positions 0 .. {self.max_len - 1}). A learned "
                    "table has no rows past its length; crop the context to "
                    f"{self.max_len} tokens, or enlarge the table (interpolate_positions) and "
                    "fine-tune the model.",
                )
            )
        # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
        raise NotImplementedError(
            "[es] Falta implementar LearnedPositionalEmbedding.forward (lección 17.02). "
            "Pista: toma las filas offset .. offset+T-1 de self.weight (un corte, no un "
            "bucle), pásalas al dtype de x y súmalas.\n[en] "
            "LearnedPositionalEmbedding.forward is not implemented yet (lesson 17.02). Hint: "
            "take rows offset .. offset+T-1 of self.weight (a slice, not a loop), cast them "
            "to x's dtype and add them."
        )
        # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======

    def extra_repr(self) -> str:
        return f"max_len={self.max_len}, d_model={self.d_model}"


def interpolate_positions(table: torch.Tensor, new_len: int) -> torch.Tensor:
    """Resize a table of positions to ``new_len`` rows by linear interpolation.

    Convention ``align_corners=True``: the first and last rows are kept exactly and new row ``j``
    is the table read at the fractional position ``j * (L - 1) / (new_len - 1)``, blending the
    two nearest old rows, with weights that add up to 1. (With ``new_len == 1`` the result is
    row 0.)

    Args:
        table: float tensor of shape ``(L, D)`` with ``L >= 1`` (e.g. ``weight.detach()``).
        new_len: number of rows of the result (``>= 1``).

    Returns:
        Tensor of shape ``(new_len, D)`` with the dtype and device of ``table``.

    Raises:
        ValueError: ``table`` is not a 2-D float tensor with at least one row, or ``new_len < 1``.
    """
    require_tensor("table", table, "(L, D)", 2)
    require_int("new_len", new_len, 1)
    if table.shape[0] < 1:
        raise ValueError(
            bilingual("table necesita al menos una fila.", "table needs at least one row.")
        )
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar interpolate_positions (lección 17.02). Pista: la fila nueva "
        "j está en la posición antigua s = j*(L-1)/(new_len-1); mezcla las filas floor(s) y "
        "floor(s)+1 con pesos 1-(s-floor(s)) y s-floor(s). Cuidado con L = 1 y new_len = 1.\n"
        "[en] interpolate_positions is not implemented yet (lesson 17.02). Hint: new row j "
        "sits at old position s = j*(L-1)/(new_len-1); blend rows floor(s) and floor(s)+1 "
        "with weights 1-(s-floor(s)) and s-floor(s). Mind L = 1 and new_len = 1."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======
