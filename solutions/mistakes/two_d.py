"""Classic mistakes in two_d.py (lesson 17.06): what a student who makes each one writes.

Each function is a wrong ``sinusoidal_2d``, ``interpolate_grid`` or ``apply_rope_2d``. See
``grader/build/mistakes.py``.
"""

import math

import torch
import torch.nn.functional as F

from grader.build.mistakes import mistake
from minimodel.positional.two_d import apply_rope_2d as right_rope_2d
from minimodel.positional.two_d import sinusoidal_2d as right_2d


@mistake("sinusoidal_2d", "column-first",
         es="Las mitades están al revés: aquí la primera mitad de cada vector codifica la FILA y "
            "la segunda la COLUMNA; tu código las pone al contrario (el orden de MAE).",
         en="The halves are swapped: here the first half of each vector encodes the ROW and the "
            "second the COLUMN; your code puts them the other way round (MAE's order).")
def column_first(height: int, width: int, d: int, base: float = 10000.0, *,
                 device=None) -> torch.Tensor:
    table = right_2d(height, width, d, base, device=device)
    return torch.cat((table[:, d // 2:], table[:, : d // 2]), dim=1)


@mistake("sinusoidal_2d", "blocks",
         es="Cada mitad va intercalada como en la lección 17.01 (sin, cos, sin, cos, …), no como "
            "[sin … | cos …].",
         en="Each half is interleaved as in lesson 17.01 (sin, cos, sin, cos, …), not as "
            "[sin … | cos …].")
def blocks(height: int, width: int, d: int, base: float = 10000.0, *,
           device=None) -> torch.Tensor:
    halves = right_2d(height, width, d, base, device=device).split(d // 2, dim=1)
    return torch.cat([torch.cat((h[:, 0::2], h[:, 1::2]), dim=1) for h in halves], dim=1)


@mistake("sinusoidal_2d", "over-d",
         es="Las frecuencias de cada mitad son base^(−2i/(d/2)): cada mitad es una tabla 1-D "
            "completa de anchura d/2, y el exponente se divide por d/2, no por d.",
         en="The frequencies of each half are base^(−2i/(d/2)): each half is a complete 1-D "
            "table of width d/2, and the exponent is divided by d/2, not by d.")
def over_d(height: int, width: int, d: int, base: float = 10000.0, *,
           device=None) -> torch.Tensor:
    inv_freq = base ** (-torch.arange(0, d // 2, 2, dtype=torch.float64) / d)  # not / (d/2)

    def table(n: int) -> torch.Tensor:
        angles = torch.arange(n, dtype=torch.float64)[:, None] * inv_freq
        return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)

    rows = table(height)[:, None, :].expand(height, width, d // 2)
    cols = table(width)[None, :, :].expand(height, width, d // 2)
    grid = torch.cat((rows, cols), dim=-1).reshape(height * width, d)
    return grid.to(device=device, dtype=torch.float32)


def _resize(*, align_corners: bool = False, read_as_wh: bool = False, permuted: bool = False):
    """``interpolate_grid`` computed as the reference does, with one of its mistakes: the
    corners kept, the grid read (and resized) as ``(w, h)``, or ``permute(2, 1, 0)``."""
    def interpolate_grid(table: torch.Tensor, new_hw, *, old_hw=None, num_prefix_tokens: int = 0,
                         mode: str = "bicubic") -> torch.Tensor:
        work = table if table.dtype == torch.float64 else table.float()
        prefix, cells = work[:num_prefix_tokens], work[num_prefix_tokens:]
        h, w = old_hw if old_hw is not None else (math.isqrt(cells.shape[0]),) * 2
        new_h, new_w = new_hw
        if read_as_wh:
            h, w, new_h, new_w = w, h, new_w, new_h
        image = cells.reshape(h, w, -1).permute(*((2, 1, 0) if permuted else (2, 0, 1)))[None]
        resized = F.interpolate(image, size=(new_h, new_w), mode=mode,
                                align_corners=align_corners)
        resized = resized[0].permute(1, 2, 0).reshape(new_h * new_w, -1)
        return torch.cat((prefix, resized), dim=0).to(table.dtype)

    return interpolate_grid


align_corners = mistake(
    "interpolate_grid", "align-corners",
    es="El cambio de tamaño usa align_corners=False (centros de píxel), como DeiT, MAE y "
       "timm; tu código conserva las esquinas (align_corners=True).",
    en="The resize uses align_corners=False (pixel centres), as DeiT, MAE and timm do; your "
       "code keeps the corners (align_corners=True).")(_resize(align_corners=True))


transposed = mistake(
    "interpolate_grid", "transposed",
    es="Lees la rejilla como (ancho, alto): las filas de la tabla van por filas de la "
       "imagen, reshape(h, w, D), y new_hw es (alto, ancho).",
    en="You read the grid as (width, height): the table's rows go row by row of the image, "
       "reshape(h, w, D), and new_hw is (height, width).")(_resize(read_as_wh=True))


permuted = mistake(
    "interpolate_grid", "permuted",
    es="Filas y columnas parecen intercambiadas: las celdas van fila a fila, así que "
       "reshape(h, w, D) y después permute(2, 0, 1), no permute(2, 1, 0).",
    en="Rows and columns look swapped: the cells go row by row, so reshape(h, w, D) and "
       "then permute(2, 0, 1), not permute(2, 1, 0).")(_resize(permuted=True))


@mistake("apply_rope_2d", "swapped",
         es="Los bloques están al revés: aquí las dimensiones 0..2F-1 giran con la FILA y "
            "2F..4F-1 con la columna, el orden de sinusoidal_2d (RoPE-ViT pone primero la "
            "columna).",
         en="The blocks are swapped: here dimensions 0..2F-1 turn with the ROW and 2F..4F-1 "
            "with the column, the order of sinusoidal_2d (RoPE-ViT puts the column first).")
def swapped(x: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor,
            inv_freq: torch.Tensor, *, convention: str = "interleaved") -> torch.Tensor:
    return right_rope_2d(x, cols, rows, inv_freq, convention=convention)


@mistake("apply_rope_2d", "rows-only",
         es="Cada coordenada tiene su bloque: las dimensiones 0..2F-1 giran con la fila y "
            "2F..4F-1 con la columna, cada bloque con las mismas F frecuencias; tu código gira "
            "los dos bloques con la fila.",
         en="Each coordinate has its own block: dimensions 0..2F-1 turn with the row and "
            "2F..4F-1 with the column, each block with the same F frequencies; your code turns "
            "both blocks with the row.")
def rows_only(x: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor,
              inv_freq: torch.Tensor, *, convention: str = "interleaved") -> torch.Tensor:
    return right_rope_2d(x, rows, rows, inv_freq, convention=convention)
