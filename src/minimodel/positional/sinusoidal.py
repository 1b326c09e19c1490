# ---------------------------------------------------------------------------------------------
# [es] Completa los bloques marcados "TU CÓDIGO" (lección 17.01). Este archivo es tuyo: una
#      vez que lo editas, ninguna orden del curso lo sobrescribe.
# [en] Fill in the blocks marked "YOUR CODE" (lesson 17.01). This file is yours: once you
#      edit it, no course command overwrites it.
# minimodel-generated:8124d8f57a33
# ---------------------------------------------------------------------------------------------
"""Sinusoidal positional encoding (Vaswani et al., 2017). Lesson 17.01.

The table is interleaved, as in the paper: column ``2i`` holds ``sin(p * w_i)`` and column
``2i + 1`` holds ``cos(p * w_i)``, with the geometric frequencies ``w_i = base ** (-2i / d)``.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from minimodel.messages import bilingual
from minimodel.validation import require_even, require_int


def sinusoidal_pe(T: int, d: int, base: float = 10000.0) -> np.ndarray:
    """Table of sinusoidal positional encodings, one row per position.

    Args:
        T: number of positions ``p = 0 .. T-1`` (``T >= 0``).
        d: width of each encoding; must be even (``d >= 2``).
        base: the base of the geometric frequencies (``> 1``); the paper uses 10000.

    Returns:
        Array of shape ``(T, d)`` and dtype ``float32`` with
        ``PE[p, 2i] = sin(p * base**(-2i/d))`` and ``PE[p, 2i+1] = cos(p * base**(-2i/d))``
        for ``i = 0 .. d/2 - 1``.

    Raises:
        TypeError: ``T`` or ``d`` is not an integer.
        ValueError: ``T < 0``, ``d`` odd or smaller than 2, or ``base <= 1``.
    """
    require_int("T", T, 0)
    require_even("d", d)
    if not base > 1:
        raise ValueError(
            bilingual(f"base debe ser > 1; recibí {base}.", f"base must be > 1; got {base}.")
        )
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar sinusoidal_pe (lección 17.01). Pista: calcula los ángulos p "
        "* w_i con forma (T, d/2) en float64 y llena las columnas pares con senos y las "
        "impares con cosenos.\n[en] sinusoidal_pe is not implemented yet (lesson 17.01). "
        "Hint: compute the angles p * w_i with shape (T, d/2) in float64, then fill even "
        "columns with sines and odd columns with cosines."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


class SinusoidalPositionalEncoding(nn.Module):
    """Adds sinusoidal encodings to a sequence, starting at any position (for a KV cache).

    Args:
        d_model: width of the token embeddings (even).
        max_len: number of positions in the precomputed table.
        base: the base of the geometric frequencies.
    """

    def __init__(self, d_model: int, max_len: int = 4096, base: float = 10000.0) -> None:
        super().__init__()
        require_even("d_model", d_model)
        require_int("max_len", max_len, 1)
        self.d_model = d_model
        self.max_len = max_len
        # Not a parameter and not saved in checkpoints: it is recomputed from (max_len, d_model).
        table = torch.from_numpy(sinusoidal_pe(max_len, d_model, base))
        self.register_buffer("pe", table, persistent=False)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """Add the encodings of positions ``offset .. offset + T - 1``.

        Args:
            x: token embeddings of shape ``(..., T, d_model)``, any float dtype, any device.
            offset: position of the first row of ``x`` (the number of tokens already cached).

        Returns:
            Tensor with the shape, dtype and device of ``x``: ``x + PE[offset : offset + T]``.

        Raises:
            ValueError: ``x`` has fewer than 2 dimensions, its last one is not ``d_model``,
                ``offset < 0``, or ``offset + T > max_len``.
        """
        if x.dim() < 2 or x.shape[-1] != self.d_model:
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
                    f"offset + T = {offset + T} supera max_len = {self.max_len}: "
                    "la tabla no tiene esas posiciones. Crea el módulo con un max_len mayor.",
                    f"offset + T = {offset + T} exceeds max_len = {self.max_len}: "
                    "the table has no such positions. Build the module with a larger max_len.",
                )
            )
        # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
        raise NotImplementedError(
            "[es] Falta implementar SinusoidalPositionalEncoding.forward (lección 17.01). "
            "Pista: toma las filas offset .. offset+T-1 de self.pe, pásalas al dtype y al "
            "dispositivo de x y súmalas.\n[en] SinusoidalPositionalEncoding.forward is not "
            "implemented yet (lesson 17.01). Hint: take rows offset .. offset+T-1 of "
            "self.pe, move them to x's dtype and device, and add them."
        )
        # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======
