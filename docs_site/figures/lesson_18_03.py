"""Figures of lesson 18.03: where a chunk sits after a KV cache, and which mask it needs."""

from __future__ import annotations

import torch
from matplotlib.colors import ListedColormap

from figures import vega
from figures.core import interactive, static
from minimodel.positional.cache_positions import (
    causal_mask_after_cache,
    chunk_positions,
    relative_positions,
)

CACHE, CHUNK = 3, 2


def _grid(ax, values: torch.Tensor, allowed: torch.Tensor, t) -> None:
    """Draw ``values`` (q_len, k_len) as numbers, shading the keys a query may not see."""
    ax.imshow(allowed.float().numpy(), cmap=ListedColormap(["#e0e0e0", "#a1d99b"]), vmin=0, vmax=1)
    for (i, j), value in zip(torch.cartesian_prod(torch.arange(values.shape[0]),
                                                  torch.arange(values.shape[1])).tolist(),
                             values.flatten().tolist(), strict=True):  # fmt: skip
        ax.text(j, i, f"{value:g}" if allowed[i, j] else "×", ha="center", va="center")
    ax.set_xticks(range(values.shape[1]))
    ax.set_xlabel(t("clave j (posición)", "key j (position)"))
    ax.axvline(CACHE - 0.5, color="black", lw=1.5)


@static(
    "18-03-positions",
    title=(
        "Un trozo de q = 2 tokens tras una caché de c = 3: las consultas están en las posiciones "
        "3 y 4, no en 0 y 1; cada casilla es la posición relativa clave − consulta (la línea "
        "separa las claves de la caché de las nuevas).",
        "A chunk of q = 2 tokens after a cache of c = 3: the queries are at positions 3 and 4, "
        "not 0 and 1; each cell is the relative position key − query (the line separates the "
        "cached keys from the new ones).",
    ),
    alt=(
        "Matriz de 2 filas por 5 columnas. La fila de la consulta en la posición 3 tiene −3, −2, "
        "−1, 0 y una cruz; la de la consulta en la posición 4 tiene −4, −3, −2, −1, 0. Las "
        "casillas visibles están sombreadas en verde.",
        "A matrix of 2 rows by 5 columns. The row of the query at position 3 has −3, −2, −1, 0 "
        "and a cross; that of the query at position 4 has −4, −3, −2, −1, 0. The visible cells "
        "are shaded green.",
    ),
    size=(5.2, 2.4),
)
def positions(fig, t):
    ax = fig.subplots()
    allowed = causal_mask_after_cache(CACHE, CHUNK) == 0
    _grid(ax, relative_positions(CACHE, CHUNK), allowed, t)
    ax.set_yticks(range(CHUNK), [str(p) for p in chunk_positions(CACHE, CHUNK).tolist()])
    ax.set_ylabel(t("consulta (posición)", "query (position)"))


@static(
    "18-03-masks",
    title=(
        "La máscara de ese trozo: alineada abajo a la derecha (correcta, las últimas q filas de "
        "la máscara causal de c + q tokens) y alineada arriba a la izquierda, la de "
        "is_causal=True de SDPA con q ≠ k, que esconde claves de la caché.",
        "That chunk's mask: aligned bottom-right (right, the last q rows of the causal mask of "
        "c + q tokens) and aligned top-left, SDPA's is_causal=True with q ≠ k, which hides "
        "cached keys.",
    ),
    alt=(
        "Dos matrices de 2 por 5 de casillas visibles y ocultas. En la correcta, la primera "
        "consulta ve 4 claves y la segunda las 5. En la alineada arriba a la izquierda, la "
        "primera consulta ve solo 1 clave y la segunda 2.",
        "Two 2 by 5 matrices of visible and hidden cells. In the right one, the first query sees "
        "4 keys and the second all 5. In the top-left aligned one, the first query sees only 1 "
        "key and the second 2.",
    ),
    size=(7.0, 2.3),
)
def masks(fig, t):
    k_len = CACHE + CHUNK
    right = causal_mask_after_cache(CACHE, CHUNK) == 0
    top_left = torch.ones(CHUNK, k_len, dtype=torch.bool).tril()  # what is_causal=True does
    visible = torch.ones(CHUNK, k_len)
    for ax, allowed, name in zip(fig.subplots(1, 2), (right, top_left),
                                 (t("abajo a la derecha (correcta)", "bottom-right (right)"),
                                  t("arriba a la izquierda (error)", "top-left (bug)")),
                                 strict=True):  # fmt: skip
        _grid(ax, visible, allowed, t)
        ax.set_title(name)
        ax.set_yticks(range(CHUNK), [str(p) for p in chunk_positions(CACHE, CHUNK).tolist()])
    fig.axes[0].set_ylabel(t("consulta", "query"))


MAX_CACHE, MAX_CHUNK = 8, 6


def explorer_data() -> list[dict]:
    """Every cell (query, key) of every (cache, chunk): relative position and whether visible."""
    rows = []
    for cache in range(MAX_CACHE + 1):
        for chunk in range(1, MAX_CHUNK + 1):
            where = chunk_positions(cache, chunk).tolist()
            rel = relative_positions(cache, chunk)
            seen = causal_mask_after_cache(cache, chunk) == 0
            for i in range(chunk):
                rows.append({"cache": cache, "chunk": chunk, "query": where[i],
                             "rel": rel[i].tolist(), "seen": seen[i].tolist()})  # fmt: skip
    return rows


@interactive(
    "18-03-explorer",
    title=(
        "Un trozo tras la caché: la posición de cada consulta nueva, la posición relativa de "
        "cada clave y las que la máscara deja ver.",
        "A chunk after the cache: the position of each new query, the relative position of each "
        "key, and the keys the mask lets it see.",
    ),
    alt=(
        "Figura interactiva: una matriz con una fila por consulta nueva y una columna por clave; "
        "cada casilla visible muestra la posición relativa y las ocultas están en gris. "
        "Controles: tokens en la caché y tokens del trozo.",
        "Interactive figure: a matrix with a row per new query and a column per key; each "
        "visible cell shows the relative position and the hidden ones are grey. Controls: "
        "tokens in the cache and tokens in the chunk.",
    ),
)
def explorer(t):
    params = [
        vega.slider("cache", t("tokens en la caché c", "tokens in the cache c"), 0, MAX_CACHE, 1,
                    3),
        vega.slider("chunk", t("tokens del trozo q", "tokens in the chunk q"), 1, MAX_CHUNK, 1, 2),
    ]  # fmt: skip
    cells = [
        {"filter": "datum.cache == cache && datum.chunk == chunk"},
        {"flatten": ["rel", "seen"]},
        {"window": [{"op": "row_number", "as": "j1"}], "groupby": ["query"]},
        {"calculate": "datum.j1 - 1", "as": "key"},
    ]  # fmt: skip
    x = {"field": "key", "type": "ordinal", "title": t("clave j (posición)", "key j (position)")}
    y = {"field": "query", "type": "ordinal", "title": t("consulta (posición)", "query (position)")}
    body = {
        "width": {"step": 34}, "height": {"step": 34},
        "transform": cells,
        "layer": [
            {"mark": {"type": "rect", "stroke": "white"},
             "encoding": {"x": x, "y": y,
                          "color": {"field": "seen", "type": "nominal",
                                    "title": t("visible", "visible"),
                                    "scale": {"domain": [True, False],
                                              "range": ["#74c476", "#d9d9d9"]},
                                    "legend": {"labelExpr": t(
                                        "datum.value ? 'sí' : 'no'",
                                        "datum.value ? 'yes' : 'no'")}}}},
            {"transform": [{"filter": "datum.seen"}],
             "mark": {"type": "text"},
             "encoding": {"x": x, "y": y, "text": {"field": "rel", "type": "quantitative"}}},
            {"transform": [{"filter": "datum.key == 0"}, {"window": [{"op": "min", "field":
                            "query", "as": "first"}]}, {"filter": "datum.query == datum.first"}],
             **vega.readout(t("'posición de la primera consulta = ' + datum.query",
                              "'position of the first query = ' + datum.query"), x=0, y=-28)},
        ],
    }  # fmt: skip
    return vega.chart(
        t("Posiciones tras la caché KV", "Positions after the KV cache"),
        t("Trozo tras la caché", "Chunk after the cache"),
        params,
        body,
        {"values": explorer_data()},
    )
