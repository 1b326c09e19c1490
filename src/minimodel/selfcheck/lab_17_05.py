"""Visible checks for lab 17.05 (relative biases). Students may read these; the grader's differ."""

from __future__ import annotations

import torch

from minimodel.selfcheck.compare import CheckFailure, CheckList, StudentModule
from minimodel.selfcheck.snapshots import Snapshots

checks = CheckList()
relative_bias = StudentModule("relative_bias")
snap = Snapshots("17.05")

# The relative positions (key - query) of the lesson's worked table (32 buckets, max_distance 128).
RELATIVE = [-1000, -128, -64, -32, -16, -9, -8, -7, -1, 0, 1, 7, 8, 16, 32, 64, 127]


def _buckets(rel: list[int], **kwargs) -> torch.Tensor:
    return relative_bias.relative_position_bucket(torch.tensor(rel), **kwargs)


@checks.add("relative_position_bucket", "bidireccional: la tabla de la lección",
            "bidirectional: the lesson's table")
def buckets_bidirectional() -> None:
    snap.expect(_buckets(RELATIVE, bidirectional=True),
                "relative_position_bucket(rel, bidirectional=True)")


@checks.add("relative_position_bucket", "causal: la tabla de la lección",
            "causal: the lesson's table")
def buckets_causal() -> None:
    snap.expect(_buckets(RELATIVE, bidirectional=False),
                "relative_position_bucket(rel, bidirectional=False)")


@checks.add("relative_position_bucket", "otros num_buckets y max_distance; conserva la forma",
            "other num_buckets and max_distance; keeps the shape")
def buckets_other_settings() -> None:
    rel = torch.arange(-60, 61).reshape(11, 11)
    for bidirectional in (True, False):
        snap.expect(
            relative_bias.relative_position_bucket(
                rel, bidirectional=bidirectional, num_buckets=16, max_distance=50
            ),
            f"relative_position_bucket(rel (11, 11), bidirectional={bidirectional}, "
            "num_buckets=16, max_distance=50)",
        )


def _module(n_heads: int, **kwargs):
    module = relative_bias.RelativePositionBias(n_heads, **kwargs)
    with torch.no_grad():  # a recognisable table: bias[b, h] = 100 h + b
        rows = torch.arange(module.bias.weight.shape[0], dtype=torch.float32)[:, None]
        module.bias.weight.copy_(rows + 100.0 * torch.arange(n_heads, dtype=torch.float32))
    return module


@checks.add("RelativePositionBias.forward",
            "forma (H, q_len, k_len) y tabla[cubeta(clave - consulta)]",
            "shape (H, q_len, k_len) and table[bucket(key - query)]")
def module_square() -> None:
    got = _module(3, bidirectional=True)(10, 10)
    if isinstance(got, torch.Tensor) and tuple(got.shape) == (10, 10, 3):
        raise CheckFailure(
            "La forma es (q_len, k_len, H): self.bias(cubetas) deja las cabezas al final; "
            "permútalas al principio con .permute(2, 0, 1).",
            "The shape is (q_len, k_len, H): self.bias(buckets) leaves the heads last; move them "
            "first with .permute(2, 0, 1).",
        )
    snap.expect(got, "RelativePositionBias(3, bidirectional=True)(10, 10)")


@checks.add("RelativePositionBias.forward", "consultas alineadas al final (caché KV)",
            "queries aligned to the end (KV cache)")
def module_end_aligned() -> None:
    snap.expect(_module(2, num_buckets=64, max_distance=100, bidirectional=False)(3, 40),
                "RelativePositionBias(2, num_buckets=64, max_distance=100)(3, 40)")


@checks.add("RelativePositionBias.forward", "el sesgo es diferenciable respecto a la tabla",
            "the bias is differentiable with respect to the table")
def module_gradient() -> None:
    module = relative_bias.RelativePositionBias(2, num_buckets=8, max_distance=20)
    module(4, 4).sum().backward()
    grad = module.bias.weight.grad
    if grad is None:
        raise CheckFailure(
            "La tabla no recibe gradiente: usa self.bias(cubetas) y no rompas el grafo (nada de "
            ".detach(), .item() ni torch.tensor(...) sobre el resultado).",
            "The table gets no gradient: use self.bias(buckets) and do not break the graph (no "
            ".detach(), .item() or torch.tensor(...) on the result).",
        )
    # 16 pairs, 2 heads: each bucket's gradient counts how many pairs fall in it.
    snap.expect(grad,
                "bias.weight.grad of RelativePositionBias(2, num_buckets=8, max_distance=20)(4, 4)")


@checks.add("swin_relative_index", "ventana 2 x 2 de la lección", "the lesson's 2 x 2 window")
def swin_two_by_two() -> None:
    snap.expect(relative_bias.swin_relative_index(2, 2), "swin_relative_index(2, 2)")


@checks.add("swin_relative_index", "ventanas no cuadradas (4 x 2, 2 x 5)",
            "non-square windows (4 x 2, 2 x 5)")
def swin_rectangular() -> None:
    for h, w in ((4, 2), (2, 5)):
        snap.expect(relative_bias.swin_relative_index(h, w), f"swin_relative_index({h}, {w})")
