"""Figures of lesson 17.02: what a learned table starts as, and resizing one."""

from __future__ import annotations

import torch

from figures.core import static
from minimodel.positional.learned import LearnedPositionalEmbedding, interpolate_positions
from minimodel.positional.sinusoidal import sinusoidal_pe


def _cosine(table: torch.Tensor) -> torch.Tensor:
    unit = table / table.norm(dim=1, keepdim=True)
    return unit @ unit.T


@static(
    "17-02-similarity",
    title=(
        "Similitud coseno entre filas: la tabla sinusoidal ya tiene estructura (depende de la "
        "distancia); una tabla aprendida recién inicializada no tiene ninguna hasta entrenarla.",
        "Cosine similarity between rows: the sinusoidal table already has structure (it depends "
        "on the distance); a freshly initialised learned table has none until it is trained.",
    ),
    alt=(
        "Dos mapas de calor de 64 por 64 posiciones. El de la tabla sinusoidal tiene una diagonal "
        "clara y bandas paralelas que se difuminan al alejarse; el de la tabla aprendida al "
        "inicializarla solo muestra la diagonal sobre un fondo de ruido.",
        "Two heat maps of 64 by 64 positions. The sinusoidal table's has a bright diagonal and "
        "parallel bands that fade with distance; the freshly initialised learned table's shows "
        "only the diagonal on a background of noise.",
    ),
    size=(7.0, 3.3),
)
def similarity(fig, t):
    torch.manual_seed(0)
    tables = {
        t("sinusoidal", "sinusoidal"): torch.from_numpy(sinusoidal_pe(64, 64)).float(),
        t("aprendida, sin entrenar", "learned, untrained"):
            LearnedPositionalEmbedding(64, 64).weight.detach(),
    }  # fmt: skip
    axes = fig.subplots(1, 2)
    for ax, (name, table) in zip(axes, tables.items(), strict=True):
        image = ax.imshow(_cosine(table).numpy(), cmap="viridis", vmin=-1, vmax=1)
        ax.set_title(name)
        ax.set_xlabel(t("posición", "position"))
    axes[0].set_ylabel(t("posición", "position"))
    fig.colorbar(image, ax=axes, label=t("similitud coseno", "cosine similarity"), shrink=0.9)


@static(
    "17-02-interpolation",
    title=(
        "Interpolar una tabla de 8 filas a 15: las filas nuevas (cruces) se leen en la tabla "
        "vieja en j·(L−1)/(L'−1) y mezclan las dos filas viejas más cercanas; los extremos se "
        "conservan.",
        "Interpolating a table of 8 rows to 15: the new rows (crosses) are read from the old "
        "table at j·(L−1)/(L'−1) and blend the two nearest old rows; the ends are kept.",
    ),
    alt=(
        "Dos columnas de una tabla de 8 filas dibujadas como puntos unidos por segmentos y, "
        "encima, las 15 filas de la tabla interpolada como cruces que caen sobre esos segmentos, "
        "con la primera y la última fila iguales.",
        "Two columns of an 8-row table drawn as points joined by segments and, on top, the 15 "
        "rows of the interpolated table as crosses that fall on those segments, with the first "
        "and last rows equal.",
    ),
    size=(6.4, 3.2),
)
def interpolation(fig, t):
    old = torch.from_numpy(sinusoidal_pe(8, 8)).float()
    new = interpolate_positions(old, 15)
    where = torch.arange(15) * (8 - 1) / (15 - 1)  # the convention of interpolate_positions
    ax = fig.subplots()
    for column, colour in ((0, "#4c72b0"), (3, "#dd8452")):
        ax.plot(
            old[:, column],
            "o-",
            color=colour,
            label=t(f"columna {column}, 8 filas", f"column {column}, 8 rows"),
        )
        ax.plot(where, new[:, column], "x", ms=8, mew=1.6, color="black")
    ax.plot(
        [],
        [],
        "x",
        color="black",
        label=t("tabla interpolada, 15 filas", "interpolated table, 15 rows"),
    )
    ax.set_xlabel(t("posición en la tabla original", "position in the original table"))
    ax.set_ylabel(t("valor", "value"))
    ax.legend(loc="lower left", fontsize=8)


@static(
    "17-02-past-the-table",
    title=(
        "Más allá de la última fila: la fórmula sinusoidal sigue dando filas nuevas parecidas a "
        "las vecinas; una tabla aprendida de 32 filas no tiene fila para la posición 32.",
        "Past the last row: the sinusoidal formula keeps giving new rows similar to their "
        "neighbours; a learned table of 32 rows has no row for position 32.",
    ),
    alt=(
        "Similitud coseno de cada posición con la anterior, de 1 a 63. La curva sinusoidal es "
        "constante en todas las posiciones; la de la tabla aprendida, ruidosa cerca de cero, se "
        "corta en la posición 31, marcada con una línea vertical.",
        "Cosine similarity of each position with the previous one, from 1 to 63. The sinusoidal "
        "curve is constant at every position; the learned table's, noisy around zero, stops at "
        "position 31, marked by a vertical line.",
    ),
    size=(6.4, 3.0),
)
def past_the_table(fig, t):
    torch.manual_seed(0)
    learned = LearnedPositionalEmbedding(32, 64).weight.detach()
    sinusoidal = torch.from_numpy(sinusoidal_pe(64, 64)).float()

    def neighbours(table: torch.Tensor) -> torch.Tensor:
        return torch.diagonal(_cosine(table), offset=1)

    ax = fig.subplots()
    ax.plot(range(1, 64), neighbours(sinusoidal), label=t("sinusoidal", "sinusoidal"))
    ax.plot(
        range(1, 32),
        neighbours(learned),
        label=t("aprendida, sin entrenar (32 filas)", "learned, untrained (32 rows)"),
    )
    ax.axvline(31.5, color="gray", ls="--", lw=1)
    ax.text(32, 0.5, t(" fin de la tabla", " end of the table"), color="gray")
    ax.set_xlabel(t("posición p", "position p"))
    ax.set_ylabel(t("coseno(PE(p−1), PE(p))", "cosine(PE(p−1), PE(p))"))
    ax.set_ylim(-0.6, 1.1)
    ax.legend(loc="lower left")
