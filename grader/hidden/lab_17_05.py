"""Hidden checks of lab 17.05 (learned relative biases: T5 buckets, Swin's index).

Graded from ``src/minimodel/positional/relative_bias.py`` (4 points); the notebook is not
auto-graded here. Hidden inputs: relative positions far past ``max_distance`` on both sides, other
bucket counts and distances (64/200, 10/20, 8/30, the T5 defaults), 0-d to 3-d position tensors;
Swin windows that are not square (1 x 5, 3 x 2, 4 x 7).

``RelativePositionBias`` is not graded here yet: its table is random and the child cannot set it,
so its outputs cannot be stored as references. ``judge_bias`` (a property: one table row per
bucket, queries aligned to the end) is ready for when the probe can fix the table.
Tolerances: integer outputs must be exact.

Known mistakes diagnosed: the sign of the relative position (``query - key``), num_buckets not
halved in bidirectional mode, the causal mode with ``|rel|`` (future keys not sent to bucket 0),
Swin's index with T5's sign (key minus query) or with the
row stride of the window (``window_w``) instead of the table's (``2 window_w - 1``).
"""

from __future__ import annotations

import math

import numpy as np

from grader.hidden.common import explained, student, whole_case
from grader.hidden.spec import Case, Group, Input, Item, LabChecks
from grader.verdicts import Check, Finding, JudgeContext, Tolerance

MODULE = "relative_bias"
EXACT = Tolerance(0.0, 0.0)
# (positions key, bidirectional, num_buckets, max_distance); None: the T5 defaults
BUCKET_CASES = [("r0", True, 64, 200), ("r0", False, 64, 200), ("r1", True, 10, 20),
                ("r1", False, 10, 20), ("r2", False, None, None), ("r2", True, None, None),
                ("r3", True, 8, 30), ("r4", False, 8, 30)]
# (n_heads, num_buckets, max_distance, bidirectional, q_len, k_len)
BIAS_CASES = [(3, 16, 40, False, 5, 60), (2, 12, 30, True, 4, 45), (4, 32, 128, False, 1, 200),
              (2, 8, 20, True, 9, 9), (1, 10, 25, True, 3, 70)]
WINDOWS = [(1, 5), (3, 2), (4, 7), (5, 5)]


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1705)
    return {
        "r0": np.arange(-420, 421, 3, dtype=np.int64),
        "r1": (np.arange(37)[None, :] - np.arange(37)[:, None]).astype(np.int64),
        "r2": rng.integers(-600, 600, size=(3, 4, 9)).astype(np.int64),
        "r3": np.array(-29, dtype=np.int64),
        "r4": np.arange(-64, 65, dtype=np.int64).reshape(1, 129),
    }


def _bucket_case(key, bidirectional, nb, dist) -> Case:
    kwargs = {"bidirectional": bidirectional}
    if nb is not None:
        kwargs.update(num_buckets=nb, max_distance=dist)
    return Case("function", "relative_position_bucket", (Input(key, "int64"),), kwargs)


GROUPS = (
    Group("buckets", MODULE, tuple(_bucket_case(*c) for c in BUCKET_CASES)),
    Group("swin", MODULE, tuple(Case("function", "swin_relative_index", w) for w in WINDOWS)),
)


def bucket(rel, bidirectional: bool, num_buckets: int = 32, max_distance: int = 128, *,
           halve: bool = True, causal_abs: bool = False) -> np.ndarray:
    """T5's buckets (float32 log, as the reference), or one of the usual mistakes."""
    rel = np.asarray(rel, dtype=np.int64)
    out = np.zeros_like(rel)
    if bidirectional:
        if halve:
            num_buckets //= 2
        out = out + (rel > 0) * num_buckets
        n = np.abs(rel)
    else:
        n = np.abs(rel) if causal_abs else np.maximum(-rel, 0)
    exact = num_buckets // 2
    ratio = np.maximum(n, exact).astype(np.float32) / np.float32(exact)
    scaled = (np.log(ratio) / np.float32(math.log(max_distance / exact))).astype(np.float32)
    large = np.minimum(exact + (scaled * np.float32(num_buckets - exact)).astype(np.int64),
                       num_buckets - 1)
    return out + np.where(n < exact, n, large)


BUCKET_DIAGNOSES = {
    "sign": ("La posición relativa es clave − consulta, tal como llega: no le cambies el signo. "
             "En modo causal, las claves pasadas (rel < 0) son las que reciben cubetas distintas.",
             "The relative position is key − query, as it comes: do not flip its sign. In causal "
             "mode the past keys (rel < 0) are the ones that get distinct buckets."),
    "not-halved": ("En modo bidireccional cada lado usa la mitad de las cubetas: divide "
                   "num_buckets entre 2 antes de calcular las exactas y las logarítmicas.",
                   "In bidirectional mode each side uses half the buckets: divide num_buckets "
                   "by 2 before computing the exact and the logarithmic ones."),
    "causal-abs": ("En modo causal n = max(−rel, 0): todas las claves futuras van a la cubeta 0, "
                   "no a la cubeta de |rel|.",
                   "In causal mode n = max(−rel, 0): every future key goes to bucket 0, not to "
                   "the bucket of |rel|."),
}


def _bucket_args(k):
    key, bi, nb, md = BUCKET_CASES[k]
    return key, bi, (nb or 32), (md or 128)


def judge_buckets(ctx: JudgeContext):
    checks = [whole_case(ctx, k, tol=EXACT) for k in range(len(BUCKET_CASES))]
    failing = [k for k, c in enumerate(checks) if not c.ok]

    def variant(kind):
        def make(k):
            key, bi, nb, md = _bucket_args(k)
            rel = ctx.inputs[key]
            if kind == "sign":
                wrong = bucket(-rel, bi, nb, md)
            elif kind == "not-halved":
                wrong = bucket(rel, bi, nb, md, halve=False) if bi else None
            else:
                wrong = None if bi else bucket(rel, bi, nb, md, causal_abs=True)
            return None if wrong is None or np.array_equal(wrong, bucket(rel, bi, nb, md)) \
                else wrong
        return make

    names = explained(failing, {kind: variant(kind) for kind in BUCKET_DIAGNOSES},
                      lambda k: student(ctx, k), lambda k: EXACT)
    return ctx.verdict(checks, diagnoses=[Finding(n, *BUCKET_DIAGNOSES[n]) for n in names])


def bias_buckets(k: int, align: str = "end", sign: int = 1) -> np.ndarray:
    """The bucket of every (query, key) of bias case ``k``: ``(q_len, k_len)``."""
    _, nb, md, bi, q, kl = BIAS_CASES[k]
    query = np.arange(kl - q, kl) if align == "end" else np.arange(q)
    rel = np.arange(kl)[None, :] - query[:, None]
    return bucket(sign * rel, bi, nb, md)


def follows(values: np.ndarray | None, buckets: np.ndarray) -> bool:
    """Whether ``values (H, q, k)`` is one table row per bucket: equal exactly where the buckets
    are equal, different where they differ."""
    if values is None or values.ndim != 3 or values.shape[1:] != buckets.shape:
        return False
    flat = values.reshape(values.shape[0], -1).T  # (q*k, H)
    ids = buckets.reshape(-1)
    rows = {}
    for b, row in zip(ids.tolist(), map(tuple, flat.tolist()), strict=True):
        if rows.setdefault(b, row) != row:
            return False
    return len(set(rows.values())) == len(rows)


def judge_bias(ctx: JudgeContext):
    checks = []
    for k in range(len(BIAS_CASES)):
        shape = ctx.compare(k, values=False)
        if not shape.ok:
            checks.append(shape)
            continue
        ok = follows(student(ctx, k), bias_buckets(k))
        checks.append(Check(True, max_err=0.0) if ok else Check(False, "values"))
    failing = [k for k, c in enumerate(checks) if not c.ok]
    diagnoses = []
    shifted = [k for k in failing if BIAS_CASES[k][4] != BIAS_CASES[k][5]]
    if failing and shifted == failing and all(
            follows(student(ctx, k), bias_buckets(k, align="start")) for k in failing):
        diagnoses.append(Finding(
            "start-aligned",
            "Con menos consultas que claves, las consultas son las ÚLTIMAS q_len posiciones: la "
            "consulta i está en k_len − q_len + i y su posición relativa es j − (k_len − q_len "
            "+ i).",
            "With fewer queries than keys, the queries are the LAST q_len positions: query i "
            "sits at k_len − q_len + i and its relative position is j − (k_len − q_len + i)."))
    if failing and all(follows(student(ctx, k), bias_buckets(k, sign=-1)) for k in failing):
        diagnoses.append(Finding("sign", *BUCKET_DIAGNOSES["sign"]))
    return ctx.verdict(checks, diagnoses=diagnoses)


def swin_index(h: int, w: int, *, sign: int = 1, stride: int | None = None) -> np.ndarray:
    """Swin's index (query − key), or one of the usual mistakes."""
    rows, cols = np.divmod(np.arange(h * w), w)
    d_row = sign * (rows[:, None] - rows[None, :]) + (h - 1)
    d_col = sign * (cols[:, None] - cols[None, :]) + (w - 1)
    return d_row * (stride or (2 * w - 1)) + d_col


SWIN_DIAGNOSES = {
    "t5-sign": ("Swin indexa su tabla con consulta − clave (el signo contrario al de T5): la "
                "fila de la consulta a y la clave b usa posición(a) − posición(b).",
                "Swin indexes its table with query − key (the opposite sign to T5): query a and "
                "key b use position(a) − position(b)."),
    "stride": ("El desplazamiento de fila se multiplica por el ancho de la tabla, 2·window_w − 1, "
               "no por window_w: si no, dos desplazamientos distintos comparten índice.",
               "The row offset is multiplied by the table's width, 2·window_w − 1, not by "
               "window_w: otherwise two different offsets share an index."),
}


def judge_swin(ctx: JudgeContext):
    checks = [whole_case(ctx, k, tol=EXACT) for k in range(len(WINDOWS))]
    failing = [k for k, c in enumerate(checks) if not c.ok]

    def variant(kind):
        def make(k):
            h, w = WINDOWS[k]
            wrong = swin_index(h, w, sign=-1) if kind == "t5-sign" else swin_index(h, w,
                                                                                  stride=w)
            return None if np.array_equal(wrong, swin_index(h, w)) else wrong
        return make

    names = explained(failing, {kind: variant(kind) for kind in SWIN_DIAGNOSES},
                      lambda k: student(ctx, k), lambda k: EXACT)
    return ctx.verdict(checks, diagnoses=[Finding(n, *SWIN_DIAGNOSES[n]) for n in names])


ITEMS = (
    Item("buckets", "buckets", 3, "relative_position_bucket: modos bidireccional y causal",
         "relative_position_bucket: bidirectional and causal modes", judge_buckets),
    Item("swin", "swin", 1, "swin_relative_index: signo consulta − clave y ancho de la tabla",
         "swin_relative_index: query − key sign and the table's width", judge_swin),
)

CHECKS = LabChecks(lab_id="17.05", inputs=inputs, groups=GROUPS, items=ITEMS)
