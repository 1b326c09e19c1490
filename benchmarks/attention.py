"""Attention with an ALiBi or T5 bias vs plain causal SDPA, at T = 256 and 1024.

The Mini-GPT's shapes: batch 16, 4 heads of 32 dimensions, float32, 2 threads. "causal" is SDPA's
fused ``is_causal=True`` path; the bias rows build the ``(1, H, T, T)`` bias (causal ``-inf``
folded in) and pass it as ``attn_mask``, as the model does once per forward pass. Forward, and
forward + backward (T5's bias is learned, so its gradient is computed too).

    .venv/bin/python benchmarks/attention.py
"""

import os

os.environ.setdefault("MINIMODEL_IMPL", "reference")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from timing import measure, table  # noqa: E402

from minimodel.hooks import causal_mask  # noqa: E402
from minimodel.positional.alibi import alibi_bias, alibi_slopes  # noqa: E402
from minimodel.positional.relative_bias import RelativePositionBias  # noqa: E402

torch.set_num_threads(2)
B, H, D = 16, 4, 32


def cases_at(T: int, backward: bool) -> dict:
    q, k, v = (torch.randn(B, H, T, D, requires_grad=backward) for _ in range(3))
    slopes = alibi_slopes(H)
    t5 = RelativePositionBias(H).requires_grad_(backward)

    def run(bias_fn):
        def step():
            bias = bias_fn()
            if bias is None:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
            if backward:
                y.sum().backward()

        return step

    return {
        "causal (fused)": run(lambda: None),
        "alibi bias": run(lambda: alibi_bias(T, T, slopes).unsqueeze(0)),
        "t5 bias": run(lambda: (t5(T, T) + causal_mask(T, T)).unsqueeze(0)),
    }


def main() -> None:
    for backward in (False, True):
        for T in (256, 1024):
            results = measure(cases_at(T, backward), rounds=5)
            what = "forward + backward" if backward else "forward"
            print(f"\nattention {what}, B={B} H={H} T={T} D={D}, float32, 2 threads")
            print(table(results, "causal (fused)"))


if __name__ == "__main__":
    main()
