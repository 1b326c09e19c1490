"""Hidden checks of lab 18.03 (the KV cache: where the new tokens sit).

Graded from ``src/minimodel/positional/cache_positions.py`` (6 points); the notebook is not
auto-graded here. Hidden inputs: no cache (``cache_len = 0``), one new token after a long cache
(1023), chunks longer than the cache and shorter; masks in float32, float16, bfloat16 and float64;
bias tables ``(M, M)``, ``(H, M, M)`` and ``(B, H, M, M)`` in float32, float16 and bfloat16,
larger than ``cache_len + q_len`` and exactly that size; every function on PyTorch's ``meta``
device (and on CUDA when there is a GPU).

Tolerances: integer outputs must be exact; masks must hold exactly ``0`` and ``-inf``; bias rows
the per-dtype defaults (they are a slice, so they come out exact).

Known mistakes diagnosed: positions that restart at 0, the chunk starting at ``cache_len + 1``
(off by one), the new tokens' positions restarted at 0 while the cached keys keep theirs, the sign
of the relative position, the cached keys left out, positions that are not int64; the mask
aligned top-left (SDPA's ``is_causal=True``), the diagonal masked, ``-1e9`` instead of ``-inf``,
a boolean mask, ``dtype`` ignored; the bias rows taken from the start of the table (not aligned to
the end of the keys), from the end of a table larger than the keys, one row too far, with every
column of the table or only the new keys' columns; tensors created off the input's device.
"""

from __future__ import annotations

import numpy as np

from grader.hidden.common import bf16, explained, loose_for, student, whole_case
from grader.hidden.lab_17_03 import off_device
from grader.hidden.spec import Case, Device, DType, Group, Input, Item, LabChecks
from grader.verdicts import Finding, JudgeContext, Tolerance

MODULE = "cache_positions"
EXACT = Tolerance(0.0, 0.0)
# (cache_len, q_len)
CHUNK_CASES = [(0, 1), (17, 4), (1023, 1), (5, 9), (0, 13), (1, 2)]
RELATIVE_CASES = [(0, 1), (3, 4), (10, 1), (0, 5), (7, 3), (30, 6)]
# (cache_len, q_len, dtype or None for the default float32)
MASK_CASES = [(0, 4, None), (6, 3, None), (9, 1, None), (2, 5, "float16"), (3, 2, "bfloat16"),
              (4, 4, "float64"), (1, 6, None)]
# (table key, dtype, cache_len, q_len)
ROWS_CASES = [("t0", "float32", 4, 3), ("t0", "float32", 0, 5), ("t1", "float32", 7, 3),
              ("t2", "float16", 2, 1), ("t3", "bfloat16", 10, 6), ("t0", "float32", 11, 1)]
TABLES = {"t0": (3, 12, 12), "t1": (10, 10), "t2": (2, 2, 9, 9), "t3": (4, 16, 16)}


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1803)
    return {key: rng.standard_normal(shape).astype(np.float32) for key, shape in TABLES.items()}


def _mask_case(cache_len, q_len, dtype) -> Case:
    return Case("function", "causal_mask_after_cache", (cache_len, q_len),
                {"dtype": DType(dtype)} if dtype else {})


GROUPS = (
    Group("chunk", MODULE, tuple(Case("function", "chunk_positions", c) for c in CHUNK_CASES)),
    Group("relative", MODULE, tuple(Case("function", "relative_positions", c)
                                    for c in RELATIVE_CASES)),
    Group("mask", MODULE, tuple(_mask_case(*c) for c in MASK_CASES)),
    Group("rows", MODULE, tuple(Case("function", "bias_rows_after_cache", (Input(key, dtype), c, q))
                                for key, dtype, c, q in ROWS_CASES)),
    Group("device", MODULE, (
        Case("function", "chunk_positions", (3, 4), {"device": Device()}),
        Case("function", "relative_positions", (2, 3), {"device": Device()}),
        Case("function", "causal_mask_after_cache", (1, 3), {"device": Device()}),
        Case("function", "bias_rows_after_cache", (Input("t0"), 4, 3)),
    ), device=True),
)


# --- the right answers and the usual mistakes ----------------------------------------------------

def positions(cache_len: int, q_len: int, mistake: str | None = None) -> np.ndarray:
    start = {"restart": 0, "chunk-restart": 0, "off-by-one": cache_len + 1}.get(mistake,
                                                                                cache_len)
    return np.arange(start, start + q_len)


def relative(cache_len: int, q_len: int, mistake: str | None = None) -> np.ndarray:
    k_len = cache_len + q_len
    keys = np.arange(cache_len if mistake == "new-keys-only" else 0, k_len)
    if mistake == "chunk-restart":  # the cached keys keep 0 .. c-1, the new ones restart at 0
        keys = np.concatenate([np.arange(cache_len), np.arange(q_len)])
    rel = keys[None, :] - positions(cache_len, q_len, mistake)[:, None]
    return -rel if mistake == "sign" else rel


def mask(cache_len: int, q_len: int, mistake: str | None = None) -> np.ndarray:
    rel = relative(cache_len, q_len, "restart" if mistake == "top-left" else None)
    blocked = rel >= 0 if mistake == "strict" else rel > (1 if mistake == "off-by-one" else 0)
    return np.where(blocked, -np.inf, 0.0)


def rows(table: np.ndarray, cache_len: int, q_len: int, mistake: str | None = None) -> np.ndarray:
    k_len, M = cache_len + q_len, table.shape[-1]
    if mistake == "first-rows":
        return table[..., :q_len, :k_len]
    if mistake == "last-rows":
        return table[..., M - q_len:, :k_len]
    if mistake == "off-by-one":
        return table[..., cache_len + 1 : k_len + 1, :k_len]
    if mistake == "all-columns":
        return table[..., cache_len:k_len, :]
    if mistake == "new-keys-only":
        return table[..., cache_len:k_len, cache_len:k_len]
    return table[..., cache_len:k_len, :k_len]


def _changed(wrong: np.ndarray, right: np.ndarray) -> np.ndarray | None:
    """``wrong``, or ``None`` where the mistake makes no difference."""
    same = wrong.shape == right.shape and np.array_equal(wrong, right, equal_nan=True)
    return None if same else wrong


# --- judges --------------------------------------------------------------------------------------

POSITION_DIAGNOSES = {
    "restart": ("Las posiciones vuelven a empezar en 0: es el error clásico de la caché. Los "
                "tokens nuevos van detrás de los cache_len guardados, en cache_len … "
                "cache_len + q_len − 1.",
                "The positions restart at 0: the classic cache bug. The new tokens come after "
                "the cache_len cached ones, at cache_len … cache_len + q_len − 1."),
    "off-by-one": ("Sobra un 1: con cache_len tokens guardados (posiciones 0 … cache_len − 1), el "
                   "primero nuevo está en la posición cache_len, no en cache_len + 1.",
                   "Off by one: with cache_len cached tokens (positions 0 … cache_len − 1), the "
                   "first new one is at position cache_len, not cache_len + 1."),
    "chunk-restart": ("Los tokens nuevos vuelven a empezar en 0 (consultas y claves nuevas) "
                      "mientras las claves guardadas conservan 0 … cache_len − 1: todas las "
                      "posiciones siguen una sola numeración, y la de los nuevos empieza en "
                      "cache_len.",
                      "The new tokens restart at 0 (queries and new keys) while the cached keys "
                      "keep 0 … cache_len − 1: every position follows one numbering, and the new "
                      "tokens' starts at cache_len."),
    "sign": ("El signo está al revés: la posición relativa es clave − consulta, negativa para "
             "las claves anteriores (el convenio de T5).",
             "The sign is reversed: the relative position is key − query, negative for earlier "
             "keys (T5's convention)."),
    "new-keys-only": ("Faltan las claves guardadas: las columnas son TODAS las claves, "
                      "0 … cache_len + q_len − 1, no solo las de los tokens nuevos.",
                      "The cached keys are missing: the columns are ALL the keys, "
                      "0 … cache_len + q_len − 1, not only those of the new tokens."),
}


def _integer_judge(cases, make, names):
    def judge(ctx: JudgeContext):
        checks = [whole_case(ctx, k, tol=EXACT) for k in range(len(cases))]
        failing = [k for k, c in enumerate(checks) if not c.ok]

        def variant(name):
            return lambda k: _changed(make(*cases[k], name), make(*cases[k]))

        found = explained(failing, {n: variant(n) for n in names}, lambda k: student(ctx, k),
                          lambda k: EXACT)
        diagnoses = [Finding(n, *POSITION_DIAGNOSES[n]) for n in found]
        if any((out := ctx.out(k)) is not None and out.get("dtype") != "int64"
               for k in failing):
            diagnoses.append(Finding(
                "not-int64", "Las posiciones son un tensor int64 (torch.long), no float ni int32.",
                "Positions are an int64 (torch.long) tensor, not float or int32."))
        return ctx.verdict(checks, diagnoses=diagnoses)
    return judge


MASK_DIAGNOSES = {
    "top-left": ("Es la máscara alineada arriba a la izquierda, la de SDPA con is_causal=True: "
                 "la consulta i solo ve las claves 0 … i. Tras la caché está en cache_len + i y "
                 "ve las claves 0 … cache_len + i (alineación abajo a la derecha).",
                 "This is the top-left aligned mask, SDPA's with is_causal=True: query i only "
                 "sees keys 0 … i. After the cache it sits at cache_len + i and sees keys "
                 "0 … cache_len + i (bottom-right alignment)."),
    "strict": ("Tapas también la diagonal: cada consulta debe ver su propia clave (rel = 0).",
               "You also mask the diagonal: each query must see its own key (rel = 0)."),
    "off-by-one": ("Cada consulta ve una clave de más, la siguiente a la suya: la consulta i está "
                   "en cache_len + i, no en cache_len + i + 1.",
                   "Each query sees one key too many, the one after its own: query i sits at "
                   "cache_len + i, not at cache_len + i + 1."),
}


def judge_mask(ctx: JudgeContext):
    checks = [whole_case(ctx, k) for k in range(len(MASK_CASES))]
    failing = [k for k, c in enumerate(checks) if not c.ok]

    def variant(name):
        return lambda k: _changed(mask(*MASK_CASES[k][:2], name), mask(*MASK_CASES[k][:2]))

    names = explained(failing, {n: variant(n) for n in MASK_DIAGNOSES}, lambda k: student(ctx, k),
                      lambda k: EXACT)
    diagnoses = [Finding(n, *MASK_DIAGNOSES[n]) for n in names]
    overflow = [k for k in failing if ctx.out(k) is None and  # -1e9 does not fit in float16
                "overflow" in (ctx.error(k) or {}).get("message", "")]
    wrong_values = [k for k in failing if k not in overflow and
                    not ctx.compare(k, check_dtype=False).ok]
    finite = []
    for k in wrong_values:
        expected, got = mask(*MASK_CASES[k][:2]), student(ctx, k)
        future = np.isinf(expected)
        if got is not None and got.shape == expected.shape and future.any() and \
                np.all(np.isfinite(got[future])) and np.all(got[future] <= -1e3) and \
                np.all(got[~future] == 0):
            finite.append(k)
    if finite and len(finite) == len(wrong_values):
        diagnoses.append(Finding(
            "finite-mask",
            "Las claves futuras deben valer exactamente −inf, no un número muy negativo: en "
            "float16, −1e9 no cabe (masked_fill falla) y −1e4 deja pasar atención.",
            "Future keys must be exactly −inf, not a very negative number: in float16, −1e9 does "
            "not fit (masked_fill fails) and −1e4 lets some attention through."))
    dtypes = {ctx.out(k).get("dtype") for k in failing if ctx.out(k) is not None}
    if "bool" in dtypes:
        diagnoses.append(Finding(
            "bool-mask",
            "La máscara es aditiva: 0.0 donde se puede atender y −inf en el futuro, en el dtype "
            "pedido, no un tensor booleano.",
            "The mask is additive: 0.0 where attention is allowed and −inf in the future, in the "
            "requested dtype, not a boolean tensor."))
    elif any((out := ctx.out(k)) is not None and out.get("dtype") != (MASK_CASES[k][2] or
                                                                        "float32")
             for k in failing):
        diagnoses.append(Finding(
            "dtype-ignored",
            "La máscara debe tener el dtype que se pide (dtype=…), el de las consultas: SDPA "
            "exige que attn_mask y q coincidan.",
            "The mask must have the requested dtype (dtype=…), the queries' one: SDPA needs "
            "attn_mask and q to match."))
    return ctx.verdict(checks, diagnoses=diagnoses)


ROWS_DIAGNOSES = {
    "first-rows": ("Tomas las primeras filas (alineación arriba a la izquierda): las consultas "
                   "nuevas son las filas cache_len … cache_len + q_len − 1, alineadas con el "
                   "final de las claves.",
                   "You take the first rows (top-left alignment): the new queries are rows "
                   "cache_len … cache_len + q_len − 1, aligned with the end of the keys."),
    "last-rows": ("Tomas las últimas filas de la tabla, pero la tabla puede ser mayor que "
                  "cache_len + q_len: las filas son cache_len … cache_len + q_len − 1.",
                  "You take the last rows of the table, but the table may be larger than "
                  "cache_len + q_len: the rows are cache_len … cache_len + q_len − 1."),
    "off-by-one": ("Las filas empiezan una más allá: la primera consulta nueva es la fila "
                   "cache_len, no cache_len + 1.",
                   "The rows start one too far: the first new query is row cache_len, not "
                   "cache_len + 1."),
    "all-columns": ("Las columnas son las claves que existen, 0 … cache_len + q_len − 1: "
                    "recórtalas aunque la tabla tenga más.",
                    "The columns are the keys that exist, 0 … cache_len + q_len − 1: cut them "
                    "even when the table has more."),
    "new-keys-only": ("Faltan las columnas de las claves guardadas: son todas, "
                      "0 … cache_len + q_len − 1, no solo cache_len … cache_len + q_len − 1.",
                      "The columns of the cached keys are missing: they are all of them, "
                      "0 … cache_len + q_len − 1, not only cache_len … cache_len + q_len − 1."),
}


def _table(ctx: JudgeContext, k: int) -> np.ndarray:
    key, dtype, _, _ = ROWS_CASES[k]
    table = ctx.inputs[key]
    if dtype == "bfloat16":
        return bf16(table).astype(np.float64)
    return table.astype(dtype).astype(np.float64)


def judge_rows(ctx: JudgeContext):
    checks = [whole_case(ctx, k) for k in range(len(ROWS_CASES))]
    failing = [k for k, c in enumerate(checks) if not c.ok]

    def variant(name):
        def make(k):
            _, _, c, q = ROWS_CASES[k]
            table = _table(ctx, k)
            return _changed(rows(table, c, q, name), rows(table, c, q))
        return make

    names = explained(failing, {n: variant(n) for n in ROWS_DIAGNOSES}, lambda k: student(ctx, k),
                      lambda k: loose_for(ROWS_CASES[k][1]))
    diagnoses = [Finding(n, *ROWS_DIAGNOSES[n]) for n in names]
    if any((out := ctx.out(k)) is not None and out.get("dtype") != ROWS_CASES[k][1]
           for k in failing):
        diagnoses.append(Finding(
            "dtype-not-kept", "Las filas conservan el dtype de table: basta con indexarla.",
            "The rows keep the dtype of table: indexing it is enough."))
    return ctx.verdict(checks, diagnoses=diagnoses)


def judge_device(ctx: JudgeContext):
    n = len(ctx.group.cases)
    checks = []
    for k in range(n):
        values = whole_case(ctx, k)
        placed = ctx.compare(k, run=ctx.meta_run, device="meta", values=False)
        checks.append(values if not values.ok else placed)
    gpu_checks = [whole_case(ctx, k, run=ctx.gpu_run, device="cuda") for k in range(n)]
    diagnoses = [Finding(
        "device",
        "Los tensores se crean en device (o en el dispositivo de table), no en la CPU: se "
        "comprueba con el dispositivo «meta» de PyTorch, sin GPU. Pasa device=device a "
        "torch.arange y torch.zeros.",
        "The tensors are created on device (or on table's device), not on the CPU: checked with "
        "PyTorch's 'meta' device, without a GPU. Pass device=device to torch.arange and "
        "torch.zeros.")] if off_device(ctx, n) else []
    return ctx.verdict(checks, diagnoses=diagnoses, gpu_checks=gpu_checks, gpu_run=ctx.gpu_run)


ITEMS = (
    Item("chunk", "chunk", 1, "chunk_positions: los tokens nuevos van detrás de la caché",
         "chunk_positions: the new tokens come after the cache",
         _integer_judge(CHUNK_CASES, lambda c, q, m=None: positions(c, q, m),
                        ("restart", "off-by-one"))),
    Item("relative", "relative", 1, "relative_positions: clave − consulta con todas las claves",
         "relative_positions: key − query against every key",
         _integer_judge(RELATIVE_CASES, relative,
                        ("restart", "chunk-restart", "off-by-one", "sign",
                         "new-keys-only"))),
    Item("mask", "mask", 2, "causal_mask_after_cache: alineada abajo a la derecha, −inf, dtype",
         "causal_mask_after_cache: bottom-right aligned, −inf, dtype", judge_mask),
    Item("rows", "rows", 1, "bias_rows_after_cache: las filas de las consultas nuevas",
         "bias_rows_after_cache: the rows of the new queries", judge_rows),
    Item("device", "device", 1, "Caché KV: conserva el dispositivo", "KV cache: keeps the device",
         judge_device),
)

CHECKS = LabChecks(lab_id="18.03", inputs=inputs, groups=GROUPS, items=ITEMS)
