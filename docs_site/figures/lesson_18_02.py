"""Figures of lesson 18.02: how each RoPE scaling changes the frequency of every pair."""

from __future__ import annotations

import json

import numpy as np

from figures import vega
from figures.core import interactive, rounded, static
from minimodel.positional.rope import rope_frequencies
from minimodel.positional.scaling import SCALINGS, yarn_correction_range

# The lab's model: heads of 32 rotated dimensions, base 10000, trained at L0 = 128.
ROTARY_DIM, BASE, L0, SCALE = 32, 10000.0, 128, 4.0
METHODS = ("linear", "ntk", "yarn", "llama3")
NAMES = {"linear": ("PI (lineal)", "PI (linear)"), "ntk": ("NTK", "NTK"),
         "yarn": ("YaRN", "YaRN"), "llama3": ("Llama 3", "Llama 3")}  # fmt: skip


def ratios(method: str, factor: float, original: int) -> np.ndarray:
    """ρ_i = θ'_i / θ_i of every pair (ROTARY_DIM // 2,)."""
    scaled, _ = SCALINGS[method](ROTARY_DIM, BASE, factor=factor, original_max_len=original)
    return (scaled.double() / rope_frequencies(ROTARY_DIM, BASE).double()).numpy()


def turns(original: int) -> np.ndarray:
    """Turns of each pair over the training length: L0·θ_i / 2π."""
    return (original * rope_frequencies(ROTARY_DIM, BASE).double() / (2 * np.pi)).numpy()


@static(
    "18-02-ratios",
    title=(
        "Cociente de frecuencias $\\rho_i = \\theta'_i/\\theta_i$ por pareja, con s = 4 y $L_0 = "
        "128$ (r = 32): PI divide todas entre s; NTK conserva las rápidas; YaRN y Llama 3 "
        "conservan las más rápidas (YaRN, solo la primera), dividen entre s las lentas y mezclan "
        "en medio.",
        "Frequency ratio $\\rho_i = \\theta'_i/\\theta_i$ per pair, with s = 4 and $L_0 = 128$ (r "
        "= 32): PI divides all by s; NTK keeps the fast ones; YaRN and Llama 3 keep the fastest "
        "ones (YaRN only the first), divide the slow ones by s and blend in between.",
    ),
    alt=(
        "Cuatro curvas del cociente de frecuencias frente a la pareja, en escala logarítmica "
        "entre 1/4 y 1. PI es una recta horizontal en 1/4; NTK baja suavemente de 1 a 1/4; "
        "Llama 3 vale 1 en las primeras parejas y YaRN solo en la primera; las dos bajan en una "
        "zona de transición y valen 1/4 en las últimas.",
        "Four curves of the frequency ratio against pair, on a log scale between 1/4 and 1. PI "
        "is a flat line at 1/4; NTK falls smoothly from 1 to 1/4; Llama 3 is 1 on the first pairs "
        "and YaRN on the first only; both fall in a transition zone and are 1/4 on the last ones.",
    ),
)
def ratio_plot(fig, t):
    ax = fig.subplots()
    for method in METHODS:
        ax.plot(ratios(method, SCALE, L0), "o-", ms=4, label=t(*NAMES[method]))
    ax.axhline(1 / SCALE, color="gray", lw=0.8, ls=":")
    ax.set_yscale("log", base=2)
    ax.set_xlabel(t("pareja i", "pair i"))
    ax.set_ylabel(r"$\rho_i = \theta'_i / \theta_i$")
    ax.legend(fontsize=8)


@static(
    "18-02-yarn-ramp",
    title=(
        "La rampa de YaRN (s = 4, $L_0 = 128$): la parte de cada pareja que se interpola, 0 en "
        "las que giran al menos 32 veces en $L_0$ y 1 en las que giran a lo sumo una; en medio, "
        "la rampa sobre el índice de la pareja, como en el código de referencia y en Hugging "
        "Face.",
        "YaRN's ramp (s = 4, $L_0 = 128$): the part of each pair that is interpolated, 0 for "
        "pairs that turn at least 32 times over $L_0$ and 1 for those that turn at most once; in "
        "between, the ramp over the pair index, as in the reference code and in Hugging Face.",
    ),
    alt=(
        "Dos paneles. Arriba, las vueltas de cada pareja en 128 posiciones, en escala "
        "logarítmica, bajando de unas 20 a menos de 0.01, con líneas en 32 y en 1. Abajo, la "
        "fracción interpolada: 0 en las primeras parejas, sube en línea recta entre los extremos "
        "de la rampa y vale 1 en las últimas.",
        "Two panels. On top, the turns of each pair over 128 positions, on a log scale, falling "
        "from about 20 to below 0.01, with lines at 32 and at 1. Below, the interpolated "
        "fraction: 0 on the first pairs, rising in a straight line between the ramp's ends and 1 "
        "on the last ones.",
    ),
    size=(6.4, 4.4),
)
def yarn_ramp(fig, t):
    rho = ratios("yarn", SCALE, L0)
    blend = (1 - rho) / (1 - 1 / SCALE)  # ρ = (1 − γ) + γ / s
    lo, hi = yarn_correction_range(ROTARY_DIM, BASE, L0)
    top, bottom = fig.subplots(2, 1, sharex=True)
    top.semilogy(turns(L0), "o", ms=4)
    for level in (32, 1):
        top.axhline(level, color="gray", ls=":", lw=0.8)
    top.set_ylabel(t("vueltas en L0", "turns over L0"))
    bottom.plot(blend, "o-", ms=4, color="#55a868")
    for edge in (lo, hi):
        bottom.axvline(edge, color="gray", ls="--", lw=0.8)
    bottom.text(lo, 0.5, t(" inicio de la rampa", " ramp starts"), color="gray", fontsize=8)
    bottom.text(hi, 0.5, t(" fin", " ends"), color="gray", fontsize=8)
    bottom.set_xlabel(t("pareja i", "pair i"))
    bottom.set_ylabel(t("fracción interpolada", "interpolated fraction"))


@static(
    "18-02-temperature",
    title=(
        "La temperatura de YaRN: cos y sen se multiplican por 0.1 ln s + 1, así que cada logit "
        "se multiplica por 1/t = (0.1 ln s + 1)²; con s = 4, t ≈ 0.771.",
        "YaRN's temperature: cos and sin are multiplied by 0.1 ln s + 1, so every logit is "
        "multiplied by 1/t = (0.1 ln s + 1)²; at s = 4, t ≈ 0.771.",
    ),
    alt=(
        "Dos curvas crecientes frente al factor s de 1 a 32 en escala logarítmica: el factor que "
        "multiplica cos y sen sube de 1 a unos 1.35, y su cuadrado, el que multiplica los "
        "logits, de 1 a unos 1.81.",
        "Two rising curves against the factor s from 1 to 32 on a log scale: the factor that "
        "multiplies cos and sin rises from 1 to about 1.35, and its square, which multiplies "
        "the logits, from 1 to about 1.81.",
    ),
    size=(6.4, 3.0),
)
def temperature(fig, t):
    factors = np.geomspace(1, 32, 40)
    scale = [SCALINGS["yarn"](ROTARY_DIM, BASE, factor=float(s), original_max_len=L0)[1]
             for s in factors]  # fmt: skip
    ax = fig.subplots()
    ax.plot(factors, scale, label=t("multiplica cos y sen", "multiplies cos and sin"))
    ax.plot(
        factors,
        np.square(scale),
        label=t("multiplica los logits: 1/t", "multiplies the logits: 1/t"),
    )
    ax.set_xscale("log", base=2)
    ax.set_xlabel(t("factor s", "factor s"))
    ax.set_ylabel(t("factor de atención", "attention factor"))
    ax.legend()


# A Phi-3-mini-128k-shaped model: 48 pairs (heads of 96), base 10000, 4096 -> 131072 tokens.
PHI3_DIM, PHI3_L0, PHI3_SCALE = 96, 4096, 32.0


def phi3_factors(method: str) -> np.ndarray:
    """κ_i = θ_i / θ'_i of every pair of the Phi-3-mini shape: the factor a method divides pair
    i by, in LongRoPE's terms (PHI3_DIM // 2,)."""
    scaled, _ = SCALINGS[method](PHI3_DIM, BASE, factor=PHI3_SCALE, original_max_len=PHI3_L0)
    return (rope_frequencies(PHI3_DIM, BASE).double() / scaled.double()).numpy()


@static(
    "18-02-longrope",
    title=(
        "Factor por pareja $\\kappa_i = \\theta_i/\\theta'_i$ para un modelo con la forma de "
        "Phi-3-mini-128k (48 parejas, $L_0 = 4096$, s = 32). Cada método fija una curva: PI, "
        "todas en s; NTK, una geométrica; la rampa de YaRN, 1 hasta la pareja 15 y s desde la 34. "
        "LongRoPE recibe la curva entera como dato (cualquiera que no baje de una pareja a la "
        "siguiente), y su búsqueda elige una por modelo y longitud.",
        "Per-pair factor $\\kappa_i = \\theta_i/\\theta'_i$ for a model shaped like "
        "Phi-3-mini-128k (48 pairs, $L_0 = 4096$, s = 32). Each method fixes one curve: PI, all "
        "at s; NTK, a geometric one; YaRN's ramp, 1 up to pair 15 and s from pair 34. LongRoPE "
        "takes the whole curve as input (any curve that does not fall from one pair to the "
        "next), and its search picks one per model and length.",
    ),
    alt=(
        "Tres curvas del factor por pareja frente a la pareja, en escala logarítmica entre 1 y "
        "32. PI es una recta horizontal en 32; NTK sube en línea recta (en escala logarítmica) "
        "de 1 a 32; YaRN vale 1 en las primeras parejas, sube entre las líneas que marcan los "
        "extremos de su rampa y vale 32 en las últimas.",
        "Three curves of the per-pair factor against pair, on a log scale between 1 and 32. PI "
        "is a flat line at 32; NTK rises in a straight line (on the log scale) from 1 to 32; "
        "YaRN is 1 on the first pairs, rises between the lines that mark its ramp's ends and is "
        "32 on the last ones.",
    ),
)
def longrope_factors(fig, t):
    ax = fig.subplots()
    for method in ("linear", "ntk", "yarn"):
        ax.plot(phi3_factors(method), "o-", ms=3, label=t(*NAMES[method]))
    for edge in yarn_correction_range(PHI3_DIM, BASE, PHI3_L0):
        ax.axvline(edge, color="gray", ls="--", lw=0.8)
    ax.set_yscale("log", base=2)
    ax.set_xlabel(t("pareja i", "pair i"))
    ax.set_ylabel(r"$\kappa_i = \theta_i / \theta'_i$")
    ax.legend(fontsize=8)


# Not the lab's s = 4, nor s = 2 (NTK's ratios depend on s alone, and at s = 2 they are dynamic
# NTK's at 2 L0): the figure must not show the ratios the notebook's graded cell computes.
FACTORS, LENGTHS = (3.0, 8.0, 16.0, 32.0), (64, 128, 256, 512)
PAIR = 4  # the pair the explorer first reads: in the transition zone of YaRN and Llama 3


def explorer_data() -> list[dict]:
    """ρ of every pair and YaRN's ramp ends, for every method, factor and original length."""
    rows = []
    for method in METHODS:
        for factor in FACTORS:
            for original in LENGTHS:
                lo, hi = yarn_correction_range(ROTARY_DIM, BASE, original)
                rows.append({"method": method, "factor": factor, "original": original,
                             "rho": rounded(ratios(method, factor, original), 5),
                             "lo": lo, "hi": hi})  # fmt: skip
    return rows


@interactive(
    "18-02-explorer",
    title=(
        "Escalado de RoPE: el cociente de frecuencias $\\rho_i$ de cada pareja para el método, el "
        "factor y la longitud original elegidos, y la fracción interpolada con la rampa de YaRN.",
        "RoPE scaling: the frequency ratio $\\rho_i$ of every pair for the chosen method, factor "
        "and original length, and the interpolated fraction with YaRN's ramp.",
    ),
    alt=(
        "Figura interactiva con dos gráficos: a la izquierda, ρ_i frente a la pareja en escala "
        "logarítmica para el método elegido, con PI como referencia; a la derecha, la fracción "
        "interpolada 1 − ρ_i normalizada, con los extremos de la rampa marcados si el método es "
        "YaRN. Bajo el primero, el cociente de la pareja elegida, marcada con un círculo. "
        "Controles: método, factor s, longitud original L0 y pareja i.",
        "Interactive figure with two charts: on the left, ρ_i against pair on a log scale for "
        "the chosen method, with PI as a reference; on the right, the interpolated fraction, "
        "normalised 1 − ρ_i, with the ramp's ends marked when the method is YaRN. Below the "
        "first, the ratio of the chosen pair, circled. Controls: method, factor s, original "
        "length L0 and pair i.",
    ),
)
def explorer(t):
    names = [t(*NAMES[m]) for m in METHODS]
    params = [
        vega.select("method", t("método", "method"), list(METHODS), "yarn", names),
        vega.select("factor", t("factor s", "factor s"), list(FACTORS), 8.0,
                    [f"{f:g}" for f in FACTORS]),
        vega.select("original", t("longitud original L0", "original length L0"), list(LENGTHS),
                    128),
        vega.slider("pair", t("pareja i", "pair i"), 0, ROTARY_DIM // 2 - 1, 1, PAIR),
    ]  # fmt: skip
    pairs = [
        {"flatten": ["rho"]},
        {"window": [{"op": "row_number", "as": "i1"}], "groupby": ["method"]},
        {"calculate": "datum.i1 - 1", "as": "pair"},
        {"calculate": "(1 - datum.rho) / (1 - 1 / datum.factor)", "as": "blend"},
        # The legend shows each method as the drop-down names it.
        {"calculate": f"{json.dumps(dict(zip(METHODS, names, strict=True)))}[datum.method]",
         "as": "name"},
    ]
    setting = {"filter": "datum.factor == factor && datum.original == original"}
    x = {"field": "pair", "type": "quantitative", "title": t("pareja i", "pair i")}
    chosen = {"filter": "datum.method == method && datum.pair == pair"}
    ratio = {
        "width": 300, "height": 240, "title": "ρᵢ = θ'ᵢ / θᵢ",
        "transform": [setting, {"filter": "datum.method == method || datum.method == 'linear'"},
                      *pairs],
        "layer": [
            {"mark": {"type": "line", "point": {"size": 14}},
             "encoding": {"x": x, "y": {"field": "rho", "type": "quantitative", "title": "ρᵢ",
                                        "scale": {"type": "log", "base": 2}},
                          "color": {"field": "name", "type": "nominal",
                                    "title": t("método", "method"),
                                    "scale": {"domain": names}}}},
            {"transform": [chosen],
             "mark": {"type": "point", "size": 140, "strokeWidth": 2, "color": "black"},
             "encoding": {"x": x, "y": {"field": "rho", "type": "quantitative"}}},
            # Below the axis, where no curve can cover it.
            {"transform": [chosen],
             **vega.readout("'ρᵢ = ' + format(datum.rho, '.5f') + '   (i = ' + datum.pair + ')'",
                            y=286)},
        ],
    }  # fmt: skip
    ramp = {
        "width": 260, "height": 240,
        "title": t("Fracción interpolada y rampa de YaRN", "Interpolated fraction and YaRN's ramp"),
        "transform": [setting, {"filter": "datum.method == method"}, *pairs],
        "layer": [
            {"mark": {"type": "line", "point": {"size": 14}, "color": "#55a868"},
             "encoding": {"x": x, "y": {"field": "blend", "type": "quantitative",
                                        "title": t("fracción interpolada", "interpolated fraction"),
                                        "scale": {"domain": [-0.05, 1.05]}}}},
            {"transform": [{"filter": "datum.pair == 0 && datum.method == 'yarn'"},
                           {"fold": ["lo", "hi"]}],
             "mark": {"type": "rule", "strokeDash": [4, 3], "color": "gray"},
             "encoding": {"x": {"field": "value", "type": "quantitative"}}},
        ],
    }  # fmt: skip
    return vega.chart(
        t("Escalado de RoPE", "RoPE scaling"),
        t("Cocientes de frecuencia por pareja", "Frequency ratios per pair"),
        params,
        {"hconcat": [ratio, ramp]},
        {"values": explorer_data()},
    )
