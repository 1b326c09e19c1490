# ---------------------------------------------------------------------------------------------
# [es] Completa los bloques marcados "TU CÓDIGO" (lección 17.06). Este archivo es tuyo: una
#      vez que lo editas, ninguna orden del curso lo sobrescribe.
# [en] Fill in the blocks marked "YOUR CODE" (lesson 17.06). This file is yours: once you
#      edit it, no course command overwrites it.
# minimodel-generated:0873e8b83d70
# ---------------------------------------------------------------------------------------------
"""Positions on a 2-D grid of image patches (ViT and after). Lesson 17.06.

Three ways to tell a vision Transformer where each patch is:

- a fixed 2-D sinusoidal table: one half of each vector encodes the row, the other the column;
- a learned table per grid cell, which has to be *interpolated* when the image resolution (and so
  the grid) changes;
- axial 2-D RoPE: half of the rotated dimensions turn with the row, the other half with the
  column, so attention depends on the 2-D offset between patches.

Patches are numbered row by row (token ``n`` is at row ``n // width``, column ``n % width``), the
order of ``patches.flatten(2).transpose(1, 2)`` in ViT.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from minimodel.messages import bilingual
from minimodel.positional.rope import apply_rotary, rope_cos_sin
from minimodel.validation import (
    require_above,
    require_choice,
    require_int,
    require_int_tensor,
    require_tensor,
)


def grid_positions(
    height: int, width: int, *, device: torch.device | str | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Row and column of each token of a ``height x width`` grid, numbered row by row.

    Returns:
        ``(rows, cols)``, LongTensors of shape ``(height * width,)``:
        ``rows[n] = n // width`` and ``cols[n] = n % width``.
    """
    require_int("height", height, 1)
    require_int("width", width, 1)
    n = torch.arange(height * width, device=device)
    return n // width, n % width


def sinusoidal_2d(
    height: int,
    width: int,
    d: int,
    base: float = 10000.0,
    *,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Fixed 2-D sinusoidal encodings: first half of each row encodes the ROW, second the COLUMN.

    For the token at grid row ``r`` and column ``c``, columns ``0 .. d/2 - 1`` hold the 1-D
    sinusoidal encoding of ``r`` with width ``d/2`` and columns ``d/2 .. d - 1`` that of ``c``.
    Each half is interleaved as in lesson 17.01: ``sin(p w_i), cos(p w_i)`` pairs with
    ``w_i = base ** (-2i / (d/2))`` for ``i = 0 .. d/4 - 1``. So ``d`` must be a multiple of 4.

    MAE's ``get_2d_sincos_pos_embed`` uses the same frequencies but puts the column first and
    writes each half as ``[sin ... | cos ...]``: the same numbers in another column order.

    Args:
        height, width: grid size in patches (``>= 1``).
        d: width of each encoding (a multiple of 4).
        base: base of the frequencies (``> 1``).
        device: where to put the result (computed on the CPU in float64).

    Returns:
        Tensor of shape ``(height * width, d)`` and dtype ``float32``, tokens in row-major order
        (``.view(height, width, d)`` gives the grid).

    Raises:
        ValueError: a size ``< 1``, ``d`` not a multiple of 4, or ``base <= 1``.
    """
    require_int("height", height, 1)
    require_int("width", width, 1)
    require_int("d", d, 4)
    require_above("base", base, 1.0)
    if d % 4:
        raise ValueError(
            bilingual(
                f"d debe ser múltiplo de 4 (dos mitades de parejas seno/coseno); recibí d={d}.",
                f"d must be a multiple of 4 (two halves of sine/cosine pairs); got d={d}.",
            )
        )
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar sinusoidal_2d (lección 17.06). Pista: escribe una tabla 1-D "
        "intercalada de ancho d/2 (como en 17.01) para las filas (height posiciones) y otra "
        "para las columnas (width posiciones); el token (r, c) es la concatenación [fila r | "
        "columna c]. Calcula en float64 y devuelve float32.\n[en] sinusoidal_2d is not "
        "implemented yet (lesson 17.06). Hint: write an interleaved 1-D table of width d/2 "
        "(as in 17.01) for the rows (height positions) and one for the columns (width "
        "positions); token (r, c) is the concatenation [row r | column c]. Compute in "
        "float64 and return float32."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


def interpolate_grid(
    table: torch.Tensor,
    new_hw: tuple[int, int],
    *,
    old_hw: tuple[int, int] | None = None,
    num_prefix_tokens: int = 0,
    mode: str = "bicubic",
) -> torch.Tensor:
    """Resize a learned ViT position table to a new grid, as DeiT, MAE and timm do.

    The grid rows of the table are reshaped to an image of ``D`` channels, resized with
    ``torch.nn.functional.interpolate(mode=mode, align_corners=False)`` (pixel centres, no
    antialiasing) and flattened back in row-major order. Prefix rows (a CLS or register token)
    have no grid position: they are copied unchanged, in front.

    Args:
        table: float tensor of shape ``(num_prefix_tokens + h * w, D)``.
        new_hw: ``(new_h, new_w)``, the new grid size (``>= 1`` each).
        old_hw: ``(h, w)``; by default the grid is taken to be square.
        num_prefix_tokens: number of leading rows that are not grid cells (1 for ViT's CLS).
        mode: ``"bicubic"`` (DeiT, MAE, timm) or ``"bilinear"``.

    Returns:
        Tensor of shape ``(num_prefix_tokens + new_h * new_w, D)`` with the dtype and device of
        ``table`` (interpolated in float32, or float64 for a float64 table).

    Raises:
        ValueError: wrong shapes, a non-square grid without ``old_hw``, or an unknown ``mode``.
    """
    require_tensor("table", table, "(num_prefix_tokens + h * w, D)", 2)
    require_int("num_prefix_tokens", num_prefix_tokens, 0)
    require_choice("mode", mode, ("bicubic", "bilinear"))
    new_h, new_w = _grid_size("new_hw", new_hw)
    cells = table.shape[0] - num_prefix_tokens
    if old_hw is None:
        side = math.isqrt(max(cells, 0))
        h, w = side, side
    else:
        h, w = _grid_size("old_hw", old_hw)
    if cells < 1 or h * w != cells:
        raise ValueError(
            bilingual(
                f"table tiene {table.shape[0]} filas: {num_prefix_tokens} de prefijo y {cells} "
                f"celdas, que no forman una rejilla {h}x{w}. Indica old_hw=(alto, ancho) si la "
                "rejilla no es cuadrada.",
                f"table has {table.shape[0]} rows: {num_prefix_tokens} prefix rows and {cells} "
                f"cells, which do not form a {h}x{w} grid. Pass old_hw=(height, width) if the "
                "grid is not square.",
            )
        )
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar interpolate_grid (lección 17.06). Pista: separa las filas de "
        "prefijo; da a las celdas forma (1, D, h, w) (reshape y permute), llama a "
        "F.interpolate(size=(new_h, new_w), mode=mode, align_corners=False), deshaz la forma "
        "a (new_h * new_w, D) y vuelve a poner el prefijo delante.\n[en] interpolate_grid is "
        "not implemented yet (lesson 17.06). Hint: split off the prefix rows; give the cells "
        "shape (1, D, h, w) (reshape and permute), call F.interpolate(size=(new_h, new_w), "
        "mode=mode, align_corners=False), undo the shape to (new_h * new_w, D) and put the "
        "prefix back in front."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


def apply_rope_2d(
    x: torch.Tensor,
    rows: torch.Tensor,
    cols: torch.Tensor,
    inv_freq: torch.Tensor,
    *,
    convention: str = "interleaved",
) -> torch.Tensor:
    """Axial 2-D RoPE: dimensions ``0 .. 2F-1`` turn with the row, ``2F .. 4F-1`` with the column.

    Each block of ``2F`` dimensions is an ordinary RoPE block (lesson 17.03) in the given
    convention, driven by one coordinate; dimensions from ``4F`` on pass through. Then
    ``<R(r1, c1) q, R(r2, c2) k>`` depends only on ``(r2 - r1, c2 - c1)``. For a full rotation of
    a head of dimension ``D`` use ``inv_freq = rope_frequencies(D // 2, base)`` (RoPE-ViT uses
    ``base = 100``). RoPE-ViT puts the column (x) block first; here the row block comes first, as
    in ``sinusoidal_2d``.

    Args:
        x: queries or keys of shape ``(B, H, N, D)`` (``N`` patches), any float dtype.
        rows, cols: integer tensors of shape ``(N,)`` or ``(B, N)``: each token's grid row and
            column (see ``grid_positions``); a CLS token can be given position ``(0, 0)``.
        inv_freq: float tensor of shape ``(F,)`` with ``4F <= D``.
        convention: ``"interleaved"`` or ``"half"``, applied inside each block.

    Returns:
        Tensor with the shape, dtype and device of ``x``.

    Raises:
        ValueError: wrong shapes or dtypes, ``4F > D`` or an unknown ``convention``.
    """
    require_tensor("x", x, "(B, H, N, D)", 4)
    require_int_tensor("rows", rows, "(N,) | (B, N)", (1, 2))
    require_int_tensor("cols", cols, "(N,) | (B, N)", (1, 2))
    require_tensor("inv_freq", inv_freq, "(F,)", 1)
    require_choice("convention", convention, ("interleaved", "half"))
    B, _, N, D = x.shape
    for name, pos in (("rows", rows), ("cols", cols)):
        if pos.shape[-1] != N or (pos.dim() == 2 and pos.shape[0] != B):
            raise ValueError(
                bilingual(
                    f"{name} debe tener forma ({N},) o ({B}, {N}); recibí {tuple(pos.shape)}.",
                    f"{name} must have shape ({N},) or ({B}, {N}); got {tuple(pos.shape)}.",
                )
            )
    if 4 * inv_freq.shape[0] > D:
        raise ValueError(
            bilingual(
                f"inv_freq tiene {inv_freq.shape[0]} frecuencias: la RoPE 2-D rota "
                f"{4 * inv_freq.shape[0]} dimensiones, pero la cabeza solo tiene D={D}.",
                f"inv_freq has {inv_freq.shape[0]} frequencies: 2-D RoPE rotates "
                f"{4 * inv_freq.shape[0]} dimensions, but the head has only D={D}.",
            )
        )
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar apply_rope_2d (lección 17.06). Pista: con F = len(inv_freq), "
        "calcula cos y sin de las filas y de las columnas con rope_cos_sin (posiciones en el "
        "dispositivo de x), rota x[..., :2F] con los de las filas y x[..., 2F:4F] con los de "
        "las columnas (apply_rotary), y concatena el resto sin tocar.\n[en] apply_rope_2d is "
        "not implemented yet (lesson 17.06). Hint: with F = len(inv_freq), compute cos and "
        "sin of the rows and of the columns with rope_cos_sin (positions on x's device), "
        "rotate x[..., :2F] with the row ones and x[..., 2F:4F] with the column ones "
        "(apply_rotary), and concatenate the rest untouched."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


def _grid_size(name: str, hw: object) -> tuple[int, int]:
    """``hw`` as a pair of integers ``>= 1``."""
    if not isinstance(hw, (tuple, list)) or len(hw) != 2:
        raise ValueError(
            bilingual(
                f"{name} debe ser un par (alto, ancho); recibí {hw!r}.",
                f"{name} must be a pair (height, width); got {hw!r}.",
            )
        )
    require_int(f"{name}[0]", hw[0], 1)
    require_int(f"{name}[1]", hw[1], 1)
    return int(hw[0]), int(hw[1])
