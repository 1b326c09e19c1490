"""Visible checks for lab 18.03 (KV cache). Students may read these; the grader's differ."""

from __future__ import annotations

import torch

from minimodel.selfcheck.compare import CheckList, expect_array

checks = CheckList()
INF = float("inf")


def _student():
    from minimodel.positional import cache_positions

    return cache_positions


def _long(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.long)


# --- chunk_positions ------------------------------------------------------------------------
@checks.add("chunk_positions", "empiezan en cache_len", "they start at cache_len")
def positions_after_cache() -> None:
    mistakes = {
        "restart": (
            _long([0, 1, 2]).numpy(),
            "Las posiciones vuelven a empezar en 0: es el error clásico de la caché. Los tokens "
            "nuevos van detrás de los cache_len guardados.",
            "The positions restart at 0: the classic cache bug. The new tokens come after the "
            "cache_len cached ones.",
        ),
        "off by one": (
            _long([6, 7, 8]).numpy(),
            "Sobra un 1: con cache_len tokens guardados (posiciones 0 .. cache_len-1), el primero "
            "nuevo está en la posición cache_len.",
            "Off by one: with cache_len cached tokens (positions 0 .. cache_len-1), the first new "
            "one is at position cache_len.",
        ),
    }
    value = _student().chunk_positions(5, 3)
    expect_array(value, _long([5, 6, 7]), name="chunk_positions(5, 3)", mistakes=mistakes)


@checks.add("chunk_positions", "sin caché: 0 .. q_len-1", "no cache: 0 .. q_len-1")
def positions_without_cache() -> None:
    value = _student().chunk_positions(0, 4)
    expect_array(value, _long([0, 1, 2, 3]), name="chunk_positions(0, 4)")
    expect_array(_student().chunk_positions(9, 1), _long([9]), name="chunk_positions(9, 1)")


# --- relative_positions ---------------------------------------------------------------------
def _relative(cache_len: int, q_len: int, start: int | None = None) -> torch.Tensor:
    start = cache_len if start is None else start
    query = torch.arange(start, start + q_len)[:, None]
    return torch.arange(cache_len + q_len)[None, :] - query


@checks.add("relative_positions", "clave - consulta tras la caché", "key - query after the cache")
def relative_after_cache() -> None:
    mistakes = {
        "sign": (
            (-_relative(2, 3)).numpy(),
            "El signo está al revés: aquí es clave - consulta (negativo para las claves "
            "anteriores), el convenio de T5.",
            "The sign is reversed: here it is key - query (negative for earlier keys), T5's "
            "convention.",
        ),
        "restart": (
            _relative(2, 3, start=0).numpy(),
            "Las consultas están en 0 .. q_len-1: sus posiciones deben empezar en cache_len.",
            "The queries sit at 0 .. q_len-1: their positions must start at cache_len.",
        ),
    }
    value = _student().relative_positions(2, 3)
    expected = _long([[-2, -1, 0, 1, 2], [-3, -2, -1, 0, 1], [-4, -3, -2, -1, 0]])
    expect_array(value, expected, name="relative_positions(2, 3)", mistakes=mistakes)


@checks.add("relative_positions", "un solo token nuevo", "a single new token")
def relative_one_token() -> None:
    value = _student().relative_positions(6, 1)
    expect_array(value, _long([[-6, -5, -4, -3, -2, -1, 0]]), name="relative_positions(6, 1)")


# --- causal_mask_after_cache ----------------------------------------------------------------
def _mask(cache_len: int, q_len: int, top_left: bool = False, strict: bool = False):
    rel = _relative(cache_len, q_len, start=0 if top_left else None)
    blocked = rel >= 0 if strict else rel > 0
    return torch.zeros(rel.shape).masked_fill(blocked, -INF)


@checks.add(
    "causal_mask_after_cache",
    "alineada abajo a la derecha",
    "aligned bottom-right",
)
def mask_bottom_right() -> None:
    mistakes = {
        "top-left": (
            _mask(2, 3, top_left=True).numpy(),
            "Es la máscara alineada arriba a la izquierda, la de SDPA con is_causal=True: la "
            "consulta i solo ve las claves 0 .. i. Tras la caché debe ver 0 .. cache_len + i.",
            "This is the top-left aligned mask, SDPA's with is_causal=True: query i only sees "
            "keys 0 .. i. After the cache it must see 0 .. cache_len + i.",
        ),
        "strict": (
            _mask(2, 3, strict=True).numpy(),
            "Tapas también la diagonal: cada consulta debe ver su propia clave (rel = 0).",
            "You also mask the diagonal: each query must see its own key (rel = 0).",
        ),
    }
    value = _student().causal_mask_after_cache(2, 3)
    expect_array(value, _mask(2, 3), name="causal_mask_after_cache(2, 3)", mistakes=mistakes)


@checks.add(
    "causal_mask_after_cache",
    "un token nuevo lo ve todo",
    "one new token sees everything",
)
def mask_one_token() -> None:
    value = _student().causal_mask_after_cache(5, 1)
    mistakes = {
        "top-left": (
            _mask(5, 1, top_left=True).numpy(),
            "Con q_len = 1, la máscara arriba a la izquierda deja ver solo la clave 0: el token "
            "nuevo atendería únicamente al primero. Es lo que hace SDPA con is_causal=True.",
            "With q_len = 1, the top-left mask only lets key 0 through: the new token would "
            "attend to the first one only. That is what SDPA does with is_causal=True.",
        )
    }
    expect_array(value, torch.zeros(1, 6), name="causal_mask_after_cache(5, 1)", mistakes=mistakes)


@checks.add("causal_mask_after_cache", "respeta dtype", "honours dtype")
def mask_dtype() -> None:
    value = _student().causal_mask_after_cache(1, 2, dtype=torch.bfloat16)
    expected = _mask(1, 2).to(torch.bfloat16)
    expect_array(value, expected, name="causal_mask_after_cache(1, 2, dtype=torch.bfloat16)")


# --- bias_rows_after_cache ------------------------------------------------------------------
@checks.add(
    "bias_rows_after_cache",
    "filas de las consultas nuevas",
    "rows of the new queries",
)
def rows_of_new_queries() -> None:
    table = torch.arange(64, dtype=torch.float32).reshape(8, 8)  # table[p, j] = 8 p + j
    mistakes = {
        "first rows": (
            table[:2, :5].numpy(),
            "Tomas las primeras filas (alineación arriba a la izquierda): las consultas nuevas son "
            "las filas cache_len .. cache_len + q_len - 1.",
            "You take the first rows (top-left alignment): the new queries are rows "
            "cache_len .. cache_len + q_len - 1.",
        )
    }
    value = _student().bias_rows_after_cache(table, 3, 2)
    expected = table[3:5, :5]
    expect_array(value, expected, name="bias_rows_after_cache(table 8x8, 3, 2)", mistakes=mistakes)


@checks.add(
    "bias_rows_after_cache",
    "tabla por cabeza, justo del tamaño",
    "per-head table, exactly the size",
)
def rows_per_head() -> None:
    table = torch.randn(3, 6, 6, generator=torch.Generator().manual_seed(0))
    value = _student().bias_rows_after_cache(table, 4, 2)
    expect_array(value, table[:, -2:, :], name="bias_rows_after_cache(table (3, 6, 6), 4, 2)")
    one = _student().bias_rows_after_cache(table, 5, 1)
    expect_array(one, table[:, 5:6, :], name="bias_rows_after_cache(table (3, 6, 6), 5, 1)")
