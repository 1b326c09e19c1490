"""Figures of lesson 18.01, from the recorded default comparison (``compare_default.csv``)."""

from __future__ import annotations

from figures import vega
from figures.core import interactive, static
from figures.records import compare_rows, windows
from minimodel.compare import colour, draw_loss_vs_length
from minimodel.encodings import COURSE

RECORD = "compare_default.csv"
TRAINED = 128


def _encodings(rows: list[dict]) -> list[str]:
    return list(dict.fromkeys(row["encoding"] for row in rows))


@static(
    "18-01-loss-by-window",
    title=(
        "Pérdida media por tramo de posiciones, evaluando a 8 × la longitud de entrenamiento "
        "(1024 tokens, entrenado a 128): sinusoidal y aprendida se disparan nada más pasar de "
        "128; ALiBi sigue plana, y T5 solo sube en el último tramo, más allá de 4 × (resultados "
        "registrados).",
        "Mean loss per window of positions, evaluating at 8 × the training length (1024 tokens, "
        "trained at 128): sinusoidal and learned shoot up right after 128; ALiBi stays flat, and "
        "T5 rises only in the last window, past 4 × (recorded results).",
    ),
    alt=(
        "Seis curvas escalonadas, una por codificación, de la pérdida en los tramos de posiciones "
        "0–128, 128–256, 256–512 y 512–1024. En el primer tramo están todas entre unos 1.6 y 2.0; "
        "después sinusoidal y aprendida suben por encima de 3, RoPE y sin posición suben menos, "
        "y ALiBi y T5 se mantienen entre unos 1.6 y 1.9.",
        "Six step curves, one per encoding, of the loss in the position windows 0–128, 128–256, "
        "256–512 and 512–1024. In the first window they all lie between about 1.6 and 2.0; then "
        "sinusoidal and learned rise above 3, RoPE and no position rise less, and ALiBi and T5 "
        "stay between about 1.6 and 1.9.",
    ),
)
def loss_by_window(fig, t):
    rows = compare_rows(RECORD)
    spans = windows(rows)
    ax = fig.subplots()
    for encoding in _encodings(rows):
        [row] = [r for r in rows if r["encoding"] == encoding and r["eval_length"] == 8 * TRAINED]
        losses = [row[f"loss_{start}_{end}"] for start, end in spans]
        edges = [start for start, _ in spans] + [spans[-1][1]]
        ax.stairs(losses, edges, baseline=None, lw=1.6, label=encoding,
                  color=colour(encoding))
    ax.axvline(TRAINED, color="gray", ls="--", lw=1)
    ax.text(TRAINED, ax.get_ylim()[0], t(" longitud de entrenamiento", " training length"),
            va="bottom", color="gray")  # fmt: skip
    ax.set_xticks(edges)
    ax.set_xlabel(t("posición", "position"))
    ax.set_ylabel(t("pérdida (nats)", "loss (nats)"))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))


@static(
    "18-01-loss-by-length",
    title=(
        "Pérdida media de cada codificación según la longitud de evaluación, de 1 × a 8 × la "
        "de entrenamiento (128), con su error típico (resultados registrados).",
        "Mean loss of each encoding against evaluation length, from 1 × to 8 × the training "
        "length (128), with its standard error (recorded results).",
    ),
    alt=(
        "Seis curvas con barras de error sobre las longitudes 128, 256, 512 y 1024. Sinusoidal "
        "y aprendida suben con fuerza desde 256; RoPE sube a partir de 512; ALiBi y T5 quedan "
        "casi planas, y sin posición empieza la más alta y sube poco.",
        "Six curves with error bars over the lengths 128, 256, 512 and 1024. Sinusoidal and "
        "learned rise steeply from 256; RoPE rises from 512; ALiBi and T5 stay almost flat, and "
        "no position starts highest and rises little.",
    ),
)
def loss_by_length(fig, t):
    ax = fig.subplots()
    draw_loss_vs_length(ax, compare_rows(RECORD))
    ax.set_xticks([TRAINED * 2**k for k in range(4)],
                  [f"{TRAINED * 2**k}\n({2**k}×)" for k in range(4)])  # fmt: skip
    ax.set_xlabel(t("longitud de evaluación", "evaluation length"))
    ax.set_ylabel(t("pérdida media (nats)", "mean loss (nats)"))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))


def explorer_data() -> list[dict]:
    """One row per encoding, evaluation length and window of positions, as recorded."""
    rows = compare_rows(RECORD)
    data = []
    for row in rows:
        for start, end in windows(rows):
            loss = row[f"loss_{start}_{end}"]
            if loss == loss:  # a window past this evaluation length is NaN
                data.append({"encoding": row["encoding"], "length": row["eval_length"],
                             "start": start, "end": end, "loss": loss,
                             "mean": row["mean_loss"]})  # fmt: skip
    return data


@interactive(
    "18-01-explorer",
    title=(
        "Pérdida por tramo de posiciones de cada codificación, entrenada a 128 y evaluada a la "
        "longitud elegida (resultados registrados).",
        "Loss per window of positions of each encoding, trained at 128 and evaluated at the "
        "chosen length (recorded results).",
    ),
    alt=(
        "Figura interactiva: una línea escalonada por codificación con la pérdida media en cada "
        "tramo de posiciones, hasta la longitud de evaluación elegida, con la longitud de "
        "entrenamiento marcada. Controles: longitud de evaluación y codificación destacada, "
        "cuya pérdida media se escribe.",
        "Interactive figure: one step line per encoding with the mean loss in each window of "
        "positions, up to the chosen evaluation length, with the training length marked. "
        "Controls: evaluation length and highlighted encoding, whose mean loss is written.",
    ),
)
def explorer(t):
    rows = compare_rows(RECORD)
    lengths = sorted({r["eval_length"] for r in rows})
    params = [
        vega.radio("length", t("longitud de evaluación", "evaluation length"), lengths,
                   lengths[-1], [f"{L} ({L // TRAINED}×)" for L in lengths]),
        vega.select("highlight", t("codificación destacada", "highlighted encoding"),
                    _encodings(rows), "rope"),
    ]  # fmt: skip
    x = {
        "field": "start",
        "type": "quantitative",
        "title": t("posición", "position"),
        "scale": {"domain": [0, lengths[-1]], "nice": False},
    }
    body = {
        "width": 520, "height": 260,
        "transform": [{"filter": "datum.length == length"}],
        "layer": [
            {"mark": {"type": "rule", "strokeWidth": 2.5},
             "encoding": {"x": x, "x2": {"field": "end"},
                          "y": {"field": "loss", "type": "quantitative",
                                "title": t("pérdida (nats)", "loss (nats)"),
                                "scale": {"zero": False}},
                          "color": {"field": "encoding", "type": "nominal",
                                    "title": t("codificación", "encoding"),
                                    "scale": {"domain": list(COURSE),
                                              "range": [colour(e) for e in COURSE]}},
                          "opacity": {"condition": {"test": "datum.encoding == highlight",
                                                    "value": 1}, "value": 0.35}}},
            {"data": {"values": [{"at": TRAINED}]},
             "mark": {"type": "rule", "strokeDash": [4, 3], "color": "gray"},
             "encoding": {"x": {"field": "at", "type": "quantitative"}}},
            {"transform": [{"filter": "datum.encoding == highlight && datum.start == 0"}],
             **vega.readout(t("highlight + ': pérdida media = ' + format(datum.mean, '.4f')",
                              "highlight + ': mean loss = ' + format(datum.mean, '.4f')"),
                            x=5, y=5)},
        ],
    }  # fmt: skip
    return vega.chart(
        t("Pérdida por posición", "Loss per position"),
        t("Pérdida por tramo de posiciones", "Loss per window of positions"),
        params, body, {"values": explorer_data()},
    )  # fmt: skip
