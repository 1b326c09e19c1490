"""xPos (Sun et al., 2022, "A Length-Extrapolatable Transformer"): RoPE with a decay.

RoPE turns the pair ``i`` of a query at position ``n`` and of a key at position ``m`` by
``n theta_i`` and ``m theta_i``, so their product depends on ``n - m`` only, but it does not
fall with the distance. xPos also scales the pair: the query by ``zeta_i ** (n / scale_base)``
and the key by ``zeta_i ** (-m / scale_base)``, with

    zeta_i = (i / (r/2) + gamma) / (1 + gamma),   gamma = 0.4,  scale_base = 512,

so the pair's term of ``q . k`` is multiplied by ``zeta_i ** ((n - m) / scale_base)``: it still
depends on ``n - m`` only, and it decays with the distance, fast for the fast pairs (small
``i``, ``zeta_i`` near ``gamma / (1 + gamma)``) and hardly at all for the slow ones (``zeta_i``
near 1). Queries and keys are scaled differently: this is the asymmetric ``rotate`` hook.

Given code, not a lab: it reuses the student's RoPE (``rope_frequencies``, ``rope_cos_sin``,
``apply_rotary`` of lesson 17.03) and the model's RoPE settings (``rope_dim``, ``rope_base``,
``rope_convention``). Positions are absolute (the paper's code centres them; the product is the
same), so the scale of a cached key never changes and decoding with a KV cache is exact.
"""

from __future__ import annotations

import torch

from minimodel.hooks import Rotate, encoding_module

GAMMA = 0.4
SCALE_BASE = 512.0


def xpos_decay(rotary_dim: int, gamma: float = GAMMA) -> torch.Tensor:
    """``zeta_i = (i / (r/2) + gamma) / (1 + gamma)`` for ``i = 0 .. r/2 - 1``: float32 ``(r/2,)``,
    rising from ``gamma / (1 + gamma)`` towards 1."""
    pairs = torch.arange(rotary_dim // 2, dtype=torch.float32)
    return (pairs / (rotary_dim // 2) + gamma) / (1 + gamma)


class XPos(Rotate):
    """The Mini-GPT's xPos: ``rotate(q, k, offset)`` turns both like RoPE, then scales the
    queries by ``zeta ** (n / scale_base)`` and the keys by ``zeta ** (-m / scale_base)``."""

    def __init__(self, config) -> None:
        super().__init__(config)
        self.rope = encoding_module("rope")
        self.rotary_dim = config.rope_dim or config.n_embd // config.n_head
        self.convention = config.rope_convention
        self.rope_base = config.rope_base

    def rotate(
        self, q: torch.Tensor, k: torch.Tensor, offset: int
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Queries and keys ``(B, H, T, head_dim)`` at positions ``offset .. offset + T - 1``."""
        # Small float32 tables, computed at each call: nothing a cast could round.
        positions = torch.arange(offset, offset + q.size(-2), device=q.device)
        inv_freq = self.rope.rope_frequencies(self.rotary_dim, self.rope_base, device=q.device)
        cos, sin = self.rope.rope_cos_sin(positions, inv_freq)  # (T, r/2)
        power = positions.to(torch.float32)[:, None] / SCALE_BASE
        scale = xpos_decay(self.rotary_dim).to(q.device) ** power  # zeta ** (n / scale_base)
        turn = self.rope.apply_rotary
        return (turn(q, cos * scale, sin * scale, convention=self.convention),
                turn(k, cos / scale, sin / scale, convention=self.convention))
