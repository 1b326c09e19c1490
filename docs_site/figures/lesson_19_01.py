"""Figures of lesson 19.01: what each encoding costs, from the recorded benchmarks."""

from __future__ import annotations

from figures.core import spelled, static
from figures.records import attention_tables, training_table
from minimodel.compare import colour

SPEED = {encoding: row["tokens_per_s"] for encoding, row in training_table().items()}
CHEAP = [speed for encoding, speed in SPEED.items() if encoding != "t5"]
LOW, HIGH, T5 = spelled(min(CHEAP), -2), spelled(max(CHEAP), -2), spelled(SPEED["t5"], -3)


@static(
    "19-01-throughput",
    title=(
        "Tokens por segundo de un paso de entrenamiento del Mini-GPT con cada codificación (4 "
        "capas, anchura 128, T = 256, 2 hilos; resultados registrados): solo T5 cuesta de verdad.",
        "Tokens per second of a Mini-GPT training step with each encoding (4 layers, width 128, "
        "T = 256, 2 threads; recorded results): only T5 really costs.",
    ),
    alt=(
        "Diagrama de barras horizontales de los tokens por segundo de seis codificaciones. Sin "
        f"posición, sinusoidal, aprendida, RoPE y ALiBi están todas entre unos {LOW[0]} y "
        f"{HIGH[0]}; T5 se queda en unos {T5[0]}.",
        "Horizontal bar chart of the tokens per second of six encodings. None, sinusoidal, "
        f"learned, RoPE and ALiBi all lie between about {LOW[1]} and {HIGH[1]}; T5 stays at "
        f"about {T5[1]}.",
    ),
    size=(6.4, 2.9),
)
def throughput(fig, t):
    ax = fig.subplots()
    values = list(SPEED.values())
    bars = ax.barh(list(SPEED), values, color=[colour(e) for e in SPEED])
    ax.bar_label(bars, fmt="%.0f", padding=3)
    ax.invert_yaxis()
    ax.set_xlim(0, max(values) * 1.2)
    ax.set_xlabel(t("tokens por segundo", "tokens per second"))


# The benchmark's cases -> the encoding whose colour each takes (fused causal attention is what
# the encodings without a bias use: grey, as none) and its name in each language.
CASES = {"causal (fused)": ("none", "causal fusionada", "fused causal"),
         "alibi bias": ("alibi", "sesgo de ALiBi", "ALiBi bias"),
         "t5 bias": ("t5", "sesgo de T5", "T5 bias")}  # fmt: skip


@static(
    "19-01-attention-cost",
    title=(
        "Tiempo de la atención con un sesgo (ALiBi, T5) respecto a la atención causal fusionada, "
        "en T = 256 y T = 1024, solo hacia delante y con la pasada hacia atrás (resultados "
        "registrados): el sesgo cuesta más cuanto más larga es la secuencia.",
        "Time of attention with a bias (ALiBi, T5) relative to fused causal attention, at "
        "T = 256 and T = 1024, forward only and with the backward pass (recorded results): the "
        "bias costs more the longer the sequence.",
    ),
    alt=(
        "Barras agrupadas por caso: hacia delante y hacia delante y atrás, en T = 256 y 1024. "
        "La atención causal vale 1 en todos; ALiBi y T5 están entre 1.1 y 1.2 en T = 256 hacia "
        "delante y suben hasta 1.58 y 4.71 veces en T = 1024 con la pasada hacia atrás.",
        "Bars grouped by case: forward and forward plus backward, at T = 256 and 1024. Causal "
        "attention is 1 in all; ALiBi and T5 are between 1.1 and 1.2 at T = 256 forward and rise "
        "to 1.58 and 4.71 times at T = 1024 with the backward pass.",
    ),
    size=(6.8, 3.2),
)
def attention_cost(fig, t):
    tables = attention_tables()
    groups = list(tables)
    cases = list(tables[groups[0]])
    ax = fig.subplots()
    width = 0.8 / len(cases)
    for k, case in enumerate(cases):
        ratios = [tables[g][case] / tables[g][cases[0]] for g in groups]
        encoding, es, en = CASES[case]
        bars = ax.bar([g + k * width for g in range(len(groups))], ratios, width, label=t(es, en),
                      color=colour(encoding))
        ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=2)
    direction = {
        "forward": t("adelante", "forward"),
        "forward + backward": t("adelante + atrás", "forward + backward"),
    }
    ax.set_xticks([g + width * (len(cases) - 1) / 2 for g in range(len(groups))],
                  [f"{direction[d]}\nT = {T}" for d, T in groups])  # fmt: skip
    ax.set_ylabel(t("tiempo / causal fusionada (mejor)", "time / fused causal (best)"))
    ax.legend(fontsize=8)
