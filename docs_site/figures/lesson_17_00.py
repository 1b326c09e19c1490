"""Figures of lesson 17.00: attention without positions cannot see order; a mask lets it count."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from figures.core import static
from minimodel.positional.equivariance import permutation_equivariance_gap
from minimodel.positional.sinusoidal import sinusoidal_pe

T, D = 8, 16


def _layer(causal: bool, positions: torch.Tensor | None):
    """One attention head with fixed random weights, optionally adding ``positions`` first."""
    weights = torch.randn(3, D, D, generator=torch.Generator().manual_seed(0)) / D**0.5

    def attend(x: torch.Tensor) -> torch.Tensor:
        if positions is not None:
            x = x + positions
        q, k, v = (x @ w for w in weights)
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    return attend


@static(
    "17-00-equivariance",
    title=(
        "Cuánto cambia la salida de una capa de atención al permutar la entrada (y deshacer la "
        "permutación): cero solo sin posiciones y sin máscara.",
        "How much an attention layer's output changes when its input is permuted (and the "
        "permutation undone): zero only with no positions and no mask.",
    ),
    alt=(
        "Diagrama de barras de la distancia a la equivarianza por permutaciones de tres capas. "
        "La atención sin posiciones da prácticamente cero; con posiciones sinusoidales sumadas y "
        "con máscara causal la distancia es claramente mayor que cero.",
        "Bar chart of the permutation-equivariance gap of three layers. Attention without "
        "positions gives practically zero; with added sinusoidal positions and with a causal "
        "mask the gap is clearly above zero.",
    ),
    size=(6.4, 2.8),
)
def equivariance(fig, t):
    x = torch.randn(1, T, D, generator=torch.Generator().manual_seed(1))
    perm = torch.randperm(T, generator=torch.Generator().manual_seed(2))
    pe = torch.from_numpy(sinusoidal_pe(T, D)).float()
    cases = {
        t("sin posiciones", "no positions"): _layer(False, None),
        t("con posiciones sinusoidales", "sinusoidal positions added"): _layer(False, pe),
        t("máscara causal, sin posiciones", "causal mask, no positions"): _layer(True, None),
    }
    gaps = [permutation_equivariance_gap(layer, x, perm) for layer in cases.values()]
    ax = fig.subplots()
    bars = ax.barh(list(cases), gaps, color=["#4c72b0", "#dd8452", "#55a868"])
    ax.bar_label(bars, fmt="%.2g", padding=3)
    ax.invert_yaxis()
    ax.set_xlabel(t("distancia a la equivarianza", "equivariance gap"))
    ax.set_xlim(0, max(gaps) * 1.25)


@static(
    "17-00-causal-count",
    title=(
        "Sin posiciones ni contenido ($W_Q = W_K = 0$), la máscara causal basta para contar: la "
        "salida en t es 1/(t+1); sin máscara es 1/T en todas.",
        "With no positions and no content ($W_Q = W_K = 0$) the causal mask is enough to count: "
        "the output at t is 1/(t+1); without a mask it is 1/T everywhere.",
    ),
    alt=(
        "Salida de la atención en cada posición t cuando solo el primer token vale 1. Con máscara "
        "causal la curva baja como 1/(t+1) desde 1; sin máscara es una recta horizontal en 1/T.",
        "Attention output at each position t when only the first token has value 1. With a causal "
        "mask the curve falls as 1/(t+1) from 1; without a mask it is a flat line at 1/T.",
    ),
    size=(6.4, 3.0),
)
def causal_count(fig, t):
    length = 32
    zeros = torch.zeros(1, length, 1)
    marker = torch.zeros(1, length, 1)
    marker[0, 0, 0] = 1.0
    counted = F.scaled_dot_product_attention(zeros, zeros, marker, is_causal=True)[0, :, 0]
    flat = F.scaled_dot_product_attention(zeros, zeros, marker)[0, :, 0]
    ax = fig.subplots()
    ax.plot(counted, marker="o", ms=3, label=t("con máscara causal", "causal mask"))
    flat_label = t("sin máscara", "no mask") + f": 1/T = {1 / length:.3f}"
    ax.plot(flat, label=flat_label)
    ax.set_xlabel(t("posición t", "position t"))
    ax.set_ylabel(t("salida", "output"))
    ax.legend()
