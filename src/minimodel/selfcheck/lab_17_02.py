"""Visible checks for lab 17.02 (learned positions). Students may read them; the grader's differ."""

from __future__ import annotations

import numpy as np
import torch

from minimodel.selfcheck.compare import CheckList, expect_array

checks = CheckList()
FORWARD = "LearnedPositionalEmbedding.forward"
INTERPOLATE = "interpolate_positions"


def _student():
    from minimodel.positional import learned

    return learned


def _table(max_len: int, d_model: int):
    """A module whose rows are easy to recognise: row p is p + [0, 0.01, 0.02, ...]."""
    module = _student().LearnedPositionalEmbedding(max_len, d_model)
    with torch.no_grad():
        module.weight.copy_(torch.arange(max_len)[:, None] + 0.01 * torch.arange(d_model))
    return module


def linear_resize(table: np.ndarray, new_len: int) -> np.ndarray:
    """The lesson's formula, one row at a time: new row j is the table read at j (L-1)/(n-1)."""
    L = table.shape[0]
    out = np.empty((new_len, table.shape[1]))
    for j in range(new_len):
        s = j * (L - 1) / (new_len - 1) if new_len > 1 else 0.0
        lo = min(int(np.floor(s)), L - 1)
        hi = min(lo + 1, L - 1)
        out[j] = (1 - (s - lo)) * table[lo] + (s - lo) * table[hi]
    return out


def interpolation_mistakes(table: np.ndarray, new_len: int) -> dict:
    L = table.shape[0]
    # align_corners=False: new row j sits at (j + 0.5) L / n - 0.5 (clamped to the table).
    where = np.clip((np.arange(new_len) + 0.5) * L / new_len - 0.5, 0, L - 1)
    lo = np.floor(where).astype(int)
    hi = np.minimum(lo + 1, L - 1)
    frac = (where - lo)[:, None]
    centres = (1 - frac) * table[lo] + frac * table[hi]
    nearest = table[np.rint(np.arange(new_len) * (L - 1) / (new_len - 1)).astype(int)]
    return {
        "align_corners_false": (
            centres,
            "Parece que colocaste las filas nuevas en los centros de celda (align_corners=False). "
            "En este curso la primera y la última fila se conservan: la fila j está en "
            "j (L-1)/(new_len-1).",
            "It looks like you placed the new rows at cell centres (align_corners=False). In this "
            "course the first and last rows are kept: row j sits at j (L-1)/(new_len-1).",
        ),
        "nearest": (
            nearest,
            "Parece que copiaste la fila más cercana en vez de mezclar las dos vecinas.",
            "It looks like you copied the nearest row instead of blending the two neighbours.",
        ),
    }


@checks.add(FORWARD, "suma las filas 0..T-1", "adds rows 0..T-1")
def adds_rows() -> None:
    module = _table(8, 4)
    x = torch.ones(2, 5, 4)
    expected = x + module.weight.detach()[:5]
    expect_array(module(x).detach(), expected, name="table(x)")


@checks.add(FORWARD, "respeta el offset (caché KV)", "honours the offset (KV cache)")
def honours_offset() -> None:
    module = _table(10, 3)
    x = torch.zeros(1, 4, 3)
    expected = module.weight.detach()[6:10].unsqueeze(0)
    expect_array(module(x, offset=6).detach(), expected, name="table(x, offset=6)")


@checks.add(FORWARD, "conserva el dtype de x", "keeps the dtype of x")
def keeps_dtype() -> None:
    module = _table(4, 2)
    x = torch.zeros(4, 2, dtype=torch.float64)
    expected = module.weight.detach().double()
    expect_array(module(x).detach(), expected, name="table(x_float64)")


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
    out = _student().interpolate_positions(table, 7)
    expected = torch.from_numpy(linear_resize(table.numpy(), 7)).float()
    expect_array(out[[0, -1]], expected[[0, -1]], name="interpolate_positions(table, 7)[[0, -1]]")


@checks.add(INTERPOLATE, "mezcla lineal de las filas vecinas", "linear blend of neighbouring rows")
def linear_values() -> None:
    generator = torch.Generator().manual_seed(0)
    table = torch.randn(5, 3, generator=generator)
    out = _student().interpolate_positions(table, 13)
    expected = linear_resize(table.double().numpy(), 13)
    expect_array(
        out,
        torch.from_numpy(expected).float(),
        name="interpolate_positions(table, 13)",
        atol=1e-5,
        mistakes=interpolation_mistakes(table.double().numpy(), 13),
    )


@checks.add(INTERPOLATE, "también encoge la tabla", "also shrinks the table")
def shrinks() -> None:
    table = torch.arange(20, dtype=torch.float64).reshape(10, 2)
    out = _student().interpolate_positions(table, 4)
    expected = torch.from_numpy(linear_resize(table.numpy(), 4))
    expect_array(out, expected, name="interpolate_positions(table, 4)", atol=1e-9)


@checks.add(INTERPOLATE, "casos de una sola fila", "single-row cases")
def single_rows() -> None:
    table = torch.tensor([[1.0, -2.0]])
    grown = _student().interpolate_positions(table, 3)
    expect_array(grown, table.repeat(3, 1), name="interpolate_positions(1 row, 3)")
    many = torch.arange(8, dtype=torch.float32).reshape(4, 2)
    one = _student().interpolate_positions(many, 1)
    expect_array(one, many[:1], name="interpolate_positions(4 rows, 1)")
