"""Figures of lesson 19.02: the recorded comparisons (text task and copy task)."""

from __future__ import annotations

import statistics

from figures.core import static
from figures.records import compare_rows
from minimodel.compare import colour, draw_loss_vs_length


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
        "Cuatro curvas de exactitud sobre las longitudes 64, 128 y 256. A 64 todas están cerca "
        "de 1 (ALiBi algo por debajo); a 128 y 256 todas caen por debajo de 0.15.",
        "Four accuracy curves over the lengths 64, 128 and 256. At 64 they are all close to 1 "
        "(ALiBi somewhat below); at 128 and 256 they all fall below 0.15.",
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
    _finish(ax, t, rows, t("exactitud", "accuracy"), 64)


@static(
    "19-02-default",
    title=(
        "La comparación por defecto de minimodel compare (entrenado a 128): la pérdida media de "
        "cada codificación a 8 × dividida por la suya a 1 ×; por debajo de 1, mejora al alargar "
        "(resultados registrados).",
        "The default comparison of minimodel compare (trained at 128): each encoding's mean loss "
        "at 8 × divided by its own at 1 ×; below 1, it improves with length (recorded results).",
    ),
    alt=(
        "Barras horizontales del cociente de pérdidas a 8 × y a 1 × de seis codificaciones: "
        "sinusoidal y aprendida cerca de 1.6, RoPE 1.4, sin posición 1.2, T5 1.06 y ALiBi 0.98, "
        "con una línea vertical en 1.",
        "Horizontal bars of the ratio of losses at 8 × and at 1 × for six encodings: sinusoidal "
        "and learned near 1.6, RoPE 1.4, none 1.2, T5 1.06 and ALiBi 0.98, with a vertical line "
        "at 1.",
    ),
    size=(6.4, 2.9),
)
def default(fig, t):
    rows = compare_rows("compare_default.csv")
    loss = {(r["encoding"], r["eval_length"]): r["mean_loss"] for r in rows}
    encodings = list(dict.fromkeys(r["encoding"] for r in rows))
    ratios = [loss[e, 1024] / loss[e, 128] for e in encodings]
    ax = fig.subplots()
    bars = ax.barh(encodings, ratios, color=[colour(e) for e in encodings])
    ax.bar_label(bars, fmt="%.2f", padding=3)
    ax.axvline(1, color="gray", lw=1)
    ax.invert_yaxis()
    ax.set_xlim(0, max(ratios) * 1.2)
    ax.set_xlabel(t("pérdida a 8 × / pérdida a 1 ×", "loss at 8 × / loss at 1 ×"))
