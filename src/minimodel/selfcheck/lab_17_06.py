"""Visible checks for lab 17.06 (2-D positions). Students may read these; the grader's differ."""

from __future__ import annotations

import torch

from minimodel.selfcheck.compare import CheckList, StudentModule
from minimodel.selfcheck.snapshots import Snapshots

checks = CheckList()
two_d = StudentModule("two_d")
snap = Snapshots("17.06")


@checks.add("sinusoidal_2d", "forma (H*W, d), float32 y valores", "shape (H*W, d), float32, values")
def sinusoidal_square() -> None:
    snap.expect(two_d.sinusoidal_2d(4, 4, 16), "sinusoidal_2d(4, 4, 16)")


@checks.add("sinusoidal_2d", "rejilla no cuadrada y otra base", "non-square grid and another base")
def sinusoidal_rectangular() -> None:
    snap.expect(two_d.sinusoidal_2d(3, 5, 8, base=100.0), "sinusoidal_2d(3, 5, 8, base=100.0)")


def _learned(rows: int, prefix: int = 1) -> torch.Tensor:
    """A learned table of ``prefix + rows`` positions of width 6 (seeded normal values)."""
    g = torch.Generator().manual_seed(0)
    return torch.randn(prefix + rows, 6, generator=g)


@checks.add("interpolate_grid", "14x14 + CLS -> 24x24 + CLS (bicúbica)",
            "14x14 + CLS -> 24x24 + CLS (bicubic)")
def interpolate_vit() -> None:
    snap.expect(two_d.interpolate_grid(_learned(14 * 14), (24, 24), num_prefix_tokens=1),
                "interpolate_grid(table (197, 6), (24, 24), num_prefix_tokens=1)", atol=1e-5,
                keeps="interpolate_grid")


@checks.add("interpolate_grid", "rejilla rectangular con old_hw, sin prefijo, bilineal",
            "rectangular grid with old_hw, no prefix, bilinear")
def interpolate_rectangular() -> None:
    table = _learned(2 * 3, prefix=0)
    snap.expect(two_d.interpolate_grid(table, (4, 5), old_hw=(2, 3), mode="bilinear"),
                "interpolate_grid(table (6, 6), (4, 5), old_hw=(2, 3))", atol=1e-5,
                keeps="interpolate_grid")


@checks.add("interpolate_grid", "conserva el dtype de la tabla (bfloat16)",
            "keeps the table's dtype (bfloat16)")
def interpolate_keeps_dtype() -> None:
    table = _learned(2 * 3, prefix=1).bfloat16()
    snap.expect(
        two_d.interpolate_grid(table, (3, 4), old_hw=(2, 3), num_prefix_tokens=1),
        "interpolate_grid(table (7, 6) bfloat16, (3, 4), old_hw=(2, 3), num_prefix_tokens=1)",
        atol=2e-2,
        rtol=2e-2,
        keeps="interpolate_grid",
    )


def _rope_inputs():
    """Queries ``(1, 1, 6, 12)``, the grid row and column of each of the 6 tokens, and F = 2
    frequencies (so dimensions 8..11 pass through)."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(1, 1, 6, 12, generator=g)
    rows = torch.tensor([0, 0, 1, 1, 2, 5])
    cols = torch.tensor([0, 3, 1, 2, 0, 4])
    inv_freq = torch.tensor([1.0, 0.1])
    return x, rows, cols, inv_freq


@checks.add("apply_rope_2d", "filas en el primer bloque, columnas en el segundo, el resto intacto",
            "rows in the first block, columns in the second, the rest untouched")
def rope_2d_interleaved() -> None:
    snap.expect(two_d.apply_rope_2d(*_rope_inputs()),
                "apply_rope_2d(x (1, 1, 6, 12), rows, cols, inv_freq (2,))", atol=1e-5)


@checks.add("apply_rope_2d", "convención half dentro de cada bloque",
            "half convention inside each block")
def rope_2d_half() -> None:
    snap.expect(two_d.apply_rope_2d(*_rope_inputs(), convention="half"),
                'apply_rope_2d(..., convention="half")', atol=1e-5)
