"""Mini-GPT: a small decoder-only Transformer whose positional encoding is chosen by name.

The shape follows nanoGPT (pre-LayerNorm blocks, a fused QKV projection, GELU MLP, tied input and
output embeddings). Unlike nanoGPT, the position is not hard-wired: ``GPTConfig.positional`` names
a row of ``minimodel.encodings.ENCODINGS`` (``none``, ``sinusoidal``, ``learned``, ``rope``,
``alibi``, ``t5``, ...), and the encoding enters through one of three hooks (see
``minimodel.hooks``). Attention runs through PyTorch's ``scaled_dot_product_attention``: its fused
causal path when there is no bias, a float bias with the causal mask folded in for ALiBi and T5.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from minimodel.encodings import ENCODINGS
from minimodel.hooks import Hook, causal_mask
from minimodel.kv_cache import KVCache
from minimodel.messages import bilingual

ROPE_CONVENTIONS = ("interleaved", "half")


@dataclass
class GPTConfig:
    """Everything that defines a Mini-GPT; saved in every checkpoint.

    Attributes:
        vocab_size: number of token ids.
        block_size: training context length; also the number of rows of the ``learned`` table.
        n_layer, n_head, n_embd: depth, attention heads and width (``n_embd % n_head == 0``).
        dropout: dropout probability (0 for the course's small runs).
        bias: whether Linear and LayerNorm layers have biases.
        positional: the encoding, a name of ``minimodel.encodings.ENCODINGS``.
        max_len: positions covered by the ``sinusoidal`` table (a buffer, no parameters).
        rope_base, rope_convention, rope_dim: RoPE's base, pairing (``"interleaved"``:
            ``(2i, 2i+1)`` as in Meta's LLaMA; ``"half"``: ``(i, i + r/2)`` as in Hugging Face)
            and rotated dimensions per head (``None``: the whole head).
        rope_scaling, rope_scaling_factor, rope_original_max_len: a RoPE scaling by name from
            ``minimodel.positional.scaling`` (``None``: plain RoPE), its factor, and the length
            the model was trained at (``None``: ``block_size``).
        t5_num_buckets, t5_max_distance: T5's causal relative-position buckets. Every key
            farther than ``t5_max_distance`` shares the last bucket, which must be trained for
            the model to read longer sequences: T5 uses 128 for a context of 512, and the
            default 32 keeps that proportion for ``block_size`` 128.
    """

    vocab_size: int = 128
    block_size: int = 128
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = False
    positional: str = "rope"
    max_len: int = 8192
    rope_base: float = 10000.0
    rope_convention: str = "interleaved"
    rope_dim: int | None = None
    rope_scaling: str | None = None
    rope_scaling_factor: float = 1.0
    rope_original_max_len: int | None = None
    t5_num_buckets: int = 32
    t5_max_distance: int = 32

    def __post_init__(self) -> None:
        if self.positional not in ENCODINGS:
            raise ValueError(
                bilingual(
                    f"positional debe ser una de {tuple(ENCODINGS)}; recibí {self.positional!r}.",
                    f"positional must be one of {tuple(ENCODINGS)}; got {self.positional!r}.",
                )
            )
        if self.rope_convention not in ROPE_CONVENTIONS:
            raise ValueError(
                bilingual(
                    f"rope_convention debe ser una de {ROPE_CONVENTIONS}; "
                    f"recibí {self.rope_convention!r}.",
                    f"rope_convention must be one of {ROPE_CONVENTIONS}; "
                    f"got {self.rope_convention!r}.",
                )
            )
        if self.n_embd % self.n_head:
            raise ValueError(
                bilingual(
                    f"n_embd ({self.n_embd}) debe ser múltiplo de n_head ({self.n_head}).",
                    f"n_embd ({self.n_embd}) must be a multiple of n_head ({self.n_head}).",
                )
            )

    def to_dict(self) -> dict:
        return asdict(self)


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.n_head = config.n_head
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = config.dropout
        self.resid_dropout = nn.Dropout(config.dropout)

    def forward(
        self,
        x: torch.Tensor,
        hooks: Hook,
        offset: int,
        bias: torch.Tensor | None,
        cache: KVCache | None,
        layer: int,
    ) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        q, k = hooks.rotate(q, k, offset)  # hook 2 (RoPE); identity otherwise
        if cache is not None:
            k, v = cache.update(layer, k, v)  # (B, H, cached + T, head_dim)
        dropout = self.dropout if self.training else 0.0
        q_len, k_len = T, k.size(-2)
        if bias is not None:  # hook 3 (ALiBi, T5): the causal -inf is already in the bias
            mask = bias.to(q.dtype)  # SDPA wants the mask in the query's dtype (bf16 autocast)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout)
        elif q_len == k_len:  # the fused causal kernel
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=dropout)
        elif q_len == 1:  # one new token sees every cached key
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout)
        else:  # a chunk after a cache: causal, aligned to the end of the keys
            mask = causal_mask(q_len, k_len, q.device).to(q.dtype)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x, hooks, offset, bias, cache, layer) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x), hooks, offset, bias, cache, layer)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """The Mini-GPT. ``forward(idx, targets=None, cache=None) -> (logits, loss)``."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # tied embeddings
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):  # GPT-2's scaled init of residual projections
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))
        # Built and initialised last, so for a given seed every other weight is the same
        # whichever encoding is chosen.
        self.hooks = ENCODINGS[config.positional].hook(config)
        self.hooks.apply(self._init_weights)

    def reset_tables(self) -> None:
        """Recompute the encoding's tables that no checkpoint holds, where the model lives.

        Meta-device initialisation builds the model without memory, then allocates it and loads
        a checkpoint; the tables must then be computed again (torchtune's ``rope_init``)::

            with torch.device("meta"):
                model = GPT(config)
            model.to_empty(device=device)
            model.reset_tables()
            model.load_state_dict(state)
        """
        self.hooks.reset_tables(self.wte.weight.device)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def num_parameters(self) -> int:
        """Number of trainable parameters (the tied embedding counted once)."""
        return sum(p.numel() for p in self.parameters())

    def forward(
        self,
        idx: torch.Tensor,
        targets: torch.Tensor | None = None,
        cache: KVCache | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Next-token logits for a chunk of tokens.

        Args:
            idx: token ids ``(B, T)``, int64.
            targets: next-token ids ``(B, T)``; ``-1`` marks positions without a target.
            cache: a ``KVCache`` holding the previous tokens; this chunk starts at position
                ``cache.length`` and its keys and values are appended to it.

        Returns:
            ``logits`` ``(B, T, vocab_size)`` and the mean cross-entropy (``None`` without targets).
        """
        B, T = idx.shape
        offset = cache.length if cache is not None else 0
        self.hooks.check_length(offset + T)
        x = self.hooks.add_to_input(self.wte(idx), offset)  # hook 1 (sinusoidal, learned)
        x = self.drop(x)
        bias = self.hooks.attention_bias(T, offset + T)  # hook 3, shared by all layers
        for layer, block in enumerate(self.blocks):
            x = block(x, self.hooks, offset, bias, cache, layer)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-1)
        return logits, loss

    def optimizer(
        self, lr: float, weight_decay: float, betas: tuple[float, float] = (0.9, 0.95)
    ) -> torch.optim.AdamW:
        """AdamW with weight decay on matrices and embeddings only (nanoGPT's rule)."""
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [
            {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=lr, betas=betas, fused=True)
