"""One short run on a GPU: correctness on CUDA, bfloat16 autocast, training tokens per second.

Exits 0 saying "no GPU" when PyTorch sees none (nothing was checked: not run, not passed).
With a GPU, for every encoding:

1. the same weights give the same float32 logits on CUDA as on the CPU (TF32 off);
2. cached decoding on CUDA equals the full forward pass;
3. under bf16 autocast the logits stay close to float32 ones at 8x the training length (RoPE's
   angles must stay float32), and a few training steps lower the loss;
4. training tokens per second with bf16 autocast (T = 256 and 1024).

Exit status 1 if any check fails.

    .venv/bin/python benchmarks/gpu_check.py
"""

import math
import os
import sys
import time

os.environ.setdefault("MINIMODEL_IMPL", "reference")

import torch  # noqa: E402

from minimodel.device import autocast  # noqa: E402
from minimodel.encodings import ENCODINGS  # noqa: E402
from minimodel.kv_cache import KVCache  # noqa: E402
from minimodel.model import GPT, GPTConfig  # noqa: E402

V = 98


def model_for(positional: str, block_size: int = 128, **size) -> GPT:
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=V, block_size=block_size, positional=positional, **size))


def check(name: str, ok: bool, detail: str, failures: list) -> None:
    print(f"  {'PASS' if ok else 'FAIL'}  {name}: {detail}")
    if not ok:
        failures.append(name)


@torch.no_grad()
def correctness(encoding: str, failures: list) -> None:
    cuda = torch.device("cuda")
    model = model_for(encoding).eval()
    idx = torch.randint(0, V, (4, 128), generator=torch.Generator().manual_seed(0))
    cpu_logits, _ = model(idx)
    model.to(cuda)
    gpu_logits, _ = model(idx.to(cuda))
    err = (gpu_logits.cpu() - cpu_logits).abs().max().item()
    check(f"{encoding} cuda == cpu (fp32)", err < 1e-4, f"max |diff| {err:.2e}", failures)

    cache, parts = KVCache(model.config.n_layer), []
    for start, end in [(0, 50), (50, 51), (51, 100), (100, 128)]:
        parts.append(model(idx[:, start:end].to(cuda), cache=cache)[0])
    err = (torch.cat(parts, 1) - gpu_logits).abs().max().item()
    check(f"{encoding} cached == full (cuda)", err < 1e-4, f"max |diff| {err:.2e}", failures)

    # 8x the training length under bf16 autocast vs float32 (learned stops at its table).
    length = min(1024, model.hooks.max_positions or 1024)
    long = torch.randint(0, V, (2, length), generator=torch.Generator().manual_seed(1)).to(cuda)
    full, _ = model(long)
    with autocast(cuda):
        low, _ = model(long)
    err = (low.float() - full).abs().max().item()
    scale = full.abs().max().item()
    check(f"{encoding} bf16 autocast at {length}", err < 0.05 * scale + 0.05,
          f"max |diff| {err:.3f} (logits up to {scale:.2f})", failures)  # fmt: skip


def bf16_training(encoding: str, failures: list) -> None:
    cuda = torch.device("cuda")
    model = model_for(encoding).to(cuda).train()
    optimizer = model.optimizer(lr=3e-3, weight_decay=0.0)
    idx = torch.randint(0, V, (8, 129), generator=torch.Generator().manual_seed(2)).to(cuda)
    losses = []
    for _ in range(10):
        with autocast(cuda):
            _, loss = model(idx[:, :-1], idx[:, 1:])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    ok = all(math.isfinite(v) for v in losses) and losses[-1] < losses[0]
    check(f"{encoding} bf16 training", ok, f"loss {losses[0]:.3f} -> {losses[-1]:.3f}", failures)


def tokens_per_second(encoding: str, T: int, B: int = 32, steps: int = 20) -> float:
    cuda = torch.device("cuda")
    model = model_for(encoding, block_size=T).to(cuda).train()
    optimizer = model.optimizer(lr=1e-3, weight_decay=0.1)
    x = torch.randint(0, V, (B, T), device=cuda)
    for i in range(steps + 3):
        if i == 3:
            torch.cuda.synchronize()
            start = time.perf_counter()
        with autocast(cuda):
            _, loss = model(x, x)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    return steps * B * T / (time.perf_counter() - start)


def main() -> int:
    if not torch.cuda.is_available():
        print("no GPU: PyTorch sees no CUDA device; the GPU checks were not run (not passed).")
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"GPU: {torch.cuda.get_device_name()} (torch {torch.__version__})")
    failures: list[str] = []
    for encoding in ENCODINGS:
        correctness(encoding, failures)
        bf16_training(encoding, failures)
    print("\ntraining tokens/s, bf16 autocast, 4 layers, width 128, 4 heads, batch 32")
    print(f"{'encoding':<12}{'T=256':>12}{'T=1024':>12}")
    for encoding in ENCODINGS:
        rates = [tokens_per_second(encoding, T) for T in (256, 1024)]
        print(f"{encoding:<12}" + "".join(f"{r:>12.0f}" for r in rates))
    print(f"\n{len(failures)} check(s) failed: {failures}" if failures else "\nall checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
