"""KV cache: keys and values of the tokens already seen, so generation feeds one token at a time.

Keys are stored *after* RoPE rotation (as Meta's LLaMA does), so a cached key never needs to know
its position again. The number of cached tokens is the offset of the next chunk: the positions the
three hooks of the Mini-GPT must use for it.
"""

from __future__ import annotations

import torch


class KVCache:
    """Per-layer keys and values of shape ``(B, H, T_cached, head_dim)``, grown chunk by chunk.

    Args:
        n_layer: number of Transformer blocks (one key/value pair per block).
    """

    def __init__(self, n_layer: int) -> None:
        self.keys: list[torch.Tensor | None] = [None] * n_layer
        self.values: list[torch.Tensor | None] = [None] * n_layer

    @property
    def length(self) -> int:
        """Number of positions cached so far (the offset of the next chunk)."""
        return 0 if self.keys[0] is None else self.keys[0].size(-2)

    def update(
        self, layer: int, k: torch.Tensor, v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Append a chunk's keys and values ``(B, H, T_new, head_dim)`` to ``layer``'s cache.

        Returns:
            All keys and values of that layer, ``(B, H, T_cached + T_new, head_dim)`` each.
        """
        if self.keys[layer] is not None:
            k = torch.cat([self.keys[layer], k], dim=-2)
            v = torch.cat([self.values[layer], v], dim=-2)
        self.keys[layer], self.values[layer] = k, v
        return k, v
