"""RoPE application vs a plain rotate-half implementation and vs copying the tensor.

Shape (B, H, T, D) = (8, 8, 1024, 64), float32, 2 threads. ``clone`` reads and writes the tensor
once: the memory-bandwidth floor any rotation has to pay.

    .venv/bin/python benchmarks/rope.py
"""

import os

os.environ.setdefault("MINIMODEL_IMPL", "reference")

import torch  # noqa: E402
from timing import measure, table  # noqa: E402

from minimodel.positional.rope import apply_rope, rope_frequencies  # noqa: E402

torch.set_num_threads(2)
B, H, T, D = 8, 8, 1024, 64


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def plain_rotate_half(x, cos, sin):
    """Hugging Face Llama's formula, with cos/sin tables of width D (each frequency twice)."""
    return x * cos + rotate_half(x) * sin


def main() -> None:
    x = torch.randn(B, H, T, D)
    positions = torch.arange(T)
    inv_freq = rope_frequencies(D)
    angles = positions[:, None].float() * inv_freq  # (T, D/2)
    cos, sin = torch.cat([angles.cos()] * 2, -1), torch.cat([angles.sin()] * 2, -1)  # (T, D)

    # Same result, checked once, before timing.
    torch.testing.assert_close(
        apply_rope(x, positions, inv_freq, convention="half"), plain_rotate_half(x, cos, sin)
    )
    cases = {
        "clone": lambda: x.clone(),
        "rotate-half (plain)": lambda: plain_rotate_half(x, cos, sin),
        "apply_rope interleaved": lambda: apply_rope(x, positions, inv_freq),
        "apply_rope half": lambda: apply_rope(x, positions, inv_freq, convention="half"),
    }
    results = measure(cases)
    print(f"RoPE forward at (B, H, T, D) = {(B, H, T, D)}, float32, 2 threads")
    print(table(results, "clone"))
    plain = results["rotate-half (plain)"][0]
    for name in ("apply_rope interleaved", "apply_rope half"):
        print(f"{name}: {plain / results[name][0]:.2f}x faster than plain rotate-half")


if __name__ == "__main__":
    main()
