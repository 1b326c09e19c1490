"""Visible checks for lab 17.04 (ALiBi). Students may read these; the grader's differ."""

from __future__ import annotations

import math

import numpy as np
import torch

from minimodel.selfcheck.compare import CheckList, expect_array

checks = CheckList()


def _student():
    from minimodel.positional import alibi

    return alibi


def slopes_formula(n_heads: int) -> np.ndarray:
    """The slopes of the lesson: 2^(-8k/c) for c heads, then every other slope of 2c heads."""

    def power_of_two(n: int) -> list[float]:
        return [2.0 ** (-8.0 * k / n) for k in range(1, n + 1)]

    closest = 2 ** int(math.floor(math.log2(n_heads)))
    return np.array(
        power_of_two(closest) + power_of_two(2 * closest)[0::2][: n_heads - closest],
        dtype=np.float32,
    )


def slope_mistakes(n_heads: int) -> dict:
    k = np.arange(1, n_heads + 1)
    right = slopes_formula(n_heads)
    return {
        "closed_form": (
            2.0 ** (-8.0 * k / n_heads),
            "Parece que usaste 2^(-8h/H) directamente: esa fórmula solo vale cuando H es potencia "
            "de dos. Si no lo es, toma las pendientes de c = 2^floor(log2 H) cabezas y complétalas "
            "con las de índice par de la lista de 2c cabezas.",
            "It looks like you used 2^(-8h/H) directly: that formula only holds when H is a power "
            "of two. Otherwise take the slopes of c = 2^floor(log2 H) heads and complete them with "
            "the even-indexed slopes of the list for 2c heads.",
        ),
        "sorted": (
            np.sort(right)[::-1].copy(),
            "Las pendientes están ordenadas de mayor a menor; el orden del artículo no lo está: "
            "las c primeras y después las intercaladas. Cada cabeza de un modelo entrenado espera "
            "su pendiente.",
            "Your slopes are sorted from largest to smallest; the paper's order is not: the first "
            "c slopes, then the interleaved ones. Each head of a trained model expects its slope.",
        ),
        "off_by_one": (
            2.0 ** (-8.0 * (k - 1) / n_heads),
            "La primera pendiente vale 1: el exponente empieza en h = 1, no en 0 (m_1 = 2^(-8/H)).",
            "The first slope is 1: the exponent starts at h = 1, not 0 (m_1 = 2^(-8/H)).",
        ),
    }


def bias_formula(q_len: int, k_len: int, slopes: np.ndarray, causal: bool = True) -> np.ndarray:
    """The bias entry by entry: query i at position k_len - q_len + i, key j at position j."""
    H = len(slopes)
    bias = np.zeros((H, q_len, k_len), dtype=np.float32)
    for h in range(H):
        for i in range(q_len):
            p = k_len - q_len + i
            for j in range(k_len):
                if causal and j > p:
                    bias[h, i, j] = -np.inf
                else:
                    bias[h, i, j] = -slopes[h] * abs(p - j)
    return bias


def bias_mistakes(q_len: int, k_len: int, slopes: np.ndarray) -> dict:
    right = bias_formula(q_len, k_len, slopes)
    finite = np.isfinite(right)
    start = bias_formula(q_len, q_len, slopes)  # as if the queries were the first q_len keys
    top_left = np.full_like(right, -np.inf)
    top_left[:, :, :q_len] = start
    top_left[:, :, q_len:] = -np.inf
    j = np.arange(k_len)[None, None, :]
    row_constant = np.where(finite, slopes[:, None, None] * j, -np.inf).astype(np.float32)
    return {
        "sign": (
            np.where(finite, -right, -np.inf),
            "El signo está al revés: el sesgo debe ser -m (i - j) <= 0, una penalización que "
            "crece con la distancia, no un premio.",
            "The sign is reversed: the bias must be -m (i - j) <= 0, a penalty that grows with "
            "distance, not a reward.",
        ),
        "row_constant": (
            row_constant,
            "Parece la forma de fila constante +m j del código original. Da el mismo softmax "
            "causal, pero aquí se pide la forma de distancia -m (i - j), con 0 en la diagonal.",
            "It looks like the row-constant form +m j of the original code. It gives the same "
            "causal softmax, but this course asks for the distance form -m (i - j), with 0 on "
            "the diagonal.",
        ),
        "top_left": (
            top_left,
            "Las consultas parecen alineadas al principio de las claves. Son las ÚLTIMAS q_len: "
            "la consulta i está en la posición k_len - q_len + i (como con una caché KV).",
            "The queries look aligned to the start of the keys. They are the LAST q_len: query i "
            "sits at position k_len - q_len + i (as with a KV cache).",
        ),
    }


@checks.add("alibi_slopes", "8 cabezas: 1/2, 1/4, ..., 1/256", "8 heads: 1/2, 1/4, ..., 1/256")
def slopes_power_of_two() -> None:
    expect_array(
        _student().alibi_slopes(8),
        torch.from_numpy(slopes_formula(8)),
        name="alibi_slopes(8)",
        mistakes=slope_mistakes(8),
    )


@checks.add("alibi_slopes", "16 cabezas y 1 cabeza", "16 heads and 1 head")
def slopes_sixteen_and_one() -> None:
    expect_array(
        _student().alibi_slopes(16),
        torch.from_numpy(slopes_formula(16)),
        name="alibi_slopes(16)",
        mistakes=slope_mistakes(16),
    )
    expect_array(_student().alibi_slopes(1), torch.tensor([2.0**-8]), name="alibi_slopes(1)")


@checks.add(
    "alibi_slopes",
    "12 y 6 cabezas (no son potencia de dos)",
    "12 and 6 heads (not powers of two)",
)
def slopes_not_power_of_two() -> None:
    for n in (12, 6):
        expect_array(
            _student().alibi_slopes(n),
            torch.from_numpy(slopes_formula(n)),
            name=f"alibi_slopes({n})",
            mistakes=slope_mistakes(n),
        )


@checks.add(
    "alibi_bias",
    "causal cuadrado: -m (i - j) y -inf en el futuro",
    "square causal: -m (i - j) and -inf in the future",
)
def bias_causal_square() -> None:
    slopes = slopes_formula(4)
    expect_array(
        _student().alibi_bias(6, 6, torch.from_numpy(slopes)),
        torch.from_numpy(bias_formula(6, 6, slopes)),
        name="alibi_bias(6, 6, alibi_slopes(4))",
        mistakes=bias_mistakes(6, 6, slopes),
    )


@checks.add(
    "alibi_bias",
    "consultas alineadas al final (caché KV)",
    "queries aligned to the end (KV cache)",
)
def bias_end_aligned() -> None:
    slopes = slopes_formula(3)
    expect_array(
        _student().alibi_bias(2, 7, torch.from_numpy(slopes)),
        torch.from_numpy(bias_formula(2, 7, slopes)),
        name="alibi_bias(2, 7, alibi_slopes(3))",
        mistakes=bias_mistakes(2, 7, slopes),
    )


@checks.add(
    "alibi_bias",
    "simétrico: -m |i - j| (codificadores)",
    "symmetric: -m |i - j| (encoders)",
)
def bias_symmetric() -> None:
    slopes = slopes_formula(2)
    right = bias_formula(3, 5, slopes, causal=False)
    masked = bias_formula(3, 5, slopes, causal=True)
    expect_array(
        _student().alibi_bias(3, 5, torch.from_numpy(slopes), causal=False),
        torch.from_numpy(right),
        name="alibi_bias(3, 5, alibi_slopes(2), causal=False)",
        mistakes={
            "masked": (
                masked,
                "Con causal=False no hay máscara: las claves futuras también reciben -m |i - j|.",
                "With causal=False there is no mask: future keys also get -m |i - j|.",
            ),
            "signed": (
                np.where(np.isfinite(masked), right, -right),
                "Sin máscara, la distancia va en valor absoluto: -m |i - j| penaliza igual "
                "hacia los dos lados.",
                "Without a mask the distance is taken in absolute value: -m |i - j| penalises "
                "both sides alike.",
            ),
        },
    )
