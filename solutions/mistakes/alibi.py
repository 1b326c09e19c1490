"""Classic mistakes in alibi.py (lesson 17.04): what a student who makes each one writes.

Each function is a wrong ``alibi_slopes`` or ``alibi_bias``. See ``grader/mistakes.py``.
"""

import torch

from grader.mistakes import mistake
from minimodel.positional.alibi import alibi_bias as right_bias
from minimodel.positional.alibi import alibi_slopes as right_slopes


def _positions(q_len: int, k_len: int, device: torch.device) -> tuple[torch.Tensor, ...]:
    """Query positions ``(q_len, 1)`` (the last ``q_len`` keys) and key positions ``(1, k_len)``."""
    query = torch.arange(k_len - q_len, k_len, device=device)[:, None]
    return query, torch.arange(k_len, device=device)[None, :]


@mistake("alibi_slopes", "closed_form",
         es="Parece que usaste 2^(-8h/H) directamente: esa fórmula solo vale cuando H es "
            "potencia de dos. Si no lo es, toma las pendientes de c = 2^floor(log2 H) cabezas y "
            "complétalas con las de índice par de la lista de 2c cabezas.",
         en="It looks like you used 2^(-8h/H) directly: that formula only holds when H is a "
            "power of two. Otherwise take the slopes of c = 2^floor(log2 H) heads and complete "
            "them with the even-indexed slopes of the list for 2c heads.")
def closed_form(n_heads: int, *, device=None) -> torch.Tensor:
    k = torch.arange(1, n_heads + 1, dtype=torch.float64)
    return (2.0 ** (-8.0 * k / n_heads)).to(device=device, dtype=torch.float32)


@mistake("alibi_slopes", "sorted",
         es="Las pendientes están ordenadas de mayor a menor; el orden del artículo no lo está: "
            "las c primeras y después las intercaladas. Cada cabeza de un modelo entrenado "
            "espera su pendiente.",
         en="Your slopes are sorted from largest to smallest; the paper's order is not: the "
            "first c slopes, then the interleaved ones. Each head of a trained model expects its "
            "slope.")
def sorted_slopes(n_heads: int, *, device=None) -> torch.Tensor:
    return right_slopes(n_heads, device=device).sort(descending=True).values


@mistake("alibi_slopes", "off_by_one",
         es="La primera pendiente vale 1: el exponente empieza en h = 1, no en 0 "
            "(m_1 = 2^(-8/H)).",
         en="The first slope is 1: the exponent starts at h = 1, not 0 (m_1 = 2^(-8/H)).")
def off_by_one(n_heads: int, *, device=None) -> torch.Tensor:
    k = torch.arange(n_heads, dtype=torch.float64)
    return (2.0 ** (-8.0 * k / n_heads)).to(device=device, dtype=torch.float32)


@mistake("alibi_bias", "sign",
         es="El signo está al revés: el sesgo debe ser -m (i - j) <= 0, una penalización que "
            "crece con la distancia, no un premio.",
         en="The sign is reversed: the bias must be -m (i - j) <= 0, a penalty that grows with "
            "distance, not a reward.")
def sign(q_len: int, k_len: int, slopes: torch.Tensor, *, causal: bool = True) -> torch.Tensor:
    bias = right_bias(q_len, k_len, slopes, causal=causal)
    return torch.where(torch.isfinite(bias), -bias, bias)


@mistake("alibi_bias", "row_constant",
         es="Parece la forma de fila constante +m j del código original. Da el mismo softmax "
            "causal, pero aquí se pide la forma de distancia -m (i - j), con 0 en la diagonal.",
         en="It looks like the row-constant form +m j of the original code. It gives the same "
            "causal softmax, but this course asks for the distance form -m (i - j), with 0 on "
            "the diagonal.")
def row_constant(q_len: int, k_len: int, slopes: torch.Tensor, *,
                 causal: bool = True) -> torch.Tensor:
    if not causal:
        return right_bias(q_len, k_len, slopes, causal=False)
    query, key = _positions(q_len, k_len, slopes.device)
    bias = slopes.float()[:, None, None] * key.float()  # (H, 1, k_len)
    return bias.expand(-1, q_len, -1).masked_fill(key > query, float("-inf"))


@mistake("alibi_bias", "top_left",
         es="Las consultas parecen alineadas al principio de las claves. Son las ÚLTIMAS q_len: "
            "la consulta i está en la posición k_len - q_len + i (como con una caché KV).",
         en="The queries look aligned to the start of the keys. They are the LAST q_len: query i "
            "sits at position k_len - q_len + i (as with a KV cache).")
def top_left(q_len: int, k_len: int, slopes: torch.Tensor, *,
             causal: bool = True) -> torch.Tensor:
    _, key = _positions(q_len, k_len, slopes.device)
    distance = torch.arange(q_len, device=slopes.device)[:, None] - key  # query i at i
    m = slopes.float()[:, None, None]
    if not causal:
        return m * -distance.abs()
    return (m * -distance).masked_fill(distance < 0, float("-inf"))


@mistake("alibi_bias", "masked",
         es="Con causal=False no hay máscara: las claves futuras también reciben -m |i - j|.",
         en="With causal=False there is no mask: future keys also get -m |i - j|.")
def masked(q_len: int, k_len: int, slopes: torch.Tensor, *, causal: bool = True) -> torch.Tensor:
    return right_bias(q_len, k_len, slopes, causal=True)


@mistake("alibi_bias", "signed",
         es="Sin máscara, la distancia va en valor absoluto: -m |i - j| penaliza igual hacia "
            "los dos lados.",
         en="Without a mask the distance is taken in absolute value: -m |i - j| penalises both "
            "sides alike.")
def signed(q_len: int, k_len: int, slopes: torch.Tensor, *, causal: bool = True) -> torch.Tensor:
    if causal:
        return right_bias(q_len, k_len, slopes, causal=True)
    query, key = _positions(q_len, k_len, slopes.device)
    return slopes.float()[:, None, None] * -(query - key)  # no |.|: future keys get a reward
