"""Training tokens per second of the Mini-GPT for each encoding, relative to no encoding.

A small GPT's usual CPU config: 4 layers, width 128, 4 heads, T = 256, batch 16, AdamW, float32,
2 threads. The encodings' steps are interleaved so that machine noise hits them all alike.

    .venv/bin/python benchmarks/training_by_encoding.py
"""

import os

os.environ.setdefault("MINIMODEL_IMPL", "reference")

import torch  # noqa: E402
from timing import measure  # noqa: E402

from minimodel.encodings import ENCODINGS  # noqa: E402
from minimodel.model import GPT, GPTConfig  # noqa: E402

torch.set_num_threads(2)
B, T, V = 16, 256, 98


def training_step(positional: str):
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=V, block_size=T, positional=positional)).train()
    optimizer = model.optimizer(lr=1e-3, weight_decay=0.1)
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
    results = measure({e: training_step(e) for e in ENCODINGS}, rounds=5, round_seconds=0.5)
    print(f"training step, 4 layers, width 128, 4 heads, T={T}, batch {B}, AdamW, 2 threads")
    print(f"{'encoding':<12}{'best ms':>10}{'median ms':>11}{'tokens/s':>10}{'vs none':>9}")
    base = B * T / results["none"][0]
    for name, (best, median) in results.items():
        rate = B * T / best
        print(f"{name:<12}{best * 1e3:>10.1f}{median * 1e3:>11.1f}{rate:>10.0f}{rate / base:>9.2f}")


if __name__ == "__main__":
    main()
