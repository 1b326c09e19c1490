# ---------------------------------------------------------------------------------------------
# [es] Completa los bloques marcados "TU CÓDIGO" (lección 18.03). Este archivo es tuyo: una
#      vez que lo editas, ninguna orden del curso lo sobrescribe.
# [en] Fill in the blocks marked "YOUR CODE" (lesson 18.03). This file is yours: once you
#      edit it, no course command overwrites it.
# minimodel-generated:85cd138b6b05
# ---------------------------------------------------------------------------------------------
"""Where the new tokens sit when a KV cache holds the earlier ones. Lesson 18.03.

With a KV cache, a forward pass sees only the ``q_len`` new tokens, while attention runs over
``k_len = cache_len + q_len`` keys: the cached ones first, then the new ones. Every positional
encoding must place the new tokens *after* the cache:

- the new queries sit at positions ``cache_len .. cache_len + q_len - 1`` (not ``0 .. q_len - 1``);
- the keys sit at ``0 .. k_len - 1``, so query ``i`` and key ``j`` are ``j - (cache_len + i)``
  apart (key minus query, T5's sign: ``<= 0`` for the keys a causal query may see);
- the causal mask and any bias are the LAST ``q_len`` rows of the square ``k_len x k_len`` ones
  (bottom-right alignment). PyTorch's ``scaled_dot_product_attention(..., is_causal=True)``
  aligns them top-left instead, which is only right when ``q_len == k_len``.
"""

from __future__ import annotations

import torch

from minimodel.messages import bilingual
from minimodel.validation import require_int, require_tensor


def chunk_positions(
    cache_len: int, q_len: int, *, device: torch.device | str | None = None
) -> torch.Tensor:
    """Positions of ``q_len`` new tokens fed after ``cache_len`` cached ones.

    Args:
        cache_len: number of tokens already in the cache (``>= 0``): the offset of the chunk.
        q_len: number of new tokens (``>= 1``).
        device: where to create the tensor (default: the CPU).

    Returns:
        Tensor of shape ``(q_len,)`` and dtype ``int64``:
        ``[cache_len, cache_len + 1, ..., cache_len + q_len - 1]``.

    Raises:
        TypeError: ``cache_len`` or ``q_len`` is not an integer.
        ValueError: ``cache_len < 0`` or ``q_len < 1``.
    """
    require_int("cache_len", cache_len, 0)
    require_int("q_len", q_len, 1)
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar chunk_positions (lección 18.03). Pista: los tokens nuevos "
        "van detrás de los guardados: empieza a contar en cache_len, no en 0 (torch.arange "
        "con dtype torch.long y device=device).\n[en] chunk_positions is not implemented yet "
        "(lesson 18.03). Hint: the new tokens come after the cached ones: start counting at "
        "cache_len, not at 0 (torch.arange with dtype torch.long and device=device)."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


def relative_positions(
    cache_len: int, q_len: int, *, device: torch.device | str | None = None
) -> torch.Tensor:
    """Relative position ``key - query`` of every new query against every key.

    The queries are the ``q_len`` new tokens, at positions ``cache_len + i``; the keys are all
    ``k_len = cache_len + q_len`` tokens, cached and new, at positions ``j = 0 .. k_len - 1``.

    Args:
        cache_len: number of tokens already in the cache (``>= 0``).
        q_len: number of new tokens (``>= 1``).
        device: where to create the tensor (default: the CPU).

    Returns:
        Tensor of shape ``(q_len, cache_len + q_len)`` and dtype ``int64`` with
        ``rel[i, j] = j - (cache_len + i)``: ``0`` where a query meets its own key, negative for
        earlier keys, positive for later ones. Its last column is ``q_len - 1 - i``.

    Raises:
        TypeError: ``cache_len`` or ``q_len`` is not an integer.
        ValueError: ``cache_len < 0`` or ``q_len < 1``.
    """
    require_int("cache_len", cache_len, 0)
    require_int("q_len", q_len, 1)
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar relative_positions (lección 18.03). Pista: posiciones de las "
        "claves 0 .. k_len-1 en una fila, las de las consultas (chunk_positions) en una "
        "columna, y resta con difusión: clave - consulta.\n[en] relative_positions is not "
        "implemented yet (lesson 18.03). Hint: key positions 0 .. k_len-1 as a row, query "
        "positions (chunk_positions) as a column, and subtract with broadcasting: key - "
        "query."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


def causal_mask_after_cache(
    cache_len: int,
    q_len: int,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Additive causal mask for ``q_len`` new queries against all ``cache_len + q_len`` keys.

    Query ``i`` (at position ``cache_len + i``) may see key ``j`` when ``j <= cache_len + i``:
    every cached key, and the new keys up to its own. This is bottom-right alignment: the mask is
    the last ``q_len`` rows of the square causal mask of ``k_len`` tokens.

    Args:
        cache_len: number of tokens already in the cache (``>= 0``).
        q_len: number of new tokens (``>= 1``).
        device: where to create the tensor (default: the CPU).
        dtype: a floating-point dtype; pass the query's dtype to SDPA.

    Returns:
        Tensor of shape ``(q_len, cache_len + q_len)`` and dtype ``dtype``: ``0.0`` where the
        query may attend and ``-inf`` where the key is in its future. No row is fully masked.
        Add it to the logits, or pass it as ``attn_mask`` to
        ``torch.nn.functional.scaled_dot_product_attention`` (without ``is_causal``).

    Raises:
        TypeError: ``cache_len`` or ``q_len`` is not an integer.
        ValueError: ``cache_len < 0``, ``q_len < 1`` or ``dtype`` not a floating-point dtype.
    """
    require_int("cache_len", cache_len, 0)
    require_int("q_len", q_len, 1)
    if not dtype.is_floating_point:
        raise ValueError(
            bilingual(
                f"dtype debe ser de punto flotante (la máscara lleva -inf); recibí {dtype}.",
                f"dtype must be a floating-point dtype (the mask holds -inf); got {dtype}.",
            )
        )
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar causal_mask_after_cache (lección 18.03). Pista: con "
        "relative_positions, la clave está en el futuro de la consulta cuando rel > 0: pon "
        "-inf ahí y 0 en el resto (torch.zeros(..., dtype=dtype) y masked_fill).\n[en] "
        "causal_mask_after_cache is not implemented yet (lesson 18.03). Hint: with "
        "relative_positions, the key is in the query's future when rel > 0: put -inf there "
        "and 0 elsewhere (torch.zeros(..., dtype=dtype) and masked_fill)."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


def bias_rows_after_cache(table: torch.Tensor, cache_len: int, q_len: int) -> torch.Tensor:
    """The rows of a precomputed attention bias that ``q_len`` new queries need.

    Models often build a bias (ALiBi, T5, a mask) once for ``M`` positions, as a square table
    ``table[..., p, j]`` = bias of the query at position ``p`` against the key at position ``j``,
    and slice it at every step. After ``cache_len`` cached tokens, the new queries are positions
    ``cache_len .. cache_len + q_len - 1`` and the keys are ``0 .. cache_len + q_len - 1``.

    Args:
        table: float tensor of shape ``(..., M, M)`` (e.g. ``(H, M, M)``), square in its last two
            dimensions, with ``M >= cache_len + q_len``.
        cache_len: number of tokens already in the cache (``>= 0``).
        q_len: number of new tokens (``>= 1``).

    Returns:
        Tensor of shape ``(..., q_len, cache_len + q_len)``: rows
        ``cache_len .. cache_len + q_len - 1`` and columns ``0 .. cache_len + q_len - 1`` of
        ``table`` (a view, same dtype and device). With ``M == cache_len + q_len`` these are the
        last ``q_len`` rows.

    Raises:
        ValueError: ``table`` is not a float tensor with at least 2 dimensions, is not square in
            its last two, or is too small for ``cache_len + q_len`` positions.
        TypeError: ``cache_len`` or ``q_len`` is not an integer.
    """
    require_tensor("table", table, "(..., M, M)", range(2, 9))
    require_int("cache_len", cache_len, 0)
    require_int("q_len", q_len, 1)
    M = table.shape[-1]
    if table.shape[-2] != M or cache_len + q_len > M:
        raise ValueError(
            bilingual(
                f"table debe ser cuadrada en sus dos últimas dimensiones y cubrir "
                f"cache_len + q_len = {cache_len + q_len} posiciones; recibí forma "
                f"{tuple(table.shape)}.",
                f"table must be square in its last two dimensions and cover "
                f"cache_len + q_len = {cache_len + q_len} positions; got shape "
                f"{tuple(table.shape)}.",
            )
        )
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar bias_rows_after_cache (lección 18.03). Pista: filas = "
        "posiciones de las consultas nuevas (a partir de cache_len, no de 0); columnas = "
        "todas las claves, de 0 a cache_len + q_len - 1.\n[en] bias_rows_after_cache is not "
        "implemented yet (lesson 18.03). Hint: rows = positions of the new queries (from "
        "cache_len, not from 0); columns = every key, from 0 to cache_len + q_len - 1."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======
