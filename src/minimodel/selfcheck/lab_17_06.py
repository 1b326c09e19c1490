"""Visible checks for lab 17.06 (2-D positions). Students may read these; the grader's differ."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from minimodel.selfcheck.compare import CheckList, expect_array

checks = CheckList()


def _student():
    from minimodel.positional import two_d

    return two_d


def table_1d(positions: np.ndarray, d: int, base: float = 10000.0) -> np.ndarray:
    """Lesson 17.01's interleaved table at the given positions, entry by entry: (N, d)."""
    out = np.zeros((len(positions), d))
    for n, p in enumerate(positions):
        for i in range(d // 2):
            angle = p / base ** (2 * i / d)
            out[n, 2 * i], out[n, 2 * i + 1] = np.sin(angle), np.cos(angle)
    return out


def formula_2d(height: int, width: int, d: int, base: float = 10000.0) -> np.ndarray:
    rows = np.repeat(np.arange(height), width)
    cols = np.tile(np.arange(width), height)
    half = d // 2
    return np.concatenate([table_1d(rows, half, base), table_1d(cols, half, base)], axis=1)


def mistakes_2d(height: int, width: int, d: int) -> dict:
    right = formula_2d(height, width, d)
    half = d // 2
    rows = np.repeat(np.arange(height), width)
    cols = np.tile(np.arange(width), height)

    def concatenated(block: np.ndarray) -> np.ndarray:
        return np.concatenate([block[:, 0::2], block[:, 1::2]], axis=1)

    return {
        "column_first": (
            np.concatenate([right[:, half:], right[:, :half]], axis=1),
            "Las mitades están al revés: aquí la primera mitad codifica la FILA y la segunda la "
            "columna (MAE lo hace al contrario).",
            "The halves are swapped: here the first half encodes the ROW and the second the "
            "column (MAE does it the other way round).",
        ),
        "concatenated": (
            np.concatenate([concatenated(right[:, :half]), concatenated(right[:, half:])], axis=1),
            "Cada mitad parece [senos | cosenos]; aquí cada mitad va intercalada como en 17.01: "
            "sin, cos, sin, cos, ...",
            "Each half looks like [sines | cosines]; here each half is interleaved as in 17.01: "
            "sin, cos, sin, cos, ...",
        ),
        "frequencies": (
            np.concatenate(
                [
                    table_1d(rows, d, 10000.0)[:, :half],
                    table_1d(cols, d, 10000.0)[:, :half],
                ],
                axis=1,
            ),
            "Parece que las frecuencias usan d en vez de d/2: cada mitad es una tabla 1-D "
            "completa de anchura d/2, con w_i = base^(-2i/(d/2)).",
            "The frequencies seem to use d instead of d/2: each half is a complete 1-D table of "
            "width d/2, with w_i = base^(-2i/(d/2)).",
        ),
    }


@checks.add("sinusoidal_2d", "forma (H*W, d), float32 y valores", "shape (H*W, d), float32, values")
def sinusoidal_square() -> None:
    expect_array(
        _student().sinusoidal_2d(4, 4, 16),
        torch.from_numpy(formula_2d(4, 4, 16).astype(np.float32)),
        name="sinusoidal_2d(4, 4, 16)",
        mistakes=mistakes_2d(4, 4, 16),
    )


@checks.add(
    "sinusoidal_2d",
    "rejilla no cuadrada y otra base",
    "non-square grid and another base",
)
def sinusoidal_rectangular() -> None:
    expect_array(
        _student().sinusoidal_2d(3, 5, 8, base=100.0),
        torch.from_numpy(formula_2d(3, 5, 8, 100.0).astype(np.float32)),
        name="sinusoidal_2d(3, 5, 8, base=100.0)",
    )


def _learned(rows: int, prefix: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    return torch.randn(prefix + rows, 6, generator=g)


def _resize(cells: torch.Tensor, h, w, new_h, new_w, **kwargs) -> torch.Tensor:
    image = cells.reshape(h, w, -1).permute(2, 0, 1)[None]
    out = F.interpolate(image, size=(new_h, new_w), align_corners=False, **kwargs)
    return out[0].permute(1, 2, 0).reshape(new_h * new_w, -1)


@checks.add(
    "interpolate_grid",
    "14x14 + CLS -> 24x24 + CLS (bicúbica)",
    "14x14 + CLS -> 24x24 + CLS (bicubic)",
)
def interpolate_vit() -> None:
    table = _learned(14 * 14)
    expected = torch.cat((table[:1], _resize(table[1:], 14, 14, 24, 24, mode="bicubic")))
    transposed = _resize(
        table[1:].reshape(14, 14, -1).transpose(0, 1).reshape(196, -1),
        14,
        14,
        24,
        24,
        mode="bicubic",
    )
    transposed = transposed.reshape(24, 24, -1).transpose(0, 1).reshape(576, -1)
    corners = table[1:].reshape(14, 14, -1).permute(2, 0, 1)[None]
    corners = F.interpolate(corners, size=(24, 24), mode="bicubic", align_corners=True)
    corners = corners[0].permute(1, 2, 0).reshape(576, -1)
    expect_array(
        _student().interpolate_grid(table, (24, 24), num_prefix_tokens=1),
        expected,
        name="interpolate_grid(table (197, 6), (24, 24), num_prefix_tokens=1)",
        atol=1e-5,
        mistakes={
            "align_corners": (
                torch.cat((table[:1], corners)).numpy(),
                "Usa align_corners=False (centros de píxel), como DeiT, MAE y timm.",
                "Use align_corners=False (pixel centres), as DeiT, MAE and timm do.",
            ),
            "transposed": (
                torch.cat((table[:1], transposed)).numpy(),
                "Filas y columnas parecen intercambiadas: las celdas van fila a fila, así que "
                "reshape(h, w, D) y después permute(2, 0, 1).",
                "Rows and columns look swapped: the cells go row by row, so reshape(h, w, D) and "
                "then permute(2, 0, 1).",
            ),
        },
    )


@checks.add(
    "interpolate_grid",
    "rejilla rectangular con old_hw, sin prefijo, bilineal",
    "rectangular grid with old_hw, no prefix, bilinear",
)
def interpolate_rectangular() -> None:
    table = _learned(2 * 3, prefix=0)
    expected = _resize(table, 2, 3, 4, 5, mode="bilinear")
    got = _student().interpolate_grid(table, (4, 5), old_hw=(2, 3), mode="bilinear")
    expect_array(
        got, expected, name="interpolate_grid(table (6, 6), (4, 5), old_hw=(2, 3))", atol=1e-5
    )


def rope_block(x: np.ndarray, pos: np.ndarray, inv_freq: np.ndarray, convention: str):
    """One RoPE block of 2F dimensions, pair by pair: x (N, 2F), pos (N,)."""
    out = x.copy()
    n_freq = len(inv_freq)
    for t in range(x.shape[0]):
        for i in range(n_freq):
            a_idx, b_idx = (2 * i, 2 * i + 1) if convention == "interleaved" else (i, i + n_freq)
            angle = np.float32(pos[t]) * np.float32(inv_freq[i])
            c, s = np.cos(angle), np.sin(angle)
            a, b = x[t, a_idx], x[t, b_idx]
            out[t, a_idx], out[t, b_idx] = a * c - b * s, a * s + b * c
    return out


def rope_2d_formula(x, rows, cols, inv_freq, convention="interleaved", rows_first=True):
    r = 2 * len(inv_freq)
    first, second = (rows, cols) if rows_first else (cols, rows)
    out = x.copy()
    out[:, :r] = rope_block(x[:, :r], first, inv_freq, convention)
    out[:, r : 2 * r] = rope_block(x[:, r : 2 * r], second, inv_freq, convention)
    return out


def _rope_inputs():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(1, 1, 6, 12, generator=g)
    rows = torch.tensor([0, 0, 1, 1, 2, 5])
    cols = torch.tensor([0, 3, 1, 2, 0, 4])
    inv_freq = torch.tensor([1.0, 0.1])
    return x, rows, cols, inv_freq


@checks.add(
    "apply_rope_2d",
    "filas en el primer bloque, columnas en el segundo, el resto intacto",
    "rows in the first block, columns in the second, the rest untouched",
)
def rope_2d_interleaved() -> None:
    x, rows, cols, inv_freq = _rope_inputs()
    args = (x[0, 0].numpy(), rows.numpy(), cols.numpy(), inv_freq.numpy())
    expected = rope_2d_formula(*args)
    expect_array(
        _student().apply_rope_2d(x, rows, cols, inv_freq),
        torch.from_numpy(expected)[None, None],
        name="apply_rope_2d(x (1, 1, 6, 12), rows, cols, inv_freq (2,))",
        atol=1e-5,
        mistakes={
            "columns_first": (
                rope_2d_formula(*args, rows_first=False)[None, None],
                "Los bloques están al revés: aquí las dimensiones 0..2F-1 giran con la FILA y "
                "2F..4F-1 con la columna (RoPE-ViT pone primero la columna).",
                "The blocks are swapped: here dimensions 0..2F-1 turn with the ROW and 2F..4F-1 "
                "with the column (RoPE-ViT puts the column first).",
            )
        },
    )


@checks.add(
    "apply_rope_2d",
    "convención half dentro de cada bloque",
    "half convention inside each block",
)
def rope_2d_half() -> None:
    x, rows, cols, inv_freq = _rope_inputs()
    expected = rope_2d_formula(
        x[0, 0].numpy(), rows.numpy(), cols.numpy(), inv_freq.numpy(), "half"
    )
    expect_array(
        _student().apply_rope_2d(x, rows, cols, inv_freq, convention="half"),
        torch.from_numpy(expected)[None, None],
        name='apply_rope_2d(..., convention="half")',
        atol=1e-5,
    )
