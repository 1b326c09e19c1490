"""Hidden checks of lab 18.03 (the KV cache: where the new tokens sit).

Graded from ``src/minimodel/positional/cache_positions.py`` (6 points) and the lab notebook (four
auto-graded cells, 9 points; the written answers are graded by hand). Hidden inputs: no cache
(``cache_len = 0``), one new token after a long cache (1023), chunks longer than the cache and
shorter; masks in float32, float16, bfloat16 and float64; bias tables ``(M, M)``, ``(H, M, M)`` and
``(B, H, M, M)`` in float32, float16 and bfloat16, larger than ``cache_len + q_len`` and exactly
that size; every function on PyTorch's ``meta`` device (and on CUDA when there is a GPU).

Tolerances: integer outputs must be exact; masks must hold exactly ``0`` and ``-inf``; bias rows
the per-dtype defaults (they are a slice, so they come out exact).

Known mistakes diagnosed: those of the values, from the catalogue
``solutions/mistakes/cache_positions.py`` (positions restarted, off by one, restarted for the new
tokens only, the relative sign, the cached keys left out; the mask top-left or strict; the bias
rows from the start, from the end of a larger table, one row too far, with too many or too few
columns); positions not int64, ``-1e9`` for ``-inf``, a boolean mask, ``dtype`` ignored or not
kept, tensors created off the input's device.

Notebook: ``test-positions`` records the visible and hidden values of the four functions (exact;
the mistakes above recognised from them); the probe group ``notebook`` computes those records
again from the module, outside the kernel, and each passes only when both agree (all but
``rows``, whose table the notebook builds with the student's own mask), so a cell that overwrites
them gains nothing. ``test-chunk-bias`` records ALiBi's bias and the zero biases exactly, and,
the T5 table being trained, the largest difference between ``chunk_bias`` plus the mask and the
model's own bias, judged by property (within 1e-5); diagnosed: ALiBi's sign, T5's bias not
multiplied by ``bias_scale``. ``test-exact`` records the largest logit differences of cached
decoding from the full pass (trained models: judged by property, below 1e-4, as the test cell)
and names the encodings that fail. Both depend on ``chunk_bias``, written in the notebook, and on
the notebook's given decoder, and are judged from the student's kernel; the part of
``test-exact`` that the modules decide is computed outside it too: the probe group ``exact``
decodes fresh Mini-GPTs of every encoding through their own KV cache in chunks (each masked by
the student's ``causal_mask_after_cache``) with the test cell's prefills and steps, and each
cached-equals-full property holds only when those gaps are below 1e-4 too. ``test-kv-bytes``
records the byte counts, exact (diagnosed: keys or values counted once, ``bytes_per_value`` or
``batch`` ignored).
"""

from __future__ import annotations

import numpy as np

from grader.hidden.cells import (
    EXACT,
    Mistake,
    Property,
    cell_judge,
    differences_below,
    recomputed,
    value,
)
from grader.hidden.common import cases_judge, device_judge, finite_mask, judged_cases, student
from grader.hidden.spec import (
    Case,
    CellCheck,
    Device,
    DType,
    Function,
    Group,
    Input,
    Items,
    LabChecks,
)
from grader.trusted.verdicts import Finding, JudgeContext
from minimodel.course import COURSE_ENCODINGS as ENCODINGS

MODULE = "cache_positions"
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


NB_CASES = [(0, 1), (0, 6), (7, 1), (4, 3), (30, 2)]  # the test cell's hidden (cache_len, q_len)


def _arange_table(c: int, q: int) -> np.ndarray:
    """The test cell's table for ``bias_rows_after_cache``: ``(2, c + q + 3, c + q + 3)``."""
    n = c + q + 3
    return np.arange(2 * n * n, dtype=np.float32).reshape(2, n, n)


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1803)
    tables = {key: rng.standard_normal(shape).astype(np.float32) for key, shape in TABLES.items()}
    tokens = {"tokens": rng.integers(1, SMALL["vocab_size"], (2, 64)),  # test-exact's idx
              "other": rng.integers(1, SMALL["vocab_size"], (3, 40))}  # and its hidden text
    return {**tables, **tokens, **{f"nb{c}_{q}": _arange_table(c, q) for c, q in NB_CASES}}


# The notebook's models (vocab_size: the stdlib data's), decoded through the Mini-GPT's own KV
# cache in chunks of ``step`` tokens after the prefill: each chunk of several tokens is masked by
# the student's causal_mask_after_cache, whatever the encoding
SMALL = dict(vocab_size=98, block_size=64, n_layer=2, n_head=4, n_embd=64)


def _decode(step: int) -> Function:
    return Function(f"lambda model, idx, p, cache: torch.cat([model(idx[:, :p], cache=cache)[0]]"
                    f" + [model(idx[:, t : t + {step}], cache=cache)[0] for t in range(p, "
                    f"idx.size(1), {step})], dim=1)")


def _gaps(name: str, key: str, step: int, prefill: int, seed: int) -> Case:
    return Case("given", "minimodel.cache_gaps.cache_gaps",
                (_decode(step), name, Input(key, "int64"), [prefill]), {"seed": seed, **SMALL})


# test-exact's differences, computed from the modules outside the kernel: as the test cell, a
# prefill of 24 then one token or 5 at a time (visible), of 1 then 3 at a time or of 39 (hidden)
# (with RoPE's raw keys, a prefill of 10 then single tokens, whose mask the Mini-GPT builds
# itself: chunks of 3 instead)
EXACT_CASES = (*(_gaps(e, "tokens", step, 24, 0) for e in ENCODINGS for step in (1, 5)),
               *(_gaps(e, "other", step, prefill, 1) for e in ENCODINGS
                 for step, prefill in ((3, 1), (1, 39))),
               _gaps("rope", "other", 3, 10, 1))
EXACT_VISIBLE = tuple(range(2 * len(ENCODINGS)))
EXACT_HIDDEN = tuple(range(2 * len(ENCODINGS), 4 * len(ENCODINGS)))
EXACT_RAW = (4 * len(ENCODINGS),)

# test-positions' records that call the module, computed again outside the kernel
NB_GROUP, NB_RECOMPUTED = recomputed("notebook", MODULE, {
    "chunk": [("chunk_positions", (2, 3))],
    "relative": [("relative_positions", (2, 3))],
    "mask": [("causal_mask_after_cache", (2, 3))],
    "rels": [("relative_positions", case) for case in NB_CASES],
    "masks": [("causal_mask_after_cache", case) for case in NB_CASES],
    "table_rows": [("bias_rows_after_cache", (Input(f"nb{c}_{q}"), c, q)) for c, q in NB_CASES],
})


GROUPS = (
    Group("chunk", MODULE, tuple(Case("function", "chunk_positions", c) for c in CHUNK_CASES)),
    Group("relative", MODULE, tuple(Case("function", "relative_positions", c)
                                    for c in RELATIVE_CASES)),
    Group("mask", MODULE, tuple(Case("function", "causal_mask_after_cache", (c, q), {
        "dtype": DType(dtype)} if dtype else {}) for c, q, dtype in MASK_CASES)),
    Group("rows", MODULE, tuple(Case("function", "bias_rows_after_cache", (Input(key, dtype), c, q))
                                for key, dtype, c, q in ROWS_CASES)),
    Group("device", MODULE, (
        Case("function", "chunk_positions", (3, 4), {"device": Device()}),
        Case("function", "relative_positions", (2, 3), {"device": Device()}),
        Case("function", "causal_mask_after_cache", (1, 3), {"device": Device()}),
        Case("function", "bias_rows_after_cache", (Input("t0"), 4, 3)),
    ), device=True),
    NB_GROUP,
    Group("exact", MODULE, EXACT_CASES),
)


# --- judges --------------------------------------------------------------------------------------

ITEMS = Items()


judge_positions = cases_judge(tol=EXACT, wrong_output=(
    lambda out, k: out.get("dtype") != "int64", Finding(
        "not-int64", "Las posiciones son un tensor int64 (torch.long), no float ni int32.",
        "Positions are an int64 (torch.long) tensor, not float or int32.")))
ITEMS.add("chunk", 1, "chunk_positions: los tokens nuevos van detrás de la caché",
          "chunk_positions: the new tokens come after the cache", judge_positions)
ITEMS.add("relative", 1, "relative_positions: clave − consulta con todas las claves",
          "relative_positions: key − query against every key", judge_positions)


@ITEMS.judge("mask", 2, "causal_mask_after_cache: alineada abajo a la derecha, −inf, dtype",
             "causal_mask_after_cache: bottom-right aligned, −inf, dtype")
def judge_mask(ctx: JudgeContext):
    checks, failing, diagnoses = judged_cases(ctx)
    overflow = [k for k in failing if ctx.out(k) is None and  # -1e9 does not fit in float16
                "overflow" in (ctx.error(k) or {}).get("message", "")]
    wrong_values = [k for k in failing if k not in overflow and
                    not ctx.compare(k, check_dtype=False).ok]
    if wrong_values and all(finite_mask(student(ctx, k), np.asarray(
            ctx.refs[k][0]["array"], dtype=np.float64), rtol=0, atol=0) for k in wrong_values):
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


ITEMS.add("rows", 1, "bias_rows_after_cache: las filas de las consultas nuevas",
          "bias_rows_after_cache: the rows of the new queries",
          cases_judge(keeps=("bias_rows_after_cache", [case[1] for case in ROWS_CASES])))


ITEMS.add("device", 1, "Caché KV: conserva el dispositivo", "KV cache: keeps the device",
          device_judge(
    "Los tensores se crean en device (o en el dispositivo de table), no en la CPU: se "
    "comprueba con el dispositivo «meta» de PyTorch, sin GPU. Pasa device=device a "
    "torch.arange y torch.zeros.",
    "The tensors are created on device (or on table's device), not on the CPU: checked with "
    "PyTorch's 'meta' device, without a GPU. Pass device=device to torch.arange and "
    "torch.zeros."))


# --- the notebook --------------------------------------------------------------------------------

BIAS_CASES = ((5, 3), (0, 7), (20, 1), (9, 4))


def _joined(make) -> str:
    return f"torch.cat([({make}).flatten() for c, q in {NB_CASES}])"


def _gap(model: str, scaled: str = "") -> str:
    """Largest |chunk_bias + mask − the model's own bias| over BIAS_CASES (−inf − −inf = 0)."""
    return (f"(lambda m: torch.tensor([torch.nan_to_num(chunk_bias(m, relative_positions(c, q))"
            f"{scaled} + causal_mask_after_cache(c, q) - m.hooks.attention_bias(q, c + q)[0], "
            f"nan=0.0).abs().max().item() for c, q in {BIAS_CASES}]))(models[{model!r}])")


BIAS_MISTAKES = (
    Mistake("nb-alibi-sign", lambda get: {"alibi": -get("ref:alibi")},
            "El sesgo de ALiBi tiene el signo al revés: es m_h · rel = −m_h · distancia, negativo "
            "para las claves anteriores (rel = clave − consulta < 0).",
            "ALiBi's bias has the wrong sign: it is m_h · rel = −m_h · distance, negative for "
            "earlier keys (rel = key − query < 0).", EXACT),
    Mistake("nb-t5-not-scaled", lambda get: {"t5_scaled": np.zeros(len(BIAS_CASES))},
            "Falta multiplicar el sesgo de T5 por model.hooks.bias_scale (√d_h): T5 no divide sus "
            "logits por √d_h y el modelo escala su sesgo para compensarlo.",
            "T5's bias is missing the factor model.hooks.bias_scale (√d_h): T5 does not divide "
            "its logits by √d_h and the model scales its bias to make up for it."),
)

BIAS_PROPERTIES = (
    Property("nb-bias-differs", ("gaps",),
             lambda g: g.shape == (2 * len(BIAS_CASES),) and bool(np.all(g <= 1e-5)),
             "chunk_bias más la máscara no coincide con el sesgo que usa el modelo "
             "(model.hooks.attention_bias) con ALiBi o con T5.",
             "chunk_bias plus the mask does not match the bias the model uses "
             "(model.hooks.attention_bias) with ALiBi or T5."),
)


EXACT_PROPERTIES = (
    differences_below(
        "nb-cache-not-exact", "exact", 1e-4,
        "Con la caché, los logits no coinciden con la pasada entera (diferencia de 1e-4 o "
        "más).",
        "With the cache, the logits do not match the full pass (a difference of 1e-4 or "
        "more).", probed=EXACT_VISIBLE),
    differences_below(
        "nb-cache-not-exact-hidden", "hidden", 1e-4,
        "Con otros textos, otro prefill y otros trozos, los logits con caché no coinciden "
        "con la pasada entera.",
        "With other texts, another prefill and other chunks, the cached logits do not match "
        "the full pass.", probed=EXACT_HIDDEN),
    differences_below(
        "nb-raw-keys", "raw", 1e-4,
        "Con RoPE y las claves guardadas sin girar (keys=\"raw\"), los logits con caché no "
        "coinciden con la pasada entera.",
        "With RoPE and the keys cached unrotated (keys=\"raw\"), the cached logits do not "
        "match the full pass.", probed=EXACT_RAW),
)


def _exact_findings(ctx, ok: dict) -> list[Finding]:
    exact, hidden = value(ctx, "exact"), value(ctx, "hidden")
    if not (isinstance(exact, np.ndarray) and exact.shape == (6,) and
            isinstance(hidden, np.ndarray) and hidden.shape == (6, 2)):
        return []
    worst = np.maximum(np.nan_to_num(exact, nan=np.inf),
                       np.nan_to_num(hidden, nan=np.inf).max(axis=1))
    failing = [e for e, w in zip(ENCODINGS, worst, strict=True) if not w < 1e-4]
    if not failing:
        return []
    listed = ", ".join(failing)
    if set(failing) <= {"alibi", "t5"}:
        es = ("Solo fallan las codificaciones con sesgo: revisa chunk_bias (y "
              "relative_positions, de la que sale rel).")
        en = ("Only the encodings with a bias fail: check chunk_bias (and relative_positions, "
              "where rel comes from).")
    else:
        es = ("Fallan codificaciones sin sesgo: revisa las posiciones de los tokens nuevos "
              "(chunk_positions) y la máscara (causal_mask_after_cache).")
        en = ("Encodings without a bias fail: check the positions of the new tokens "
              "(chunk_positions) and the mask (causal_mask_after_cache).")
    return [Finding("nb-cache-encodings", f"La caché no es exacta con: {listed}. {es}",
                    f"The cache is not exact with: {listed}. {en}")]


def _kv(n, c, length, batch=1, per=4, mistake=None) -> int:
    if mistake == "keys-only":
        return n * batch * length * c * per
    if mistake == "bytes-ignored":
        per = 4
    if mistake == "batch-ignored":
        batch = 1
    return 2 * n * batch * length * c * per


KV_VISIBLE = [(2, 64, 64, 2, 4), (32, 4096, 4096, 1, 2)]
KV_HIDDEN = [(4, 128, 1024, 1, 4), (1, 8, 3, 5, 2)]
KV_MEASURED = _kv(*KV_VISIBLE[0])  # what the notebook measures on the cache (given code)
KV_DIAGNOSES = {
    "keys-only": ("Cada capa guarda claves Y valores: el total lleva un factor 2.",
                  "Every layer stores keys AND values: the total has a factor 2."),
    "bytes-ignored": ("Usa bytes_per_value: en bfloat16 o float16 cada número ocupa 2 bytes, no 4.",
                      "Use bytes_per_value: in bfloat16 or float16 each number takes 2 bytes, not "
                      "4."),
    "batch-ignored": ("Falta batch: la caché guarda claves y valores de cada secuencia del lote.",
                      "batch is missing: the cache stores keys and values for every sequence of "
                      "the batch."),
}
KV_MISTAKES = tuple(
    Mistake(f"nb-kv-{name}", lambda get, n=name: {
        "visible": np.array([_kv(*KV_VISIBLE[0], mistake=n), KV_MEASURED,
                             _kv(*KV_VISIBLE[1], mistake=n)]),
        "hidden": np.array([_kv(*a, mistake=n) for a in KV_HIDDEN])}, es, en, EXACT)
    for name, (es, en) in KV_DIAGNOSES.items())

CELLS = (
    CellCheck("test-positions", "Cuaderno: posiciones, máscara y filas tras la caché",
              "Notebook: positions, mask and rows after the cache",
              {"chunk": "chunk_positions(2, 3)",
               "chunk_dtype": "str(chunk_positions(2, 3).dtype)",
               "relative": "relative_positions(2, 3)",
               "mask": "causal_mask_after_cache(2, 3)",
               "rows": "bias_rows_after_cache(square, 2, 3)",
               "rels": _joined("relative_positions(c, q)"),
               "masks": _joined("causal_mask_after_cache(c, q)"),
               "table_rows": _joined("bias_rows_after_cache(torch.arange(2 * (c + q + 3) ** "
                                     "2, dtype=torch.float32).reshape(2, c + q + 3, c + q + "
                                     "3), c, q)")},
              cell_judge(tol=EXACT, recomputed=NB_RECOMPUTED), catalogue=MODULE,
              given="square = causal_mask_after_cache(0, 5)", group="notebook"),
    CellCheck("test-chunk-bias", "Cuaderno: el sesgo de un trozo tras la caché",
              "Notebook: the bias of a chunk after the cache",
              {"alibi": "chunk_bias(models['alibi'], relative_positions(5, 3))",
               "zeros": "torch.stack([chunk_bias(models[e], relative_positions(2, 2)) "
                        "for e in ('none', 'sinusoidal', 'learned', 'rope')])",
               "t5_shape": "torch.tensor(chunk_bias(models['t5'], relative_positions(5, 3))"
                           ".shape)",
               "gaps": f"torch.cat([{_gap('alibi')}, {_gap('t5')}])",
               "t5_scaled": _gap("t5", " * m.hooks.bias_scale")},
              cell_judge(tols={"t5_shape": EXACT, "zeros": EXACT},
                         properties=BIAS_PROPERTIES, mistakes=BIAS_MISTAKES),
              volatile=frozenset({"gaps", "t5_scaled"})),
    CellCheck("test-exact", "Cuaderno: la decodificación con caché es exacta",
              "Notebook: cached decoding is exact",
              {"exact": "torch.tensor([exact[e] for e in ENCODINGS])",
               "hidden": "(lambda other: torch.tensor([[(cached_logits(m, other, 1, step=3) - "
                         "m(other)[0]).abs().max().item(), (cached_logits(m, other, 39) - "
                         "m(other)[0]).abs().max().item()] for m in "
                         "(models[e] for e in ENCODINGS)]))"
                         "(data.eval_batch('val', 3, 40)[0])",
               "raw": "(lambda other: (cached_logits(models['rope'], other, 10, keys='raw')"
                      " - models['rope'](other)[0]).abs().max().item())"
                      "(data.eval_batch('val', 3, 40)[0])"},
              cell_judge(properties=EXACT_PROPERTIES, diagnoses=(_exact_findings,)),
              volatile=frozenset({"exact", "hidden", "raw"}), group="exact"),
    CellCheck("test-kv-bytes", "Cuaderno: la memoria de la caché KV",
              "Notebook: the memory of the KV cache",
              {"visible": "torch.tensor([kv_cache_bytes(2, 64, T, batch=2), measured, "
                          "kv_cache_bytes(32, 4096, 4096, bytes_per_value=2)])",
               "hidden": "torch.tensor([kv_cache_bytes(4, 128, 1024), "
                         "kv_cache_bytes(1, 8, 3, batch=5, bytes_per_value=2)])"},
              cell_judge(tol=EXACT, mistakes=KV_MISTAKES)),
)

CHECKS = LabChecks(
    lab_id="18.03", inputs=inputs, groups=GROUPS, items=ITEMS, cells=CELLS, questions=(
        ("por qué reiniciar las posiciones afecta a T5 y no a ALiBi",
         "why restarting the positions affects T5 and not ALiBi"),
        ("la caché con NTK dinámico", "the cache with dynamic NTK")))
