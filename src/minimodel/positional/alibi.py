# ---------------------------------------------------------------------------------------------
# [es] Completa los bloques marcados "TU CÓDIGO" (lección 17.04). Este archivo es tuyo: una
#      vez que lo editas, ninguna orden del curso lo sobrescribe.
# [en] Fill in the blocks marked "YOUR CODE" (lesson 17.04). This file is yours: once you
#      edit it, no course command overwrites it.
# minimodel-generated:ee2816358350
# ---------------------------------------------------------------------------------------------
"""ALiBi: attention with linear biases (Press, Smith and Lewis, 2022). Lesson 17.04.

No position enters the embeddings or the queries and keys. Instead, head ``h`` adds
``-m_h * distance`` to the attention logit of a query and a key, with a fixed slope ``m_h`` per
head (a geometric sequence). The bias is added after the ``1/sqrt(d)`` scaling of the logits.

This file uses the *distance form* ``-m_h * (i - j)`` (``0`` on the diagonal, ``<= 0`` elsewhere),
not the *row-constant form* ``+m_h * j`` of the original fairseq code. Both give the same causal
softmax (softmax ignores a constant added to a whole row), but the distance form stays small near
the diagonal, keeps the same values when rows are computed one at a time with a KV cache, and is
the one that extends to the symmetric encoder bias ``-m_h * |i - j|``.
"""

from __future__ import annotations

import math

import torch

from minimodel.messages import bilingual
from minimodel.validation import require_int, require_tensor


def alibi_slopes(n_heads: int, *, device: torch.device | str | None = None) -> torch.Tensor:
    """The slope of each head, following the rule of the original ALiBi code.

    For ``n`` a power of two the slopes are ``2**(-8/n), 2**(-16/n), ..., 2**(-8)``. For other
    head counts, with ``c`` the largest power of two below ``n``: the ``c`` slopes of ``c`` heads,
    then every other slope of ``2c`` heads, starting with the first (``[0::2]``), keeping
    ``n - c`` of them; they fall between the first ones. E.g. 6 heads:
    ``2**-2, 2**-4, 2**-6, 2**-8, 2**-1, 2**-3`` (not monotone).

    Args:
        n_heads: number of attention heads (``>= 1``).
        device: where to create the tensor (default: the CPU).

    Returns:
        Tensor of shape ``(n_heads,)`` and dtype ``float32``, every value in ``(0, 1)``; the
        smallest is always ``2**-8 = 0.00390625``.

    Raises:
        TypeError: ``n_heads`` is not an integer.
        ValueError: ``n_heads < 1``.
    """
    require_int("n_heads", n_heads, 1)
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar alibi_slopes (lección 17.04). Pista: escribe una función "
        "para potencias de dos, n -> [2**(-8k/n) para k = 1..n], y combínala como dice el "
        "docstring cuando n no lo es. Calcula en Python (float64) y convierte a float32 al "
        "final.\n[en] alibi_slopes is not implemented yet (lesson 17.04). Hint: write a "
        "function for powers of two, n -> [2**(-8k/n) for k = 1..n], and combine it as the "
        "docstring says when n is not one. Compute in Python (float64) and convert to "
        "float32 at the end."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


def alibi_bias(
    q_len: int, k_len: int, slopes: torch.Tensor, *, causal: bool = True
) -> torch.Tensor:
    """ALiBi biases for ``q_len`` queries that are the LAST ``q_len`` of ``k_len`` keys.

    Query ``i`` sits at position ``p_i = k_len - q_len + i`` (with a KV cache the new tokens come
    last), key ``j`` at position ``j``. With ``q_len == k_len`` this is the usual square matrix;
    with ``q_len == 1`` it is the last row, the one a decoding step needs.

    - ``causal=True``: ``bias[h, i, j] = -slopes[h] * (p_i - j)`` for ``j <= p_i`` and ``-inf``
      for future keys ``j > p_i`` (the causal mask is folded in, as SDPA needs).
    - ``causal=False``: ``bias[h, i, j] = -slopes[h] * |p_i - j|`` (encoders).

    Pass ``bias.to(q.dtype)`` as ``attn_mask`` to
    ``torch.nn.functional.scaled_dot_product_attention`` (without ``is_causal``).

    Args:
        q_len: number of queries (``>= 1``).
        k_len: number of keys (``>= q_len``).
        slopes: float tensor of shape ``(H,)``, from ``alibi_slopes``.
        causal: mask future keys with ``-inf`` (decoders) or use the symmetric form (encoders).

    Returns:
        Tensor of shape ``(H, q_len, k_len)``, dtype ``float32``, on the device of ``slopes``.
        The diagonal ``j = p_i`` is 0 and no row is fully masked.

    Raises:
        ValueError: ``q_len < 1``, ``k_len < q_len`` or ``slopes`` not a 1-D float tensor.
    """
    require_int("q_len", q_len, 1)
    require_int("k_len", k_len, 1)
    require_tensor("slopes", slopes, "(H,)", 1)
    if k_len < q_len:
        raise ValueError(
            bilingual(
                f"Hay más consultas que claves (q_len={q_len} > k_len={k_len}): las consultas "
                "son las últimas q_len de las k_len posiciones.",
                f"There are more queries than keys (q_len={q_len} > k_len={k_len}): the "
                "queries are the last q_len of the k_len positions.",
            )
        )
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar alibi_bias (lección 17.04). Pista: posiciones de las "
        "consultas k_len-q_len .. k_len-1 y de las claves 0 .. k_len-1 (créalas en el "
        "dispositivo de slopes); distancia = consulta - clave, de forma (q_len, k_len). "
        "Multiplica por -slopes[:, None, None] y pon -inf donde la distancia es negativa (o "
        "usa |distancia| si no es causal).\n[en] alibi_bias is not implemented yet (lesson "
        "17.04). Hint: query positions k_len-q_len .. k_len-1 and key positions 0 .. k_len-1 "
        "(create them on the device of slopes); distance = query - key, of shape (q_len, "
        "k_len). Multiply by -slopes[:, None, None] and put -inf where the distance is "
        "negative (or use |distance| when not causal)."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======
