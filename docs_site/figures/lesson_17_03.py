"""Figures of lesson 17.03: RoPE turns each pair by p·θ_i, so q·k depends on n − m only."""

from __future__ import annotations

import math

import torch

from figures import vega
from figures.core import interactive, rounded, static
from minimodel.positional.rope import apply_rope, rope_cos_sin, rope_frequencies


def _rotated(x: torch.Tensor, positions: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
    """``x`` (D,) rotated to every position: (T, D)."""
    rows = x.expand(len(positions), -1)[None, None]
    return apply_rope(rows, positions, inv_freq)[0, 0]


@static(
    "17-03-pair-rotation",
    title=(
        "Una pareja que gira con la posición (d = 8): la pareja 0 avanza 1 rad por posición; la "
        "pareja 1, 0.1 rad. La longitud no cambia.",
        "A pair turning with position (d = 8): pair 0 moves 1 rad per position; pair 1, 0.1 rad. "
        "The length does not change.",
    ),
    alt=(
        "Dos paneles con el círculo unidad. En el de la pareja 0, los puntos de las posiciones "
        "0 a 11 dan casi dos vueltas; en el de la pareja 1, los mismos puntos avanzan solo un "
        "arco corto desde (1, 0).",
        "Two panels with the unit circle. In pair 0's, the points of positions 0 to 11 go almost "
        "twice around; in pair 1's, the same points move along a short arc only, from (1, 0).",
    ),
    size=(6.4, 3.3),
)
def pair_rotation(fig, t):
    inv_freq = rope_frequencies(8, 10000.0)
    positions = torch.arange(12)
    rotated = _rotated(torch.tensor([1.0, 0.0] * 4), positions, inv_freq)
    circle = torch.linspace(0, 2 * math.pi, 200)
    for ax, pair in zip(fig.subplots(1, 2), (0, 1), strict=True):
        ax.plot(circle.cos(), circle.sin(), color="lightgray", lw=1)
        x, y = rotated[:, 2 * pair], rotated[:, 2 * pair + 1]
        ax.scatter(x, y, c=positions, cmap="viridis", s=28, zorder=3)
        for p in (0, 1, 2, 11):
            ax.annotate(f"p={p}", (x[p], y[p]), textcoords="offset points", xytext=(4, 4),
                        fontsize=8)  # fmt: skip
        ax.set_title(t(f"pareja {pair}: θ = {inv_freq[pair]:g} rad",
                       f"pair {pair}: θ = {inv_freq[pair]:g} rad"))  # fmt: skip
        ax.set_aspect("equal")
        ax.set_xlim(-1.3, 1.3)
        ax.set_ylim(-1.3, 1.3)


@static(
    "17-03-angles",
    title=(
        "Ángulo de cada pareja frente a la posición (d = 64), reducido a (−π, π]: las primeras "
        "parejas dan muchas vueltas en 64 posiciones y las últimas apenas empiezan la primera.",
        "Angle of each pair against position (d = 64), wrapped to (−π, π]: the first pairs turn "
        "many times in 64 positions and the last ones barely start their first turn.",
    ),
    alt=(
        "Curvas del ángulo frente a la posición para las parejas 0, 4, 8 y 16. La de la pareja 0 "
        "es un diente de sierra rápido, de unas 10 vueltas; la de la 4, uno de 3 vueltas; la de "
        "la 8 da una sola vuelta en unas 63 posiciones, y la de la 16 es una recta casi plana.",
        "Curves of angle against position for pairs 0, 4, 8 and 16. Pair 0's is a fast sawtooth "
        "of about 10 turns; pair 4's one of 3 turns; pair 8's makes a single turn in about 63 "
        "positions, and pair 16's is an almost flat line.",
    ),
)
def angles(fig, t):
    inv_freq = rope_frequencies(64, 10000.0)
    positions = torch.arange(64)
    cos, sin = rope_cos_sin(positions, inv_freq)
    angle = torch.atan2(sin, cos)
    ax = fig.subplots()
    for pair in (0, 4, 8, 16):
        ax.plot(positions, angle[:, pair], lw=1.2, label=t(f"pareja {pair}", f"pair {pair}"))
    ax.set_xlabel(t("posición p", "position p"))
    ax.set_ylabel(t(r"ángulo $p\,\theta_i$ (rad)", r"angle $p\,\theta_i$ (rad)"))
    ax.legend(loc="lower right", fontsize=8, ncols=2)


def _logits(base: float, size: int, d: int = 16) -> torch.Tensor:
    """q_m · k_n for fixed random q, k rotated to every m, n: (size, size)."""
    generator = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, d, generator=generator)
    inv_freq = rope_frequencies(d, base)
    positions = torch.arange(size)
    return _rotated(q, positions, inv_freq) @ _rotated(k, positions, inv_freq).T


@static(
    "17-03-relative",
    title=(
        "$q_m \\cdot k_n$ para una consulta y una clave fijas, en todas las posiciones m y n: el "
        "valor solo depende de n − m, así que es constante a lo largo de cada diagonal.",
        "$q_m \\cdot k_n$ for one fixed query and key, at every pair of positions m and n: the "
        "value only depends on n − m, so it is constant along each diagonal.",
    ),
    alt=(
        "Mapa de calor de 32 por 32 posiciones con franjas diagonales: cada diagonal tiene un "
        "solo color, y los colores cambian de una diagonal a la siguiente.",
        "Heat map of 32 by 32 positions made of diagonal stripes: each diagonal has a single "
        "colour, and the colours change from one diagonal to the next.",
    ),
    size=(4.8, 4.0),
)
def relative(fig, t):
    ax = fig.subplots()
    image = ax.imshow(_logits(10000.0, 32).numpy(), cmap="RdBu_r")
    ax.set_xlabel(t("posición de la clave n", "key position n"))
    ax.set_ylabel(t("posición de la consulta m", "query position m"))
    fig.colorbar(image, ax=ax, label=r"$q_m \cdot k_n$")


D, SIZE, BASES = 16, 32, (100.0, 10000.0)


def explorer_data() -> dict:
    """The pairs of q and k at every position, and every logit q_m·k_n, per base."""
    generator = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, D, generator=generator)
    pairs, logits = [], []
    positions = torch.arange(SIZE)
    for base in BASES:
        inv_freq = rope_frequencies(D, base)
        q_at, k_at = _rotated(q, positions, inv_freq), _rotated(k, positions, inv_freq)
        for i in range(D // 2):
            pairs.append({"base": base, "i": i, "qx": rounded(q_at[:, 2 * i], 3),
                          "qy": rounded(q_at[:, 2 * i + 1], 3), "kx": rounded(k_at[:, 2 * i], 3),
                          "ky": rounded(k_at[:, 2 * i + 1], 3)})  # fmt: skip
        for m in range(SIZE):
            logits.append({"base": base, "m": m, "logit": rounded(q_at[m] @ k_at.T, 3)})
    return {"pairs": pairs, "logits": logits}


@interactive(
    "17-03-explorer",
    title=(
        "RoPE: la pareja i de q en la posición m y de k en la posición n, y el logit $q_m \\cdot "
        "k_n$ frente a n para la m elegida.",
        "RoPE: pair i of q at position m and of k at position n, and the logit $q_m \\cdot k_n$ "
        "against n for the chosen m.",
    ),
    alt=(
        "Figura interactiva con dos gráficos: a la izquierda, el círculo de la pareja i con q "
        "girado a m y k girado a n; a la derecha, q_m·k_n frente a n, una curva que se desplaza "
        "con m sin cambiar de forma. Controles: m, n, pareja i y base.",
        "Interactive figure with two charts: on the left, pair i's circle with q turned to m and "
        "k turned to n; on the right, q_m·k_n against n, a curve that shifts with m without "
        "changing shape. Controls: m, n, pair i and base.",
    ),
)
def explorer(t):
    data = explorer_data()
    params = [
        vega.slider("m", t("posición de la consulta m", "query position m"), 0, SIZE - 1, 1, 3),
        vega.slider("n", t("posición de la clave n", "key position n"), 0, SIZE - 1, 1, 7),
        vega.slider("pair", t("pareja i", "pair i"), 0, D // 2 - 1, 1, 0),
        vega.radio("base", "base", list(BASES), 10000.0, [f"{b:g}" for b in BASES]),
    ]
    axis = {"type": "quantitative", "scale": {"domain": [-3, 3]}}
    circle = {
        "width": 240, "height": 240,
        "title": t("Pareja i de q (en m) y de k (en n)", "Pair i of q (at m) and of k (at n)"),
        "data": {"values": data["pairs"]},
        "transform": [
            {"filter": "datum.base == base && datum.i == pair"},
            {"calculate": "[datum.qx[m], datum.kx[n]]", "as": "x"},
            {"calculate": "[datum.qy[m], datum.ky[n]]", "as": "y"},
            {"calculate": "['q', 'k']", "as": "vector"},
            {"flatten": ["x", "y", "vector"]},
            {"calculate": "0", "as": "origin"},
        ],
        "layer": [
            {"mark": {"type": "rule", "strokeWidth": 2.5},
             "encoding": {"x": {"field": "origin", **axis, "title": "x"},
                          "y": {"field": "origin", **axis, "title": "y"},
                          "x2": {"field": "x"}, "y2": {"field": "y"},
                          "color": {"field": "vector", "type": "nominal", "title": None}}},
            {"mark": {"type": "point", "filled": True, "size": 70},
             "encoding": {"x": {"field": "x", **axis}, "y": {"field": "y", **axis},
                          "color": {"field": "vector", "type": "nominal"}}},
        ],
    }  # fmt: skip
    curve = {
        "width": 300, "height": 240,
        "title": t("qₘ·kₙ frente a n", "qₘ·kₙ against n"),
        "data": {"values": data["logits"]},
        "transform": [
            {"filter": "datum.base == base && datum.m == m"},
            {"flatten": ["logit"]},
            {"window": [{"op": "row_number", "as": "n1"}]},
            {"calculate": "datum.n1 - 1", "as": "key"},
        ],
        "layer": [
            {"mark": {"type": "line", "point": {"size": 12}},
             "encoding": {"x": {"field": "key", "type": "quantitative",
                                "title": t("posición de la clave n", "key position n")},
                          "y": {"field": "logit", "type": "quantitative", "title": "qₘ·kₙ"}}},
            {"transform": [{"filter": "datum.key == n"}],
             "mark": {"type": "point", "size": 120, "color": "black", "filled": True},
             "encoding": {"x": {"field": "key", "type": "quantitative"},
                          "y": {"field": "logit", "type": "quantitative"}}},
            {"transform": [{"filter": "datum.key == n"}],
             **vega.readout("'qₘ·kₙ = ' + format(datum.logit, '.3f') + '   (n − m = ' + "
                            "(n - m) + ')'", x=5, y=5)},
        ],
    }  # fmt: skip
    return vega.chart(t("RoPE y la propiedad relativa", "RoPE and the relative property"),
                      t("qₘ·kₙ depende de n − m", "qₘ·kₙ depends on n − m"), params,
                      {"hconcat": [circle, curve]}, {"values": []})  # fmt: skip
