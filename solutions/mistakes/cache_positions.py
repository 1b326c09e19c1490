"""Classic mistakes in cache_positions.py (lesson 18.03): what a student who makes each one writes.

The module's later functions build on its earlier ones (``relative_positions`` on
``chunk_positions``, ``causal_mask_after_cache`` on ``relative_positions``), so a mistake in one
also shows in the next ones: the positions restarted at 0 give the top-left mask, and a chunk
that starts one position too far gives a mask that lets each query see one key too many. See
``grader/build/mistakes.py``.
"""

import torch

from grader.build.mistakes import mistake
from minimodel.positional.cache_positions import relative_positions as right_relative


def _mask(future: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return torch.zeros(future.shape, dtype=dtype, device=future.device).masked_fill(
        future, -torch.inf)


@mistake("chunk_positions", "restart",
         es="Las posiciones vuelven a empezar en 0: es el error clásico de la caché. Los tokens "
            "nuevos van detrás de los cache_len guardados, en cache_len … cache_len + q_len − 1.",
         en="The positions restart at 0: the classic cache bug. The new tokens come after the "
            "cache_len cached ones, at cache_len … cache_len + q_len − 1.")
def restart(cache_len: int, q_len: int, *, device=None) -> torch.Tensor:
    return torch.arange(0, q_len, dtype=torch.long, device=device)


@mistake("chunk_positions", "off-by-one",
         es="Sobra un 1: con cache_len tokens guardados (posiciones 0 … cache_len − 1), el primero "
            "nuevo está en la posición cache_len, no en cache_len + 1.",
         en="Off by one: with cache_len cached tokens (positions 0 … cache_len − 1), the first new "
            "one is at position cache_len, not cache_len + 1.")
def off_by_one(cache_len: int, q_len: int, *, device=None) -> torch.Tensor:
    return torch.arange(cache_len + 1, cache_len + q_len + 1, dtype=torch.long, device=device)


@mistake("relative_positions", "sign",
         es="El signo está al revés: la posición relativa es clave − consulta, negativa para las "
            "claves anteriores (el convenio de T5).",
         en="The sign is reversed: the relative position is key − query, negative for earlier "
            "keys (T5's convention).")
def sign(cache_len: int, q_len: int, *, device=None) -> torch.Tensor:
    return -right_relative(cache_len, q_len, device=device)


@mistake("relative_positions", "chunk-restart",
         es="Los tokens nuevos vuelven a empezar en 0 (consultas y claves nuevas) mientras las "
            "claves guardadas conservan 0 … cache_len − 1: todas las posiciones siguen una sola "
            "numeración, y la de los nuevos empieza en cache_len.",
         en="The new tokens restart at 0 (queries and new keys) while the cached keys keep "
            "0 … cache_len − 1: every position follows one numbering, and the new tokens' starts "
            "at cache_len.")
def chunk_restart(cache_len: int, q_len: int, *, device=None) -> torch.Tensor:
    query = torch.arange(q_len, dtype=torch.long, device=device)[:, None]
    key = torch.cat([torch.arange(cache_len, dtype=torch.long, device=device),
                     torch.arange(q_len, dtype=torch.long, device=device)])[None, :]
    return key - query


@mistake("relative_positions", "new-keys-only",
         es="Faltan las claves guardadas: las columnas son TODAS las claves, "
            "0 … cache_len + q_len − 1, no solo las de los tokens nuevos.",
         en="The cached keys are missing: the columns are ALL the keys, "
            "0 … cache_len + q_len − 1, not only those of the new tokens.")
def new_keys_only(cache_len: int, q_len: int, *, device=None) -> torch.Tensor:
    return right_relative(cache_len, q_len, device=device)[:, cache_len:]


@mistake("causal_mask_after_cache", "top-left",
         es="Es la máscara alineada arriba a la izquierda, la de SDPA con is_causal=True: la "
            "consulta i solo ve las claves 0 … i. Tras la caché está en cache_len + i y ve las "
            "claves 0 … cache_len + i (alineación abajo a la derecha).",
         en="This is the top-left aligned mask, SDPA's with is_causal=True: query i only sees "
            "keys 0 … i. After the cache it sits at cache_len + i and sees keys "
            "0 … cache_len + i (bottom-right alignment).")
def top_left(cache_len: int, q_len: int, *, device=None, dtype=torch.float32) -> torch.Tensor:
    future = ~torch.ones(q_len, cache_len + q_len, dtype=torch.bool, device=device).tril()
    return _mask(future, dtype)


@mistake("causal_mask_after_cache", "strict",
         es="Tapas también la diagonal: cada consulta debe ver su propia clave (rel = 0).",
         en="You also mask the diagonal: each query must see its own key (rel = 0).")
def strict(cache_len: int, q_len: int, *, device=None, dtype=torch.float32) -> torch.Tensor:
    return _mask(right_relative(cache_len, q_len, device=device) >= 0, dtype)


@mistake("bias_rows_after_cache", "first-rows",
         es="Tomas las primeras filas (alineación arriba a la izquierda): las consultas nuevas son "
            "las filas cache_len … cache_len + q_len − 1, alineadas con el final de las claves.",
         en="You take the first rows (top-left alignment): the new queries are rows "
            "cache_len … cache_len + q_len − 1, aligned with the end of the keys.")
def first_rows(table: torch.Tensor, cache_len: int, q_len: int) -> torch.Tensor:
    return table[..., :q_len, : cache_len + q_len]


@mistake("bias_rows_after_cache", "last-rows",
         es="Tomas las últimas filas de la tabla, pero la tabla puede ser mayor que "
            "cache_len + q_len: las filas son cache_len … cache_len + q_len − 1.",
         en="You take the last rows of the table, but the table may be larger than "
            "cache_len + q_len: the rows are cache_len … cache_len + q_len − 1.")
def last_rows(table: torch.Tensor, cache_len: int, q_len: int) -> torch.Tensor:
    return table[..., -q_len:, : cache_len + q_len]


@mistake("bias_rows_after_cache", "rows-off-by-one",
         es="Las filas empiezan una más allá: la primera consulta nueva es la fila cache_len, no "
            "cache_len + 1.",
         en="The rows start one too far: the first new query is row cache_len, not "
            "cache_len + 1.")
def rows_off_by_one(table: torch.Tensor, cache_len: int, q_len: int) -> torch.Tensor:
    k_len = cache_len + q_len
    return table[..., cache_len + 1 : k_len + 1, :k_len]


@mistake("bias_rows_after_cache", "all-columns",
         es="Las columnas son las claves que existen, 0 … cache_len + q_len − 1: recórtalas "
            "aunque la tabla tenga más.",
         en="The columns are the keys that exist, 0 … cache_len + q_len − 1: cut them even when "
            "the table has more.")
def all_columns(table: torch.Tensor, cache_len: int, q_len: int) -> torch.Tensor:
    return table[..., cache_len : cache_len + q_len, :]


@mistake("bias_rows_after_cache", "rows-new-keys-only",
         es="Faltan las columnas de las claves guardadas: son todas, 0 … cache_len + q_len − 1, "
            "no solo cache_len … cache_len + q_len − 1.",
         en="The columns of the cached keys are missing: they are all of them, "
            "0 … cache_len + q_len − 1, not only cache_len … cache_len + q_len − 1.")
def rows_new_keys_only(table: torch.Tensor, cache_len: int, q_len: int) -> torch.Tensor:
    k_len = cache_len + q_len
    return table[..., cache_len:k_len, cache_len:k_len]
