"""Whole-model training step: Mini-GPT (learned positions) vs a minimal nanoGPT of the same size.

Config: 4 layers, width 128, 4 heads, T = 256, batch 16, vocabulary 98, no biases, no dropout,
AdamW (lr 1e-3, weight decay 0.1), gradient clipping at 1, float32, 2 threads. The nanoGPT below
is written the way karpathy/nanoGPT's ``model.py`` is (fused QKV, SDPA ``is_causal``, GELU MLP,
pre-LN, tied embeddings, ``wpe`` table), with its optimiser setup on a CPU (no fused AdamW).

    .venv/bin/python benchmarks/nanogpt.py
"""

import math
import os

os.environ.setdefault("MINIMODEL_IMPL", "reference")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from timing import measure  # noqa: E402
from torch import nn  # noqa: E402

from minimodel.model import GPT, GPTConfig  # noqa: E402

torch.set_num_threads(2)
L, C, NH, T, B, V = 4, 128, 4, 256, 16, 98


class NanoAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(C, 3 * C, bias=False)
        self.c_proj = nn.Linear(C, C, bias=False)

    def forward(self, x):
        Bx, Tx, _ = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(Bx, Tx, NH, C // NH).transpose(1, 2)
        k = k.view(Bx, Tx, NH, C // NH).transpose(1, 2)
        v = v.view(Bx, Tx, NH, C // NH).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(Bx, Tx, C))


class NanoMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = nn.Linear(C, 4 * C, bias=False)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * C, C, bias=False)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class NanoBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(C, bias=False), NanoAttention()
        self.ln_2, self.mlp = nn.LayerNorm(C, bias=False), NanoMLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class NanoGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
        self.h = nn.ModuleList(NanoBlock() for _ in range(L))
        self.ln_f = nn.LayerNorm(C, bias=False)
        self.lm_head = nn.Linear(C, V, bias=False)
        self.wte.weight = self.lm_head.weight
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                std = 0.02 / math.sqrt(2 * L) if name.endswith("c_proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)

    def forward(self, idx, targets):
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return logits, F.cross_entropy(logits.view(-1, V), targets.view(-1), ignore_index=-1)

    def configure_optimizers(self):
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [
            {"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=1e-3, betas=(0.9, 0.95))  # nanoGPT: fused on CUDA only


def training_step(model, optimizer):
    x = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(1))
    y = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(2))

    def step():
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    return step


def main() -> None:
    torch.manual_seed(0)
    ours = GPT(GPTConfig(vocab_size=V, block_size=T, n_layer=L, n_head=NH, n_embd=C,
                         positional="learned"))  # fmt: skip
    nano = NanoGPT()
    assert ours.num_parameters() == sum(p.numel() for p in nano.parameters())
    results = measure(
        {
            "nanoGPT (minimal)": training_step(nano, nano.configure_optimizers()),
            "Mini-GPT learned": training_step(ours, ours.optimizer(1e-3, 0.1)),
        },
        rounds=7,
        round_seconds=0.6,
    )
    print(f"training step, {L} layers, width {C}, {NH} heads, T={T}, batch {B}, AdamW, 2 threads")
    print(f"{'model':<20}{'best ms':>10}{'median ms':>11}{'tokens/s':>10}{'vs nanoGPT':>12}")
    base = results["nanoGPT (minimal)"][0]
    for name, (best, median) in results.items():
        print(f"{name:<20}{best * 1e3:>10.1f}{median * 1e3:>11.1f}{B * T / best:>10.0f}"
              f"{base / best:>12.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
