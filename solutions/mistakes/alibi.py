"""Classic mistakes in alibi.py (lesson 17.04): what a student who makes each one writes.

Each function is a wrong ``alibi_slopes`` or ``alibi_bias``. See ``grader/build/mistakes.py``.
"""

import math

import torch

from grader.build.mistakes import ignoring, mistake
from minimodel.positional.alibi import alibi_bias as right_bias
from minimodel.positional.alibi import alibi_slopes as right_slopes


def _positions(q_len: int, k_len: int, device: torch.device) -> tuple[torch.Tensor, ...]:
    """Query positions ``(q_len, 1)`` (the last ``q_len`` keys) and key positions ``(1, k_len)``."""
    query = torch.arange(k_len - q_len, k_len, device=device)[:, None]
    return query, torch.arange(k_len, device=device)[None, :]


def _power_of_two(n: int, *, start: int = 1) -> list[float]:
    """``2^(-8k/n)`` for ``k = start .. start + n - 1``."""
    return [2.0 ** (-8.0 * k / n) for k in range(start, start + n)]


@mistake("alibi_slopes", "geometric",
         es="Parece que usaste 2^(-8h/H) directamente: esa fórmula solo vale cuando H es "
            "potencia de dos. Si no lo es, toma las pendientes de c = 2^floor(log2 H) cabezas y "
            "complétalas con las de índice par de la lista de 2c cabezas ([0::2]).",
         en="It looks like you used 2^(-8h/H) directly: that formula only holds when H is a "
            "power of two. Otherwise take the slopes of c = 2^floor(log2 H) heads and complete "
            "them with the even-indexed slopes of the list for 2c heads ([0::2]).")
def geometric(n_heads: int, *, device=None) -> torch.Tensor:
    return torch.tensor(_power_of_two(n_heads), dtype=torch.float32, device=device)


@mistake("alibi_slopes", "odd-half",
         es="Las pendientes que se añaden deben ser las de índice par de la lista de 2c cabezas "
            "([0::2], empezando por la primera); tu código toma las impares ([1::2]), que repiten "
            "las de c.",
         en="The added slopes must be the even-indexed ones of the list for 2c heads ([0::2], "
            "from the first); your code takes the odd ones ([1::2]), which repeat those of c.")
def odd_half(n_heads: int, *, device=None) -> torch.Tensor:
    closest = 2 ** math.floor(math.log2(n_heads))
    slopes = _power_of_two(closest) + _power_of_two(2 * closest)[1::2][: n_heads - closest]
    return torch.tensor(slopes, dtype=torch.float32, device=device)


@mistake("alibi_slopes", "sorted",
         es="Las pendientes están ordenadas de mayor a menor; el orden del artículo no lo está: "
            "primero las c de la potencia de dos y después las intercaladas (con 6 cabezas, "
            "2^−2, 2^−4, 2^−6, 2^−8, 2^−1, 2^−3). Cada cabeza de un modelo entrenado espera "
            "su pendiente.",
         en="Your slopes are sorted from largest to smallest; the paper's order is not: first "
            "the c slopes of the power of two, then the interleaved ones (with 6 heads, 2^−2, "
            "2^−4, 2^−6, 2^−8, 2^−1, 2^−3). Each head of a trained model expects its slope.")
def sorted_slopes(n_heads: int, *, device=None) -> torch.Tensor:
    return right_slopes(n_heads, device=device).sort(descending=True).values


@mistake("alibi_slopes", "off-by-one",
         es="La primera pendiente vale 1: el exponente empieza en h = 1, no en 0 "
            "(m_1 = 2^(-8/H)).",
         en="The first slope is 1: the exponent starts at h = 1, not 0 (m_1 = 2^(-8/H)).")
def off_by_one(n_heads: int, *, device=None) -> torch.Tensor:
    closest = 2 ** math.floor(math.log2(n_heads))
    slopes = _power_of_two(closest, start=0) + _power_of_two(2 * closest, start=0)[0::2][
        : n_heads - closest]
    return torch.tensor(slopes, dtype=torch.float32, device=device)


@mistake("alibi_bias", "sign",
         es="El signo está al revés: el sesgo debe ser −m·(i − j), cero en la diagonal y "
            "negativo hacia el pasado, una penalización que crece con la distancia y no un "
            "premio.",
         en="The sign is reversed: the bias must be −m·(i − j), zero on the diagonal and "
            "negative towards the past, a penalty that grows with distance, not a reward.")
def sign(q_len: int, k_len: int, slopes: torch.Tensor, *, causal: bool = True) -> torch.Tensor:
    bias = right_bias(q_len, k_len, slopes, causal=causal)
    return torch.where(torch.isfinite(bias), -bias, bias)


@mistake("alibi_bias", "no-mask",
         es="Falta la máscara causal: las claves futuras (j posterior a la posición de la "
            "consulta) deben valer −inf.",
         en="The causal mask is missing: future keys (j after the query's position) must be "
            "−inf.")
def no_mask(q_len: int, k_len: int, slopes: torch.Tensor, *, causal: bool = True) -> torch.Tensor:
    if not causal:
        return right_bias(q_len, k_len, slopes, causal=False)
    query, key = _positions(q_len, k_len, slopes.device)
    return slopes.float()[:, None, None] * -(query - key)


@mistake("alibi_bias", "row-constant",
         es="Parece la forma constante por filas +m·j del código original. Da el mismo softmax "
            "causal, pero la función pide la forma de distancia −m·(i − j), con 0 en la "
            "diagonal.",
         en="It looks like the row-constant form +m·j of the original code. It gives the same "
            "causal softmax, but the function asks for the distance form −m·(i − j), with 0 on "
            "the diagonal.")
def row_constant(q_len: int, k_len: int, slopes: torch.Tensor, *,
                 causal: bool = True) -> torch.Tensor:
    if not causal:
        return right_bias(q_len, k_len, slopes, causal=False)
    query, key = _positions(q_len, k_len, slopes.device)
    bias = slopes.float()[:, None, None] * key.float()  # (H, 1, k_len)
    return bias.expand(-1, q_len, -1).masked_fill(key > query, float("-inf"))


@mistake("alibi_bias", "start-aligned",
         es="Con menos consultas que claves (caché KV), las consultas son las ÚLTIMAS q_len "
            "posiciones: la consulta i está en k_len − q_len + i, no en i.",
         en="With fewer queries than keys (KV cache), the queries are the LAST q_len "
            "positions: query i sits at k_len − q_len + i, not at i.")
def start_aligned(q_len: int, k_len: int, slopes: torch.Tensor, *,
                  causal: bool = True) -> torch.Tensor:
    _, key = _positions(q_len, k_len, slopes.device)
    distance = torch.arange(q_len, device=slopes.device)[:, None] - key  # query i at i
    m = slopes.float()[:, None, None]
    if not causal:
        return m * -distance.abs()
    return (m * -distance).masked_fill(distance < 0, float("-inf"))


masked = mistake(
    "alibi_bias", "masked",
    es="Con causal=False no hay máscara: el sesgo simétrico −m·|i − j| es finito en toda "
       "la matriz, también para las claves futuras.",
    en="With causal=False there is no mask: the symmetric bias −m·|i − j| is finite over "
       "the whole matrix, future keys included.")(ignoring(right_bias, "causal"))


@mistake("alibi_bias", "signed",
         es="Sin máscara, la distancia va en valor absoluto: −m·|i − j| penaliza igual hacia "
            "los dos lados.",
         en="Without a mask the distance is taken in absolute value: −m·|i − j| penalises both "
            "sides alike.")
def signed(q_len: int, k_len: int, slopes: torch.Tensor, *, causal: bool = True) -> torch.Tensor:
    if causal:
        return right_bias(q_len, k_len, slopes, causal=True)
    query, key = _positions(q_len, k_len, slopes.device)
    return slopes.float()[:, None, None] * -(query - key)  # no |.|: future keys get a reward
