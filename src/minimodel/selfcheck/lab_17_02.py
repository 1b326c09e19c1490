"""Visible checks for lab 17.02 (learned positions). Students may read them; the grader's differ."""

from __future__ import annotations

import torch

from minimodel.selfcheck.compare import CheckList, StudentModule, expect_array
from minimodel.selfcheck.snapshots import Snapshots

checks = CheckList()
learned = StudentModule("learned")
FORWARD = "LearnedPositionalEmbedding.forward"
INTERPOLATE = "interpolate_positions"
snap = Snapshots("17.02")


def _table(max_len: int, d_model: int):
    """A module whose rows are easy to recognise: row p is p + [0, 0.01, 0.02, ...]."""
    module = learned.LearnedPositionalEmbedding(max_len, d_model)
    with torch.no_grad():
        module.weight.copy_(torch.arange(max_len)[:, None] + 0.01 * torch.arange(d_model))
    return module


@checks.add(FORWARD, "suma las filas 0..T-1", "adds rows 0..T-1")
def adds_rows() -> None:
    module = _table(8, 4)
    snap.expect(module(torch.ones(2, 5, 4)).detach(), "table(ones(2, 5, 4))")


@checks.add(FORWARD, "respeta el offset (caché KV)", "honours the offset (KV cache)")
def honours_offset() -> None:
    module = _table(10, 3)
    snap.expect(module(torch.zeros(1, 4, 3), offset=6).detach(), "table(zeros(1, 4, 3), offset=6)")


@checks.add(FORWARD, "conserva el dtype de x", "keeps the dtype of x")
def keeps_dtype() -> None:
    module = _table(4, 2)
    for dtype in ("float64", "bfloat16"):
        x = torch.zeros(4, 2, dtype=getattr(torch, dtype))
        snap.expect(module(x).detach(), f"table(zeros(4, 2, {dtype}))", keeps=FORWARD,
                    atol=1e-2 if dtype == "bfloat16" else 1e-6)


@checks.add(FORWARD, "el gradiente llega a las filas usadas", "the gradient reaches the rows used")
def gradient_reaches_rows() -> None:
    module = _table(6, 2)
    module(torch.zeros(1, 2, 2), offset=3).sum().backward()
    grad = module.weight.grad
    if grad is None:
        grad = torch.zeros(6, 2)
    expected = torch.zeros(6, 2)
    expected[3:5] = 1.0
    expect_array(grad, expected, name="weight.grad")


@checks.add(INTERPOLATE, "forma, dtype y extremos", "shape, dtype and end rows")
def keeps_ends() -> None:
    table = torch.arange(12, dtype=torch.float32).reshape(4, 3)
    out = learned.interpolate_positions(table, 7)
    name = "interpolate_positions(arange(12).reshape(4, 3), 7)"
    expect_array(out, torch.zeros(7, 3), name=name, values=False, keeps=INTERPOLATE)
    expect_array(out[[0, -1]], table[[0, -1]], name=f"{name}[[0, -1]]")  # the end rows, kept
    half = learned.interpolate_positions(table.bfloat16(), 7)  # blended in float32, cast back
    expect_array(half, torch.zeros(7, 3, dtype=torch.bfloat16), values=False, keeps=INTERPOLATE,
                 name="interpolate_positions(arange(12).reshape(4, 3).bfloat16(), 7)")


@checks.add(INTERPOLATE, "mezcla lineal de las filas vecinas", "linear blend of neighbouring rows")
def linear_values() -> None:
    generator = torch.Generator().manual_seed(0)
    table = torch.randn(5, 3, generator=generator)
    out = learned.interpolate_positions(table, 13)
    snap.expect(out, "interpolate_positions(randn(5, 3), 13)", atol=1e-5)


@checks.add(INTERPOLATE, "también encoge la tabla", "also shrinks the table")
def shrinks() -> None:
    table = torch.arange(20, dtype=torch.float64).reshape(10, 2)
    out = learned.interpolate_positions(table, 4)
    snap.expect(out, "interpolate_positions(arange(20.).reshape(10, 2), 4)", atol=1e-9,
                keeps=INTERPOLATE)


@checks.add(INTERPOLATE, "casos de una sola fila", "single-row cases")
def single_rows() -> None:
    table = torch.tensor([[1.0, -2.0]])
    grown = learned.interpolate_positions(table, 3)
    expect_array(grown, table.repeat(3, 1), name="interpolate_positions(1 row, 3)")
    many = torch.arange(8, dtype=torch.float32).reshape(4, 2)
    one = learned.interpolate_positions(many, 1)
    expect_array(one, many[:1], name="interpolate_positions(4 rows, 1)")
