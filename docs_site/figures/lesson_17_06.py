"""Figures of lesson 17.06: 2-D sinusoidal tables, a resized ViT grid and axial 2-D RoPE."""

from __future__ import annotations

import torch

from figures.core import static
from minimodel.positional.rope import rope_frequencies
from minimodel.positional.two_d import (
    apply_rope_2d,
    grid_positions,
    interpolate_grid,
    sinusoidal_2d,
)

SIDE, WIDTH, TOKEN = 8, 32, (2, 5)


@static(
    "17-06-tables-2d",
    title=(
        "Tabla sinusoidal 2-D en una rejilla de 8 × 8 (d = 32): producto escalar del token de "
        "la fila 2, columna 5 con todos los demás; la mitad de la fila solo ve filas, la de la "
        "columna solo columnas, y la suma ve las dos.",
        "2-D sinusoidal table on an 8 × 8 grid (d = 32): dot product of the token at row 2, "
        "column 5 with every other one; the row half only sees rows, the column half only "
        "columns, and their sum sees both.",
    ),
    alt=(
        "Tres mapas de calor de 8 por 8. El primero tiene franjas horizontales con su máximo en "
        "la fila 2; el segundo, franjas verticales con su máximo en la columna 5; el tercero, la "
        "suma, tiene un único máximo en la casilla de la fila 2 y la columna 5.",
        "Three 8 by 8 heat maps. The first has horizontal stripes peaking at row 2; the second, "
        "vertical stripes peaking at column 5; the third, their sum, has a single peak at the "
        "cell of row 2 and column 5.",
    ),
    size=(7.6, 2.9),
)
def tables_2d(fig, t):
    table = sinusoidal_2d(SIDE, SIDE, WIDTH)  # (64, 32): row half, then column half
    token = TOKEN[0] * SIDE + TOKEN[1]
    half = WIDTH // 2
    parts = {
        t("mitad de la fila", "row half"): table[:, :half] @ table[token, :half],
        t("mitad de la columna", "column half"): table[:, half:] @ table[token, half:],
        t("codificación completa", "full encoding"): table @ table[token],
    }
    for ax, (name, values) in zip(fig.subplots(1, 3), parts.items(), strict=True):
        ax.imshow(values.reshape(SIDE, SIDE).numpy(), cmap="viridis")
        ax.plot(TOKEN[1], TOKEN[0], "r+", ms=10, mew=2)
        ax.set_title(name)
        ax.set_xlabel(t("columna", "column"))
    fig.axes[0].set_ylabel(t("fila", "row"))


@static(
    "17-06-resized-grid",
    title=(
        "Una tabla aprendida de ViT de 4 × 4 posiciones llevada a 7 × 7 con interpolación "
        "bicúbica (un canal): la rejilla nueva es una versión suave de la vieja, con valores que "
        "pueden salirse de su rango.",
        "A learned ViT table of 4 × 4 positions resized to 7 × 7 with bicubic interpolation "
        "(one channel): the new grid is a smooth version of the old one, with values that may "
        "leave its range.",
    ),
    alt=(
        "Dos mapas de calor con la misma escala de color: a la izquierda, 16 casillas de valores "
        "aleatorios; a la derecha, 49 casillas que reproducen el mismo dibujo de zonas claras y "
        "oscuras con transiciones suaves.",
        "Two heat maps with the same colour scale: on the left, 16 cells of random values; on "
        "the right, 49 cells that reproduce the same pattern of light and dark areas with smooth "
        "transitions.",
    ),
    size=(6.4, 3.0),
)
def resized_grid(fig, t):
    table = torch.randn(16, 8, generator=torch.Generator().manual_seed(0))  # as initialised
    resized = interpolate_grid(table, (7, 7))
    low = min(table[:, 0].min(), resized[:, 0].min())
    high = max(table[:, 0].max(), resized[:, 0].max())
    axes = fig.subplots(1, 2)
    for ax, grid, side in ((axes[0], table, 4), (axes[1], resized, 7)):
        image = ax.imshow(
            grid[:, 0].reshape(side, side).numpy(), cmap="coolwarm", vmin=low, vmax=high
        )
        ax.set_title(f"{side} × {side}")
        ax.set_xticks(range(side))
        ax.set_yticks(range(side))
        ax.set_xlabel(t("columna", "column"))
    axes[0].set_ylabel(t("fila", "row"))
    fig.colorbar(image, ax=axes, shrink=0.9, label=t("canal 0", "channel 0"))


@static(
    "17-06-rope-2d",
    title=(
        "RoPE 2-D axial en una rejilla de 8 × 8: el logit entre una consulta y una clave fijas "
        "solo depende del desplazamiento (Δfila, Δcolumna), así que dos consultas distintas ven "
        "el mismo mapa desplazado.",
        "Axial 2-D RoPE on an 8 × 8 grid: the logit between one fixed query and key only "
        "depends on the offset (Δrow, Δcolumn), so two different queries see the same map "
        "shifted.",
    ),
    alt=(
        "Dos mapas de calor de 8 por 8 del logit con cada posición de la clave, para una "
        "consulta en la fila 1, columna 1 y otra en la fila 4, columna 4: el segundo es el "
        "primero desplazado tres filas y tres columnas.",
        "Two 8 by 8 heat maps of the logit with each key position, for a query at row 1, "
        "column 1 and another at row 4, column 4: the second is the first shifted by three rows "
        "and three columns.",
    ),
    size=(6.4, 3.0),
)
def rope_2d(fig, t):
    q, k = torch.randn(2, 16, generator=torch.Generator().manual_seed(0))
    rows, cols = grid_positions(SIDE, SIDE)
    inv_freq = rope_frequencies(8, 100.0)
    keys = apply_rope_2d(k.expand(SIDE * SIDE, -1)[None, None], rows, cols, inv_freq)[0, 0]
    axes = fig.subplots(1, 2)
    for ax, (r, c) in zip(axes, ((1, 1), (4, 4)), strict=True):
        query = apply_rope_2d(q[None, None, None], torch.tensor([r]), torch.tensor([c]),
                              inv_freq)[0, 0, 0]  # fmt: skip
        ax.imshow((keys @ query).reshape(SIDE, SIDE).numpy(), cmap="RdBu_r")
        ax.plot(c, r, "k+", ms=10, mew=2)
        ax.set_title(t(f"consulta en ({r}, {c})", f"query at ({r}, {c})"))
        ax.set_xlabel(t("columna de la clave", "key column"))
    axes[0].set_ylabel(t("fila de la clave", "key row"))
