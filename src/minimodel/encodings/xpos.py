"""xPos (Sun et al., 2023, "A Length-Extrapolatable Transformer"): RoPE with a decay. Lesson 19.01.

With the letters of lessons 17.03 and 19.01: the query is at position ``m``, the key at position
``n``, ``r`` dimensions of each head rotate, and pair ``i`` (``i = 0 .. r/2 - 1``) has the frequency
``theta_i``. RoPE turns the pair of the query by ``m * theta_i`` and that of the key by
``n * theta_i``, so ``<R_m q, R_n k>`` depends on ``n - m`` only, but it does not fall with the
distance. xPos also scales the pair: the query by ``zeta_i ** (m / 512)`` and the key by
``zeta_i ** (-n / 512)``, with

    zeta_i = (i / (r/2) + 0.4) / 1.4        (0.4 = GAMMA, 512 = SCALE_BASE),

so the pair's term of ``q . k`` is multiplied by ``zeta_i ** ((m - n) / 512)``: it still depends
on the distance only, and it decays as the distance ``m - n >= 0`` of a causal model grows, fast
for the fast pairs (small ``i``, ``zeta_i`` near ``0.4 / 1.4``) and hardly at all for the slow
ones (``zeta_i`` near 1). Queries and keys are scaled differently: this is the asymmetric
``rotate`` hook. The paper writes the same with the letters swapped: query at ``n``, key at ``m``.

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
    """The decay of each rotated pair, ``zeta_i = (i / (r/2) + gamma) / (1 + gamma)``.

    Args:
        rotary_dim: number of rotated dimensions ``r`` (even).
        gamma: 0.4 in the paper and the course.

    Returns:
        float32 tensor of shape ``(r/2,)``: ``zeta_i`` for ``i = 0 .. r/2 - 1``, rising from
        ``gamma / (1 + gamma)`` towards 1.
    """
    pairs = torch.arange(rotary_dim // 2, dtype=torch.float32)
    return (pairs / (rotary_dim // 2) + gamma) / (1 + gamma)


class XPos(Rotate):
    """The Mini-GPT's xPos: ``rotate(q, k, offset)`` turns both like RoPE, then scales pair ``i``
    of the query at position ``m`` by ``zeta_i ** (m / 512)`` and of the key at position ``n`` by
    ``zeta_i ** (-n / 512)``."""

    def __init__(self, config) -> None:
        super().__init__(config)
        self.rope = encoding_module("rope")
        self.rotary_dim = config.rope_dim or config.n_embd // config.n_head
        self.convention = config.rope_convention
        self.rope_base = config.rope_base

    def rotate(
        self, q: torch.Tensor, k: torch.Tensor, offset: int
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Turn and scale queries and keys at positions ``offset .. offset + T - 1``.

        Args:
            q, k: queries and keys of shape ``(B, H, T, D)``, ``D`` the head dimension
                (``r <= D`` of it rotates).
            offset: the position of the first row (the number of tokens in the KV cache).

        Returns:
            ``(q, k)`` turned and scaled, each of shape ``(B, H, T, D)`` and its input's dtype.
        """
        # Small float32 tables, computed at each call: nothing a cast could round.
        positions = torch.arange(offset, offset + q.size(-2), device=q.device)
        inv_freq = self.rope.rope_frequencies(self.rotary_dim, self.rope_base, device=q.device)
        cos, sin = self.rope.rope_cos_sin(positions, inv_freq)  # (T, r/2)
        power = positions.to(torch.float32)[:, None] / SCALE_BASE
        scale = xpos_decay(self.rotary_dim).to(q.device) ** power  # (T, r/2): zeta_i ** (p / 512)
        turn = self.rope.apply_rotary
        return (turn(q, cos * scale, sin * scale, convention=self.convention),
                turn(k, cos / scale, sin / scale, convention=self.convention))
