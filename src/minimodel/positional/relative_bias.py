# ---------------------------------------------------------------------------------------------
# [es] Completa los bloques marcados "TU CÓDIGO" (lección 17.05). Este archivo es tuyo: una
#      vez que lo editas, ninguna orden del curso lo sobrescribe.
# [en] Fill in the blocks marked "YOUR CODE" (lesson 17.05). This file is yours: once you
#      edit it, no course command overwrites it.
# minimodel-generated:2ccffaebb471
# ---------------------------------------------------------------------------------------------
"""Learned relative position biases: T5's log buckets and Swin's 2-D index. Lesson 17.05.

T5 adds one learned scalar per head to each attention logit, chosen by the *bucket* of the
relative position ``key - query``: exact buckets for small distances, then logarithmically wider
ones scaled so that they would end at ``max_distance``. The last bucket starts a little before
``max_distance`` and takes every distance from there on. The bias is added to the logits as they
are (T5 does not divide by ``sqrt(d)``).

Swin Transformer learns a bias per head for every 2-D offset inside an attention window; it
indexes its table with ``query - key``, the opposite sign to T5.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from minimodel.messages import bilingual
from minimodel.validation import require_int, require_int_tensor


def relative_position_bucket(
    relative_position: torch.Tensor,
    *,
    bidirectional: bool,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> torch.Tensor:
    """T5's bucket of each relative position ``key - query``.

    With ``nb = num_buckets`` (halved when ``bidirectional``) and ``exact = nb // 2``:

    - ``bidirectional=True`` (encoders): keys after the query (``rel > 0``) use buckets
      ``nb .. 2nb - 1``, keys before it (and itself) ``0 .. nb - 1``; then ``n = |rel|``.
    - ``bidirectional=False`` (decoders): ``n = max(-rel, 0)``; every future key gets bucket 0.
    - ``n < exact`` is its own bucket ``n``. Otherwise the bucket is
      ``exact + int(log(n / exact) / log(max_distance / exact) * (nb - exact))``, at most
      ``nb - 1``, computed in float32 as T5 and Hugging Face do (so that boundaries match theirs).

    Defaults (T5): 32 buckets, ``max_distance`` 128. For example, causal: ``rel = -7`` gives 7,
    ``-16`` gives 16, ``-32`` gives 21, ``<= -128`` gives 31.

    Args:
        relative_position: integer tensor of any shape, ``key_position - query_position``.
        bidirectional: whether keys on both sides of the query get their own buckets.
        num_buckets: total number of buckets (``>= 2``, or ``>= 4`` when bidirectional).
        max_distance: the distance ``D`` the logarithmic buckets are scaled to (``> exact``):
            bucket ``exact + k`` starts at ``exact * (D / exact) ** (k / (nb - exact))``, rounded
            up, so the last bucket starts before ``D`` and takes every larger distance. With the
            defaults it starts at distance 113 (causal) or 91 (bidirectional), not 128.

    Returns:
        LongTensor with the shape and device of ``relative_position``, values in
        ``[0, num_buckets)``, monotone in ``|rel|`` on each side.

    Raises:
        ValueError: ``relative_position`` is not an integer tensor, or the bucket counts are too
            small to have at least one exact bucket below ``max_distance``.
    """
    require_int_tensor("relative_position", relative_position, "(...)", range(0, 9))
    _check_buckets(num_buckets, max_distance, bidirectional)
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar relative_position_bucket (lección 17.05). Pista: sigue el "
        "docstring paso a paso con operaciones de tensores (torch.where, torch.clamp); el "
        "logaritmo se calcula en float32 y se trunca con .long(). Evita log(0) en la rama "
        "logarítmica (esos valores no se usan, pero dan -inf).\n[en] "
        "relative_position_bucket is not implemented yet (lesson 17.05). Hint: follow the "
        "docstring step by step with tensor operations (torch.where, torch.clamp); the "
        "logarithm is computed in float32 and truncated with .long(). Avoid log(0) in the "
        "logarithmic branch (those values are not used but give -inf)."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


class RelativePositionBias(nn.Module):
    """T5-style relative bias: a learned scalar per (bucket, head), added to attention logits.

    Args:
        n_heads: number of attention heads (``>= 1``).
        num_buckets: number of buckets (T5: 32).
        max_distance: the distance the logarithmic buckets are scaled to (T5: 128); the last
            bucket starts a little before it (113 causal, 91 bidirectional with T5's values).
        bidirectional: ``True`` for encoders, ``False`` for causal decoders.

    Attributes:
        bias: ``nn.Embedding(num_buckets, n_heads)`` (``num_buckets * n_heads`` parameters),
            initialised from ``N(0, 0.02**2)``.
    """

    def __init__(
        self,
        n_heads: int,
        num_buckets: int = 32,
        max_distance: int = 128,
        bidirectional: bool = False,
    ) -> None:
        super().__init__()
        require_int("n_heads", n_heads, 1)
        _check_buckets(num_buckets, max_distance, bidirectional)
        self.n_heads = n_heads
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.bidirectional = bidirectional
        self.bias = nn.Embedding(num_buckets, n_heads)
        nn.init.normal_(self.bias.weight, mean=0.0, std=0.02)

    def forward(self, q_len: int, k_len: int) -> torch.Tensor:
        """Biases for ``q_len`` queries that are the LAST ``q_len`` of ``k_len`` keys.

        Query ``i`` sits at position ``k_len - q_len + i`` (as with a KV cache), key ``j`` at
        ``j``; the bias of head ``h`` is ``bias.weight[bucket(j - (k_len - q_len + i)), h]``.
        No causal mask is included: add ``-inf`` on future keys yourself in a decoder.

        Args:
            q_len: number of queries (``>= 1``).
            k_len: number of keys (``>= q_len``).

        Returns:
            Tensor of shape ``(n_heads, q_len, k_len)`` with the dtype and device of
            ``bias.weight``; differentiable with respect to it.

        Raises:
            ValueError: ``q_len < 1`` or ``k_len < q_len``.
        """
        require_int("q_len", q_len, 1)
        require_int("k_len", k_len, 1)
        if k_len < q_len:
            raise ValueError(
                bilingual(
                    f"Hay más consultas que claves (q_len={q_len} > k_len={k_len}): las "
                    "consultas son las últimas q_len de las k_len posiciones.",
                    f"There are more queries than keys (q_len={q_len} > k_len={k_len}): the "
                    "queries are the last q_len of the k_len positions.",
                )
            )
        # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
        raise NotImplementedError(
            "[es] Falta implementar RelativePositionBias.forward (lección 17.05). Pista: "
            "relativa = clave - consulta, de forma (q_len, k_len), creada en el dispositivo "
            "de self.bias.weight; cubetas con relative_position_bucket; self.bias(cubetas) "
            "tiene forma (q_len, k_len, H): permuta a (H, q_len, k_len).\n[en] "
            "RelativePositionBias.forward is not implemented yet (lesson 17.05). Hint: "
            "relative = key - query, of shape (q_len, k_len), created on the device of "
            "self.bias.weight; buckets with relative_position_bucket; self.bias(buckets) has "
            "shape (q_len, k_len, H): permute it to (H, q_len, k_len)."
        )
        # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======

    def extra_repr(self) -> str:
        return (
            f"n_heads={self.n_heads}, num_buckets={self.num_buckets}, "
            f"max_distance={self.max_distance}, bidirectional={self.bidirectional}"
        )


def swin_relative_index(window_h: int, window_w: int) -> torch.Tensor:
    """Swin Transformer's index into its relative-bias table, for one attention window.

    Tokens of a ``window_h x window_w`` window are numbered row by row (token ``n`` is at row
    ``n // window_w``, column ``n % window_w``). For query ``a`` and key ``b``, with
    ``(dr, dc) = position(a) - position(b)`` (Swin's sign: query minus key, the opposite of T5),
    the index is ``(dr + window_h - 1) * (2 * window_w - 1) + (dc + window_w - 1)``, a row of a
    table of ``(2 * window_h - 1) * (2 * window_w - 1)`` learned biases per head. For a 2 x 2
    window: ``[[4, 3, 1, 0], [5, 4, 2, 1], [7, 6, 4, 3], [8, 7, 5, 4]]``.

    Args:
        window_h, window_w: window height and width in tokens (``>= 1``).

    Returns:
        LongTensor of shape ``(window_h * window_w, window_h * window_w)`` (query, key), values
        in ``[0, (2 * window_h - 1) * (2 * window_w - 1))``; the diagonal is the centre of the
        table.

    Raises:
        TypeError, ValueError: a size is not an integer ``>= 1``.
    """
    require_int("window_h", window_h, 1)
    require_int("window_w", window_w, 1)
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar swin_relative_index (lección 17.05). Pista: coordenadas "
        "(fila, columna) de cada token con torch.meshgrid(..., indexing=\"ij\"), diferencias "
        "consulta - clave por difusión, desplázalas para que empiecen en 0 y combínalas fila "
        "* (2 * window_w - 1) + columna.\n[en] swin_relative_index is not implemented yet "
        "(lesson 17.05). Hint: (row, column) of every token with torch.meshgrid(..., "
        "indexing=\"ij\"), query - key differences by broadcasting, shift them to start at 0 "
        "and combine them as row * (2 * window_w - 1) + column."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


def _check_buckets(num_buckets: int, max_distance: int, bidirectional: bool) -> None:
    """At least one exact bucket per side, and ``max_distance`` past the exact ones."""
    require_int("num_buckets", num_buckets, 2)
    require_int("max_distance", max_distance, 1)
    side = num_buckets // 2 if bidirectional else num_buckets
    if side // 2 < 1 or max_distance <= side // 2:
        raise ValueError(
            bilingual(
                f"Con num_buckets={num_buckets} (bidirectional={bidirectional}) hay "
                f"{side // 2} cubetas exactas; se necesita al menos una y max_distance > "
                f"{side // 2} (recibí max_distance={max_distance}).",
                f"With num_buckets={num_buckets} (bidirectional={bidirectional}) there are "
                f"{side // 2} exact buckets; at least one is needed and max_distance > "
                f"{side // 2} (got max_distance={max_distance}).",
            )
        )
