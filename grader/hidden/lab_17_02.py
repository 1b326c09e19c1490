"""Hidden checks of lab 17.02 (learned absolute positions).

Graded from ``src/minimodel/positional/learned.py`` (4 points); the notebook is not auto-graded
here. Hidden inputs: tables of other sizes and dtypes (float32, float64, float16), tables that
grow and shrink, one-row tables and one-row results; ``forward`` at offsets that reach the last
row of the table, on 2-D to 4-D inputs and in several dtypes. The child cannot set the table's
random weights, so ``forward`` runs with ``init_std=0`` (a zero table): it judges the rows taken
(their number at every offset) and the dtype, not the values of the rows.
Tolerances: the per-dtype defaults.

Known mistakes diagnosed: rows placed at cell centres (``align_corners=False``) instead of keeping
the first and last rows, the nearest row copied instead of blending two, the dtype of the table
not kept; in ``forward``, a slice that ignores or misplaces the offset (``weight[offset:T]``) and
the result left in the table's dtype.
"""

from __future__ import annotations

import numpy as np

from grader.hidden.common import explained, loose_for, student, whole_case
from grader.hidden.spec import Case, Group, Input, Item, LabChecks
from grader.verdicts import Finding, JudgeContext

MODULE = "learned"
# (table key, dtype, new_len): grow, shrink, one row in, one row out, half precision.
INTERP_CASES = [("a", "float32", 17), ("a", "float32", 3), ("b", "float64", 25),
                ("b", "float64", 4), ("c", "float32", 5), ("b", "float64", 1),
                ("d", "float16", 30), ("e", "float32", 11)]
TABLES = {"a": (6, 4), "b": (9, 5), "c": (1, 3), "d": (12, 6), "e": (2, 7)}
# (max_len, d_model, x shape, dtype, offset)
FORWARD_CASES = [(16, 8, (2, 5, 8), "float32", 11), (16, 8, (5, 8), "float32", 0),
                 (30, 6, (2, 3, 4, 6), "float64", 26), (12, 10, (3, 1, 10), "float16", 11),
                 (20, 4, (7, 4), "bfloat16", 9)]


def inputs() -> dict[str, np.ndarray]:
    """The hidden input arrays (float32 or float64; cast to each case's dtype in the child)."""
    rng = np.random.default_rng(1702)
    arrays = {key: rng.standard_normal(shape) for key, shape in TABLES.items()}
    for index, (_, _, shape, _, _) in enumerate(FORWARD_CASES):
        arrays[f"x{index}"] = rng.standard_normal(shape).astype(np.float32)
    return arrays


def _forward_case(max_len, d, shape, dtype, offset, index) -> Case:
    return Case("module", "LearnedPositionalEmbedding", (Input(f"x{index}", dtype),),
                {"offset": offset} if offset else {}, init_args=(max_len, d),
                init_kwargs={"init_std": 0.0})


GROUPS = (
    Group("interpolate", MODULE, tuple(
        Case("function", "interpolate_positions", (Input(key, dtype), n))
        for key, dtype, n in INTERP_CASES)),
    Group("forward", MODULE, tuple(_forward_case(*c, i) for i, c in enumerate(FORWARD_CASES))),
)


def resize(table: np.ndarray, new_len: int, convention: str = "corners") -> np.ndarray:
    """Linear resize with ``align_corners=True``, or one of the usual mistakes (float64)."""
    table = np.asarray(table, dtype=np.float64)
    L = table.shape[0]
    if convention == "centres":
        where = np.clip((np.arange(new_len) + 0.5) * L / new_len - 0.5, 0, L - 1)
    else:
        step = (L - 1) / (new_len - 1) if new_len > 1 else 0.0
        where = np.arange(new_len) * step
    if convention == "nearest":
        return table[np.rint(where).astype(int)]
    lo = np.minimum(np.floor(where).astype(int), L - 1)
    hi = np.minimum(lo + 1, L - 1)
    frac = (where - lo)[:, None]
    return (1 - frac) * table[lo] + frac * table[hi]


INTERP_DIAGNOSES = {
    "centres": (
        "Colocas las filas nuevas en los centros de celda (align_corners=False). Aquí la primera "
        "y la última fila se conservan tal cual: la fila nueva j se lee en la posición "
        "j·(L − 1)/(new_len − 1).",
        "You place the new rows at cell centres (align_corners=False). Here the first and last "
        "rows are kept as they are: new row j is read at position j·(L − 1)/(new_len − 1)."),
    "nearest": (
        "Copias la fila más cercana en lugar de mezclar linealmente las dos vecinas.",
        "You copy the nearest row instead of blending the two neighbours linearly."),
}


def _input_table(ctx, k):
    key, dtype, _ = INTERP_CASES[k]
    table = np.asarray(ctx.inputs[key], dtype=np.float64)
    return table.astype(np.float16).astype(np.float64) if dtype == "float16" else table


def judge_interpolate(ctx: JudgeContext):
    checks = [whole_case(ctx, k) for k in range(len(INTERP_CASES))]
    failing = [k for k, c in enumerate(checks) if not c.ok]

    def variant(convention):
        def make(k):
            table, n = _input_table(ctx, k), INTERP_CASES[k][2]
            wrong = resize(table, n, convention)
            return None if np.allclose(wrong, resize(table, n)) else wrong
        return make

    names = explained(failing, {c: variant(c) for c in INTERP_DIAGNOSES},
                      lambda k: student(ctx, k), lambda k: loose_for(INTERP_CASES[k][1]))
    diagnoses = [Finding(n, *INTERP_DIAGNOSES[n]) for n in names]
    if _dtype_changed(ctx, failing, [c[1] for c in INTERP_CASES]):
        diagnoses.append(Finding(
            "dtype-not-kept",
            "interpolate_positions debe devolver la tabla en el dtype de table (puedes mezclar "
            "en float32 o float64, pero conviertes el resultado al final).",
            "interpolate_positions must return the table in the dtype of table (you may blend "
            "in float32 or float64, but cast the result back at the end)."))
    return ctx.verdict(checks, diagnoses=diagnoses)


def _dtype_changed(ctx, failing, dtypes) -> bool:
    for k in failing:
        out = ctx.out(k)
        if out is not None and out.get("dtype") not in (None, dtypes[k]):
            return True
    return False


def judge_forward(ctx: JudgeContext):
    checks = [whole_case(ctx, k) for k in range(len(FORWARD_CASES))]
    failing = [k for k, c in enumerate(checks) if not c.ok]
    diagnoses = []
    shifted = [k for k in failing if FORWARD_CASES[k][4] > 0]
    if failing and len(shifted) == len(failing) and any(checks[k].ok for k in range(
            len(FORWARD_CASES)) if FORWARD_CASES[k][4] == 0):
        diagnoses.append(Finding(
            "offset",
            "Con offset > 0 tu forward falla o devuelve otra forma: las filas son "
            "weight[offset : offset + T] (T filas empezando en offset), no weight[offset : T].",
            "With offset > 0 your forward fails or returns another shape: the rows are "
            "weight[offset : offset + T] (T rows starting at offset), not weight[offset : T]."))
    if _dtype_changed(ctx, failing, [c[3] for c in FORWARD_CASES]):
        diagnoses.append(Finding(
            "dtype-not-kept",
            "forward debe devolver el dtype de x: pasa las filas de la tabla (float32) al dtype "
            "de x antes de sumarlas.",
            "forward must return the dtype of x: cast the table's rows (float32) to x's dtype "
            "before adding them."))
    return ctx.verdict(checks, diagnoses=diagnoses)


ITEMS = (
    Item("interpolate", "interpolate", 3,
         "interpolate_positions: interpolación lineal que conserva los extremos",
         "interpolate_positions: linear interpolation that keeps the ends", judge_interpolate),
    Item("forward", "forward", 1,
         "LearnedPositionalEmbedding: filas con offset y dtype de x",
         "LearnedPositionalEmbedding: rows at an offset and the dtype of x", judge_forward),
)

CHECKS = LabChecks(lab_id="17.02", inputs=inputs, groups=GROUPS, items=ITEMS)
