"""Classic mistakes in cache_positions.py (lesson 18.03): what a student who makes each one writes.

The module's later functions build on its earlier ones (``relative_positions`` on
``chunk_positions``, ``causal_mask_after_cache`` on ``relative_positions``), so a mistake in one
also shows in the next ones. See ``grader/mistakes.py``.
"""

import torch

from grader.mistakes import mistake
from minimodel.positional.cache_positions import relative_positions as right_relative


@mistake("chunk_positions", "restart",
         es="Las posiciones vuelven a empezar en 0: es el error clásico de la caché. Los tokens "
            "nuevos van detrás de los cache_len guardados.",
         en="The positions restart at 0: the classic cache bug. The new tokens come after the "
            "cache_len cached ones.")
def restart(cache_len: int, q_len: int, *, device=None) -> torch.Tensor:
    return torch.arange(0, q_len, dtype=torch.long, device=device)


@mistake("chunk_positions", "off_by_one",
         es="Sobra un 1: con cache_len tokens guardados (posiciones 0 .. cache_len-1), el primero "
            "nuevo está en la posición cache_len.",
         en="Off by one: with cache_len cached tokens (positions 0 .. cache_len-1), the first new "
            "one is at position cache_len.")
def off_by_one(cache_len: int, q_len: int, *, device=None) -> torch.Tensor:
    return torch.arange(cache_len + 1, cache_len + q_len + 1, dtype=torch.long, device=device)


@mistake("relative_positions", "sign",
         es="El signo está al revés: aquí es clave - consulta (negativo para las claves "
            "anteriores), el convenio de T5.",
         en="The sign is reversed: here it is key - query (negative for earlier keys), T5's "
            "convention.")
def sign(cache_len: int, q_len: int, *, device=None) -> torch.Tensor:
    return -right_relative(cache_len, q_len, device=device)


@mistake("relative_positions", "queries_from_zero",
         es="Las consultas están en 0 .. q_len-1: sus posiciones deben empezar en cache_len.",
         en="The queries sit at 0 .. q_len-1: their positions must start at cache_len.")
def queries_from_zero(cache_len: int, q_len: int, *, device=None) -> torch.Tensor:
    query = torch.arange(q_len, dtype=torch.long, device=device)[:, None]
    return torch.arange(cache_len + q_len, dtype=torch.long, device=device)[None, :] - query


@mistake("causal_mask_after_cache", "top_left",
         es="Es la máscara alineada arriba a la izquierda, la de SDPA con is_causal=True: la "
            "consulta i solo ve las claves 0 .. i. Tras la caché debe ver 0 .. cache_len + i.",
         en="This is the top-left aligned mask, SDPA's with is_causal=True: query i only sees "
            "keys 0 .. i. After the cache it must see 0 .. cache_len + i.")
def top_left(cache_len: int, q_len: int, *, device=None, dtype=torch.float32) -> torch.Tensor:
    future = ~torch.ones(q_len, cache_len + q_len, dtype=torch.bool, device=device).tril()
    return torch.zeros(future.shape, dtype=dtype, device=device).masked_fill(future, -torch.inf)


@mistake("causal_mask_after_cache", "strict",
         es="Tapas también la diagonal: cada consulta debe ver su propia clave (rel = 0).",
         en="You also mask the diagonal: each query must see its own key (rel = 0).")
def strict(cache_len: int, q_len: int, *, device=None, dtype=torch.float32) -> torch.Tensor:
    future = right_relative(cache_len, q_len, device=device) >= 0
    return torch.zeros(future.shape, dtype=dtype, device=device).masked_fill(future, -torch.inf)


@mistake("bias_rows_after_cache", "first_rows",
         es="Tomas las primeras filas (alineación arriba a la izquierda): las consultas nuevas son "
            "las filas cache_len .. cache_len + q_len - 1.",
         en="You take the first rows (top-left alignment): the new queries are rows "
            "cache_len .. cache_len + q_len - 1.")
def first_rows(table: torch.Tensor, cache_len: int, q_len: int) -> torch.Tensor:
    return table[..., :q_len, : cache_len + q_len]
