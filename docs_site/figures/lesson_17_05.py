"""Figures of lesson 17.05: T5's buckets (bidirectional and causal) and Swin's relative index."""

from __future__ import annotations

import torch

from figures import vega
from figures.core import interactive, static
from minimodel.positional.relative_bias import relative_position_bucket, swin_relative_index


def _buckets(fig, t, bidirectional: bool) -> None:
    r = torch.arange(-200, 201)
    ax = fig.subplots()
    for num_buckets, max_distance in ((32, 128), (16, 64)):
        buckets = relative_position_bucket(
            r, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
        )
        ax.step(r, buckets, where="mid", lw=1.2,
                label=t(f"{num_buckets} cubetas, distancia máxima {max_distance}",
                        f"{num_buckets} buckets, max distance {max_distance}"))  # fmt: skip
    ax.axvline(0, color="gray", lw=0.6)
    ax.set_xlabel(t("posición relativa r = clave − consulta", "relative position r = key − query"))
    ax.set_ylabel(t("cubeta", "bucket"))
    ax.legend(fontsize=8, loc="upper left" if bidirectional else "upper right")


@static(
    "17-05-buckets-bidirectional",
    title=(
        "Cubetas de T5 bidireccionales (codificador): la mitad para las claves anteriores y la "
        "otra mitad para las posteriores; exactas cerca, logarítmicas lejos, fijas más allá de "
        "la distancia máxima.",
        "T5's bidirectional buckets (encoder): half for the keys before and half for the keys "
        "after; exact nearby, logarithmic far away, fixed beyond the max distance.",
    ),
    alt=(
        "Escalones de la cubeta frente a la posición relativa de −200 a 200. Para r ≤ 0 las "
        "cubetas suben de 0 a la mitad del total; para r > 0 empiezan en la mitad y suben hasta "
        "la última; los escalones se alargan con la distancia y la curva queda plana lejos.",
        "Steps of the bucket against relative position from −200 to 200. For r ≤ 0 the buckets "
        "rise from 0 to half the total; for r > 0 they start at half and rise to the last one; "
        "the steps get longer with distance and the curve is flat far away.",
    ),
)
def buckets_bidirectional(fig, t):
    _buckets(fig, t, True)


@static(
    "17-05-buckets-causal",
    title=(
        "Cubetas de T5 causales (decodificador): todas las cubetas para las claves anteriores; "
        "toda clave futura cae en la cubeta 0, que la máscara causal oculta.",
        "T5's causal buckets (decoder): every bucket for the keys before; every future key falls "
        "into bucket 0, which the causal mask hides.",
    ),
    alt=(
        "Escalones de la cubeta frente a la posición relativa de −200 a 200. Para r ≥ 0 la cubeta "
        "es 0; para r < 0 sube con la distancia, primero de uno en uno y luego en escalones cada "
        "vez más largos, hasta la última cubeta.",
        "Steps of the bucket against relative position from −200 to 200. For r ≥ 0 the bucket "
        "is 0; for r < 0 it rises with distance, first one by one and then in longer and longer "
        "steps, up to the last bucket.",
    ),
)
def buckets_causal(fig, t):
    _buckets(fig, t, False)


@static(
    "17-05-swin-index",
    title=(
        "Índice relativo de Swin en una ventana de 3 × 3: la fila de la tabla de 5 × 5 = 25 "
        "sesgos que usa cada par (consulta, clave); la diagonal es el centro, 12.",
        "Swin's relative index in a 3 × 3 window: the row of the table of 5 × 5 = 25 biases that "
        "each (query, key) pair uses; the diagonal is the centre, 12.",
    ),
    alt=(
        "Matriz de 9 por 9 con un número entero de 0 a 24 en cada casilla. La diagonal vale 12 "
        "en todas sus casillas y los valores crecen hacia abajo a la izquierda y decrecen hacia "
        "arriba a la derecha.",
        "A 9 by 9 matrix with an integer from 0 to 24 in each cell. The diagonal is 12 in every "
        "cell and the values grow towards the bottom left and shrink towards the top right.",
    ),
    size=(4.6, 4.2),
)
def swin_index(fig, t):
    index = swin_relative_index(3, 3)
    ax = fig.subplots()
    ax.imshow(index.numpy(), cmap="cividis")
    for (a, b), value in zip(torch.cartesian_prod(torch.arange(9), torch.arange(9)).tolist(),
                             index.flatten().tolist(), strict=True):  # fmt: skip
        ax.text(b, a, str(value), ha="center", va="center", fontsize=8,
                color="black" if value > 12 else "white")  # fmt: skip
    ax.set_xlabel(t("clave b (fila a fila)", "key b (row by row)"))
    ax.set_ylabel(t("consulta a", "query a"))


BUCKETS, DISTANCES, RANGE = (8, 16, 32, 64), (64, 128, 256), 300


def explorer_data() -> list[dict]:
    """The bucket of every r in [−RANGE, RANGE] for every setting, from the reference."""
    r = torch.arange(-RANGE, RANGE + 1)
    rows = []
    for bidirectional in (True, False):
        for num_buckets in BUCKETS:
            for max_distance in DISTANCES:
                found = relative_position_bucket(r, bidirectional=bidirectional,
                                                 num_buckets=num_buckets,
                                                 max_distance=max_distance)  # fmt: skip
                rows.append({"mode": "bidirectional" if bidirectional else "causal",
                             "buckets": num_buckets, "distance": max_distance,
                             "bucket": found.tolist()})  # fmt: skip
    return rows


@interactive(
    "17-05-explorer",
    title=(
        "Cubetas de T5 frente a la posición relativa, para el número de cubetas, la distancia "
        "máxima y el modo elegidos.",
        "T5's buckets against relative position, for the chosen number of buckets, max distance "
        "and mode.",
    ),
    alt=(
        "Figura interactiva: escalones de la cubeta frente a la posición relativa de −300 a 300, "
        "con un punto en la posición relativa elegida y su cubeta escrita. Controles: número de "
        "cubetas, distancia máxima, bidireccional o causal, y posición relativa.",
        "Interactive figure: steps of the bucket against relative position from −300 to 300, "
        "with a point at the chosen relative position and its bucket written. Controls: number "
        "of buckets, max distance, bidirectional or causal, and relative position.",
    ),
)
def explorer(t):
    params = [
        vega.select("buckets", t("número de cubetas", "number of buckets"), list(BUCKETS), 32),
        vega.select("distance", t("distancia máxima", "max distance"), list(DISTANCES), 128),
        vega.radio("mode", t("modo", "mode"), ["bidirectional", "causal"], "bidirectional",
                   [t("bidireccional", "bidirectional"), t("causal", "causal")]),
        vega.slider("r", t("posición relativa r", "relative position r"), -RANGE, RANGE, 1, -20),
    ]  # fmt: skip
    x = {
        "field": "rel",
        "type": "quantitative",
        "title": t("posición relativa r = clave − consulta", "relative position r = key − query"),
    }
    y = {"field": "bucket", "type": "quantitative", "title": t("cubeta", "bucket")}
    body = {
        "width": 560, "height": 260,
        "transform": [
            {"filter": "datum.mode == mode && datum.buckets == buckets && "
                       "datum.distance == distance"},
            {"flatten": ["bucket"]},
            {"window": [{"op": "row_number", "as": "index"}]},
            {"calculate": f"datum.index - 1 - {RANGE}", "as": "rel"},
        ],
        "layer": [
            {"mark": {"type": "line", "interpolate": "step"}, "encoding": {"x": x, "y": y}},
            {"transform": [{"filter": "datum.rel == r"}],
             "mark": {"type": "point", "filled": True, "size": 90, "color": "black"},
             "encoding": {"x": x, "y": y}},
            {"transform": [{"filter": "datum.rel == r"}],
             **vega.readout(t("'cubeta(' + r + ') = ' + datum.bucket",
                              "'bucket(' + r + ') = ' + datum.bucket"), x=5, y=5)},
        ],
    }  # fmt: skip
    return vega.chart(
        t("Cubetas de T5", "T5's buckets"),
        t("Cubetas de T5", "T5's buckets"),
        params,
        body,
        {"values": explorer_data()},
    )
