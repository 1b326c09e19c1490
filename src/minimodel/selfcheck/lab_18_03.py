"""Visible checks for lab 18.03 (KV cache). Students may read these; the grader's differ."""

from __future__ import annotations

import torch

from minimodel.selfcheck.compare import CheckList, StudentModule, expect_array
from minimodel.selfcheck.snapshots import Snapshots

checks = CheckList()
cache_positions = StudentModule("cache_positions")
snap = Snapshots("18.03")


def _long(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.long)


# --- chunk_positions ------------------------------------------------------------------------
@checks.add("chunk_positions", "empiezan en cache_len", "they start at cache_len")
def positions_after_cache() -> None:
    snap.expect(cache_positions.chunk_positions(5, 3), "chunk_positions(5, 3)")


@checks.add("chunk_positions", "sin caché: 0 .. q_len-1", "no cache: 0 .. q_len-1")
def positions_without_cache() -> None:
    value = cache_positions.chunk_positions(0, 4)
    expect_array(value, _long([0, 1, 2, 3]), name="chunk_positions(0, 4)")
    expect_array(cache_positions.chunk_positions(9, 1), _long([9]), name="chunk_positions(9, 1)")


# --- relative_positions ---------------------------------------------------------------------
@checks.add("relative_positions", "clave - consulta tras la caché", "key - query after the cache")
def relative_after_cache() -> None:
    snap.expect(cache_positions.relative_positions(2, 4), "relative_positions(2, 4)")


@checks.add("relative_positions", "un solo token nuevo", "a single new token")
def relative_one_token() -> None:
    value = cache_positions.relative_positions(6, 1)
    expect_array(value, _long([[-6, -5, -4, -3, -2, -1, 0]]), name="relative_positions(6, 1)")


# --- causal_mask_after_cache ----------------------------------------------------------------
# With one new query, the top-left mask says more than in general: what the new token would see.
ONE_TOKEN_TOP_LEFT = (
    "Con q_len = 1, la máscara arriba a la izquierda deja ver solo la clave 0: el token "
    "nuevo atendería únicamente al primero. Es lo que hace SDPA con is_causal=True.",
    "With q_len = 1, the top-left mask only lets key 0 through: the new token would "
    "attend to the first one only. That is what SDPA does with is_causal=True.",
)


@checks.add("causal_mask_after_cache", "alineada abajo a la derecha", "aligned bottom-right")
def mask_bottom_right() -> None:
    snap.expect(cache_positions.causal_mask_after_cache(2, 3), "causal_mask_after_cache(2, 3)")


@checks.add("causal_mask_after_cache", "un token nuevo lo ve todo", "one new token sees everything")
def mask_one_token() -> None:
    value, name = cache_positions.causal_mask_after_cache(5, 1), "causal_mask_after_cache(5, 1)"
    expected, mistakes = snap.answer(value, name)
    if "cache_positions.top-left" in mistakes:  # not while the answers are being computed
        mistakes["cache_positions.top-left"] = (mistakes["cache_positions.top-left"][0],
                                                *ONE_TOKEN_TOP_LEFT)
    expect_array(value, expected, name=name, mistakes=mistakes)


@checks.add("causal_mask_after_cache", "respeta dtype", "honours dtype")
def mask_dtype() -> None:
    value = cache_positions.causal_mask_after_cache(1, 2, dtype=torch.bfloat16)
    snap.expect(value, "causal_mask_after_cache(1, 2, dtype=torch.bfloat16)")


# --- bias_rows_after_cache ------------------------------------------------------------------
@checks.add("bias_rows_after_cache", "filas de las consultas nuevas", "rows of the new queries")
def rows_of_new_queries() -> None:
    table = torch.arange(64, dtype=torch.float32).reshape(8, 8)  # table[p, j] = 8 p + j
    for rows, called in ((table, ""), (table.bfloat16(), ".bfloat16()")):  # exact in bfloat16
        snap.expect(cache_positions.bias_rows_after_cache(rows, 3, 2),
                    f"bias_rows_after_cache(arange(64).reshape(8, 8){called}, 3, 2)",
                    keeps="bias_rows_after_cache")


@checks.add("bias_rows_after_cache", "tabla por cabeza, justo del tamaño",
            "per-head table, exactly the size")
def rows_per_head() -> None:
    table = torch.randn(3, 6, 6, generator=torch.Generator().manual_seed(0))
    for cache_len, q_len in ((4, 2), (5, 1)):
        snap.expect(cache_positions.bias_rows_after_cache(table, cache_len, q_len),
                    f"bias_rows_after_cache(randn(3, 6, 6) seed 0, {cache_len}, {q_len})")
