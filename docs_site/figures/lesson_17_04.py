"""Figures of lesson 17.04: ALiBi's bias matrices and its geometric slopes."""

from __future__ import annotations

import numpy as np

from figures import vega
from figures.core import interactive, rounded, static
from minimodel.positional.alibi import alibi_bias, alibi_slopes


@static(
    "17-04-bias",
    title=(
        "Sesgo de ALiBi para 8 cabezas y 8 tokens (causal): −m·(i − j) debajo de la diagonal; "
        "la cabeza 1 castiga la distancia 128 veces más que la cabeza 8.",
        "ALiBi's bias for 8 heads and 8 tokens (causal): −m·(i − j) below the diagonal; head 1 "
        "penalises distance 128 times more than head 8.",
    ),
    alt=(
        "Dos matrices triangulares de 8 por 8 con ceros en la diagonal y valores cada vez más "
        "negativos hacia la esquina inferior izquierda: en la cabeza 1 llegan a −3.5; en la "
        "cabeza 8, con la misma forma, solo a unas −0.027.",
        "Two 8 by 8 triangular matrices with zeros on the diagonal and values more and more "
        "negative towards the bottom-left corner: in head 1 they reach −3.5; in head 8, with the "
        "same shape, only about −0.027.",
    ),
    size=(7.0, 3.2),
)
def bias(fig, t):
    slopes = alibi_slopes(8)
    matrices = alibi_bias(8, 8, slopes)  # (8, 8, 8), -inf above the diagonal
    for ax, head in zip(fig.subplots(1, 2), (0, 7), strict=True):
        shown = np.ma.masked_invalid(matrices[head].numpy())
        image = ax.imshow(shown, cmap="magma")
        ax.set_title(t(f"cabeza {head + 1}: m = {slopes[head]:g}",
                       f"head {head + 1}: m = {slopes[head]:g}"))  # fmt: skip
        ax.set_xlabel(t("clave j", "key j"))
        ax.set_ylabel(t("consulta i", "query i"))
        fig.colorbar(image, ax=ax, shrink=0.85)


@static(
    "17-04-slopes",
    title=(
        "Pendientes de ALiBi para 8 y 12 cabezas: con 8, la progresión $2^{-8h/H}$; con 12, las 8 "
        "de H = 8 más 4 intercaladas de la progresión de 16.",
        "ALiBi's slopes for 8 and 12 heads: with 8, the progression $2^{-8h/H}$; with 12, the 8 of "
        "H = 8 plus 4 interleaved from the progression of 16.",
    ),
    alt=(
        "Pendiente de cada cabeza en escala logarítmica de base 2. Las 8 cabezas forman una recta "
        "de 1/2 a 1/256; las 12 cabezas repiten esos 8 valores y añaden 4 puntos entre ellos.",
        "Slope of each head on a base-2 log scale. The 8 heads form a line from 1/2 to 1/256; "
        "the 12 heads repeat those 8 values and add 4 points between them.",
    ),
    size=(6.4, 3.2),
)
def slopes(fig, t):
    ax = fig.subplots()
    for heads, marker in ((8, "o"), (12, "x")):
        values = alibi_slopes(heads)
        ax.plot(range(1, heads + 1), values, marker, ms=7,
                label=t(f"{heads} cabezas", f"{heads} heads"))  # fmt: skip
    ax.set_yscale("log", base=2)
    ax.set_xlabel(t("cabeza h", "head h"))
    ax.set_ylabel(t("pendiente $m_h$", "slope $m_h$"))
    ax.legend()


TOKENS, MAX_HEADS = 12, 16


def explorer_data() -> list[dict]:
    """For every number of heads: each head's slope and its bias rows (T = 12, causal)."""
    rows = []
    for heads in range(1, MAX_HEADS + 1):
        slopes = alibi_slopes(heads)
        matrices = alibi_bias(TOKENS, TOKENS, slopes).nan_to_num(neginf=np.nan)
        for head in range(heads):
            bias_rows = [[None if np.isnan(v) else round(float(v), 3) for v in row]
                         for row in matrices[head].tolist()]  # fmt: skip
            rows.append({"heads": heads, "head": head + 1, "slope": rounded(slopes[head], 6),
                         "bias": bias_rows})  # fmt: skip
    return rows


@interactive(
    "17-04-explorer",
    title=(
        "ALiBi: el sesgo de cada cabeza sobre las claves de la consulta i elegida, y las "
        "pendientes.",
        "ALiBi: each head's bias over the keys of the chosen query i, and the slopes.",
    ),
    alt=(
        "Figura interactiva con dos gráficos: a la izquierda, una recta por cabeza con el sesgo "
        "de la consulta i frente a la clave j, que vale 0 en j = i y baja hacia j = 0; a la "
        "derecha, la pendiente de cada cabeza en escala logarítmica. Controles: número de "
        "cabezas y posición de la consulta.",
        "Interactive figure with two charts: on the left, one line per head with query i's bias "
        "against key j, which is 0 at j = i and falls towards j = 0; on the right, each head's "
        "slope on a log scale. Controls: number of heads and query position.",
    ),
)
def explorer(t):
    params = [
        vega.slider("heads", t("número de cabezas H", "number of heads H"), 1, MAX_HEADS, 1, 8),
        vega.slider("query", t("posición de la consulta i", "query position i"), 0, TOKENS - 1,
                    1, 10),
    ]  # fmt: skip
    of_heads = {"filter": "datum.heads == heads"}
    # Below the charts, in rows of 8: all 16 heads fit in the figure's width and height.
    head_colour = {"field": "head", "type": "ordinal", "title": t("cabeza h", "head h"),
                   "scale": {"scheme": "viridis"},
                   "legend": {"orient": "bottom", "columns": 8}}  # fmt: skip
    rows = {
        "width": 290, "height": 240,
        "title": t("Sesgo de la consulta i sobre cada clave j", "Query i's bias over each key j"),
        "transform": [of_heads, {"calculate": "datum.bias[query]", "as": "row"},
                      {"flatten": ["row"]},
                      {"window": [{"op": "row_number", "as": "j1"}], "groupby": ["head"]},
                      {"calculate": "datum.j1 - 1", "as": "key"},
                      {"filter": "datum.row != null"}],
        "mark": {"type": "line", "point": {"size": 10}},
        "encoding": {
            "x": {"field": "key", "type": "quantitative", "title": t("clave j", "key j"),
                  "scale": {"domain": [0, TOKENS - 1]}},
            "y": {"field": "row", "type": "quantitative", "title": t("sesgo", "bias")},
            "color": head_colour,
        },
    }  # fmt: skip
    slopes = {
        "width": 200, "height": 240,
        "title": t("Pendiente de cada cabeza", "Slope of each head"),
        "transform": [of_heads],
        "layer": [
            {"mark": {"type": "point", "filled": True, "size": 60},
             "encoding": {
                 "x": {"field": "head", "type": "quantitative", "title": t("cabeza h", "head h"),
                       "scale": {"domain": [1, MAX_HEADS]}},
                 "y": {"field": "slope", "type": "quantitative",
                       "title": t("pendiente mₕ", "slope mₕ"), "scale": {"type": "log", "base": 2}},
                 "color": head_colour}},
            # Top right: the slopes fall from head 1 (top left) to head H (bottom right).
            {"transform": [{"filter": "datum.head == 1"}],
             **vega.readout("'m₁ = ' + format(datum.slope, '.6f')", x=195, align="right")},
        ],
    }  # fmt: skip
    return vega.chart(
        "ALiBi",
        t("Sesgos y pendientes de ALiBi", "ALiBi's biases and slopes"),
        params,
        {"hconcat": [rows, slopes]},
        {"values": explorer_data()},
    )
