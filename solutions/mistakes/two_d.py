"""Classic mistakes in two_d.py (lesson 17.06): what a student who makes each one writes.

Each function is a wrong ``sinusoidal_2d``, ``interpolate_grid`` or ``apply_rope_2d``. See
``grader/mistakes.py``.
"""

import math

import torch
import torch.nn.functional as F

from grader.mistakes import mistake
from minimodel.positional.two_d import apply_rope_2d as right_rope_2d
from minimodel.positional.two_d import sinusoidal_2d as right_2d


@mistake("sinusoidal_2d", "column_first",
         es="Las mitades están al revés: aquí la primera mitad codifica la FILA y la segunda la "
            "columna (MAE lo hace al contrario).",
         en="The halves are swapped: here the first half encodes the ROW and the second the "
            "column (MAE does it the other way round).")
def column_first(height: int, width: int, d: int, base: float = 10000.0, *,
                 device=None) -> torch.Tensor:
    table = right_2d(height, width, d, base, device=device)
    return torch.cat((table[:, d // 2:], table[:, : d // 2]), dim=1)


@mistake("sinusoidal_2d", "concatenated",
         es="Cada mitad parece [senos | cosenos]; aquí cada mitad va intercalada como en 17.01: "
            "sin, cos, sin, cos, ...",
         en="Each half looks like [sines | cosines]; here each half is interleaved as in 17.01: "
            "sin, cos, sin, cos, ...")
def concatenated(height: int, width: int, d: int, base: float = 10000.0, *,
                 device=None) -> torch.Tensor:
    halves = right_2d(height, width, d, base, device=device).split(d // 2, dim=1)
    return torch.cat([torch.cat((h[:, 0::2], h[:, 1::2]), dim=1) for h in halves], dim=1)


@mistake("sinusoidal_2d", "frequencies",
         es="Parece que las frecuencias usan d en vez de d/2: cada mitad es una tabla 1-D "
            "completa de anchura d/2, con w_i = base^(-2i/(d/2)).",
         en="The frequencies seem to use d instead of d/2: each half is a complete 1-D table of "
            "width d/2, with w_i = base^(-2i/(d/2)).")
def frequencies(height: int, width: int, d: int, base: float = 10000.0, *,
                device=None) -> torch.Tensor:
    inv_freq = base ** (-torch.arange(0, d // 2, 2, dtype=torch.float64) / d)  # not / (d/2)

    def table(n: int) -> torch.Tensor:
        angles = torch.arange(n, dtype=torch.float64)[:, None] * inv_freq
        return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)

    rows = table(height)[:, None, :].expand(height, width, d // 2)
    cols = table(width)[None, :, :].expand(height, width, d // 2)
    grid = torch.cat((rows, cols), dim=-1).reshape(height * width, d)
    return grid.to(device=device, dtype=torch.float32)


def _resize(table: torch.Tensor, new_hw, old_hw, num_prefix_tokens: int, mode: str, *,
            align_corners: bool = False, transposed: bool = False) -> torch.Tensor:
    """``interpolate_grid`` with one of its two mistakes."""
    prefix, cells = table[:num_prefix_tokens], table[num_prefix_tokens:].float()
    h, w = old_hw if old_hw is not None else (math.isqrt(cells.shape[0]),) * 2
    order = (2, 1, 0) if transposed else (2, 0, 1)  # (D, w, h): columns taken for rows
    image = cells.reshape(h, w, -1).permute(*order)[None]
    resized = F.interpolate(image, size=tuple(new_hw), mode=mode, align_corners=align_corners)
    resized = resized[0].permute(1, 2, 0).reshape(new_hw[0] * new_hw[1], -1)
    return torch.cat((prefix, resized.to(table.dtype)))


@mistake("interpolate_grid", "align_corners",
         es="Usa align_corners=False (centros de píxel), como DeiT, MAE y timm.",
         en="Use align_corners=False (pixel centres), as DeiT, MAE and timm do.")
def align_corners(table: torch.Tensor, new_hw, *, old_hw=None, num_prefix_tokens: int = 0,
                  mode: str = "bicubic") -> torch.Tensor:
    return _resize(table, new_hw, old_hw, num_prefix_tokens, mode, align_corners=True)


@mistake("interpolate_grid", "transposed",
         es="Filas y columnas parecen intercambiadas: las celdas van fila a fila, así que "
            "reshape(h, w, D) y después permute(2, 0, 1).",
         en="Rows and columns look swapped: the cells go row by row, so reshape(h, w, D) and "
            "then permute(2, 0, 1).")
def transposed(table: torch.Tensor, new_hw, *, old_hw=None, num_prefix_tokens: int = 0,
               mode: str = "bicubic") -> torch.Tensor:
    return _resize(table, new_hw, old_hw, num_prefix_tokens, mode, transposed=True)


@mistake("apply_rope_2d", "columns_first",
         es="Los bloques están al revés: aquí las dimensiones 0..2F-1 giran con la FILA y "
            "2F..4F-1 con la columna (RoPE-ViT pone primero la columna).",
         en="The blocks are swapped: here dimensions 0..2F-1 turn with the ROW and 2F..4F-1 "
            "with the column (RoPE-ViT puts the column first).")
def columns_first(x: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor,
                  inv_freq: torch.Tensor, *, convention: str = "interleaved") -> torch.Tensor:
    return right_rope_2d(x, cols, rows, inv_freq, convention=convention)
