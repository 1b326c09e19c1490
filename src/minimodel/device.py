"""Where the Mini-GPT runs: ``--device auto|cpu|cuda``, and bfloat16 autocast on a GPU."""

from __future__ import annotations

import contextlib

import torch

from minimodel.messages import bilingual

DEVICES = ("auto", "cpu", "cuda")


def resolve_device(name: str | torch.device = "auto") -> torch.device:
    """``auto`` is CUDA when a GPU is visible, else the CPU; ``cuda`` without a GPU is an error."""
    if isinstance(name, torch.device):
        return name
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(
            bilingual(
                "Pediste --device cuda, pero PyTorch no ve ninguna GPU. Usa --device cpu o auto.",
                "You asked for --device cuda, but PyTorch sees no GPU. Use --device cpu or auto.",
            )
        )
    return torch.device(name)


def autocast(device: torch.device):
    """bfloat16 autocast on a GPU (matmuls in bf16, reductions in float32); nothing on the CPU."""
    if torch.device(device).type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()
