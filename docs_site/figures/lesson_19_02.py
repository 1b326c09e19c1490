"""Figures of lesson 19.02: the recorded comparisons (text task and copy task)."""

from __future__ import annotations

import statistics

from figures.core import static
from figures.records import compare_rows
from minimodel.compare import colour, draw_loss_vs_length
from minimodel.data.tasks import N_SYMBOLS


def _finish(ax, t, rows: list[dict], label: str, trained: int) -> None:
    """Axes of a figure against evaluation length: training length marked, lengths as ticks."""
    lengths = sorted({r["eval_length"] for r in rows})
    ax.axvline(trained, color="gray", ls="--", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [str(L) for L in lengths])
    ax.set_xlabel(t("longitud de evaluación", "evaluation length"))
    ax.set_ylabel(label)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))


@static(
    "19-02-text",
    title=(
        "Texto: pérdida media de cada codificación según la longitud de evaluación, entrenado a "
        "64, media y desviación típica sobre 5 semillas (resultados registrados).",
        "Text: mean loss of each encoding against evaluation length, trained at 64, mean and "
        "standard deviation over 5 seeds (recorded results).",
    ),
    alt=(
        "Seis curvas con barras de error sobre las longitudes 64, 128, 256 y 512. A 64 están "
        "todas entre unos 2.1 y 2.4; al alargar, sinusoidal y aprendida suben mucho, RoPE algo, "
        "y ALiBi y T5 se mantienen planas o bajan.",
        "Six curves with error bars over the lengths 64, 128, 256 and 512. At 64 they all lie "
        "between about 2.1 and 2.4; as the length grows, sinusoidal and learned rise a lot, "
        "RoPE somewhat, and ALiBi and T5 stay flat or fall.",
    ),
)
def text(fig, t):
    rows = compare_rows("19_02_text_results.csv")
    ax = fig.subplots()
    draw_loss_vs_length(ax, rows)  # mean ± standard deviation over the seeds
    _finish(ax, t, rows, t("pérdida media (nats)", "mean loss (nats)"), 64)


@static(
    "19-02-copy",
    title=(
        "Copia: exactitud de cada codificación según la longitud de evaluación, entrenado a 64, "
        "media y desviación típica sobre 3 semillas (resultados registrados).",
        "Copy: accuracy of each encoding against evaluation length, trained at 64, mean and "
        "standard deviation over 3 seeds (recorded results).",
    ),
    alt=(
        "Cuatro curvas de exactitud sobre las longitudes 64, 128 y 256, con una línea de puntos "
        "en el azar, 1/64. A 64 todas están cerca de 1 (ALiBi algo por debajo); a 128 y 256 "
        "todas caen por debajo de 0.15, la mayoría cerca del azar.",
        "Four accuracy curves over the lengths 64, 128 and 256, with a dotted line at chance, "
        "1/64. At 64 they are all close to 1 (ALiBi somewhat below); at 128 and 256 they all "
        "fall below 0.15, most of them close to chance.",
    ),
)
def copy(fig, t):
    rows = compare_rows("19_02_copy_results.csv")
    ax = fig.subplots()
    for encoding in dict.fromkeys(r["encoding"] for r in rows):
        lengths = sorted({r["eval_length"] for r in rows if r["encoding"] == encoding})
        mine = [r for r in rows if r["encoding"] == encoding]
        values = [[r["accuracy"] for r in mine if r["eval_length"] == L] for L in lengths]
        means = [statistics.mean(v) for v in values]
        spreads = [statistics.stdev(v) for v in values]
        ax.errorbar(lengths, means, yerr=spreads, marker="o", capsize=3, label=encoding,
                    color=colour(encoding))
    chance = 1 / N_SYMBOLS  # a uniform guess among the symbols
    ax.axhline(chance, color="gray", ls=":", lw=1)
    ax.annotate(t(f"azar: 1/{N_SYMBOLS}", f"chance: 1/{N_SYMBOLS}"), (1, chance),
                xycoords=("axes fraction", "data"), xytext=(-4, 3), textcoords="offset points",
                ha="right", va="bottom", color="gray", fontsize=8)
    _finish(ax, t, rows, t("exactitud", "accuracy"), 64)


@static(
    "19-02-default",
    title=(
        "La comparación por defecto de minimodel compare (4 capas, anchura 128, entrenado a 128, "
        "una semilla), medida como la última columna de la primera tabla: cuánto sube la pérdida "
        "media de 1 × a 8 ×, en nats; por debajo de 0, baja al alargar (resultados registrados).",
        "The default comparison of minimodel compare (4 layers, width 128, trained at 128, one "
        "seed), measured as the last column of the first table: how much the mean loss rises "
        "from 1 × to 8 ×, in nats; below 0, it falls with length (recorded results).",
    ),
    alt=(
        "Barras horizontales de la subida de la pérdida media de 1 × a 8 × de seis "
        "codificaciones: sinusoidal 1.24 nats, aprendida 1.17, RoPE 0.68, sin posición 0.37, "
        "T5 0.10 y ALiBi −0.03, con una línea vertical en 0.",
        "Horizontal bars of the rise of the mean loss from 1 × to 8 × for six encodings: "
        "sinusoidal 1.24 nats, learned 1.17, RoPE 0.68, none 0.37, T5 0.10 and ALiBi −0.03, "
        "with a vertical line at 0.",
    ),
    size=(6.4, 2.9),
)
def default(fig, t):
    rows = compare_rows("compare_default.csv")
    loss = {(r["encoding"], r["eval_length"]): r["mean_loss"] for r in rows}
    trained = min(r["eval_length"] for r in rows)
    encodings = list(dict.fromkeys(r["encoding"] for r in rows))
    rises = [loss[e, 8 * trained] - loss[e, trained] for e in encodings]
    ax = fig.subplots()
    bars = ax.barh(encodings, rises, color=[colour(e) for e in encodings])
    # Every label right of the zero line: a negative bar's own end is next to its tick label.
    for bar, rise in zip(bars, rises, strict=True):
        middle = bar.get_y() + bar.get_height() / 2
        ax.annotate(f"{rise:+.3f}".replace("-", "−"), (max(rise, 0.0), middle), xytext=(3, 0),
                    textcoords="offset points", ha="left", va="center")
    ax.axvline(0, color="gray", lw=1)
    ax.invert_yaxis()
    ax.set_xlim(min(0, *rises) - 0.1, max(rises) * 1.25)
    ax.set_xlabel(t("pérdida media a 8 × − a 1 × (nats)", "mean loss at 8 × − at 1 × (nats)"))
