"""Hidden checks of lab 17.06 (positions on a 2-D grid).

Graded from ``src/minimodel/positional/two_d.py`` (6 points); the notebook is not auto-graded
here. Hidden inputs: non-square grids (1 x 7, 7 x 3, 2 x 9), other widths and bases; tables with
0, 1 and 2 prefix rows that grow and shrink, square and not, bicubic and bilinear, float32,
float64 and bfloat16; 2-D RoPE with dimensions that pass through, per-batch positions, both
conventions, float64 and bfloat16. Tolerances: ``sinusoidal_2d`` accepts float32 angles
(``atol = 1e-5``, the positions are below 10); ``interpolate_grid`` the per-dtype defaults;
``apply_rope_2d`` float32 angles (``atol = 5e-5``, also for float64 queries: ``rope_cos_sin``
gives float32 tables) and the bfloat16 tolerance of lab 17.03.

``apply_rope_2d`` calls ``rope_cos_sin`` and ``apply_rotary`` of the student's own rope.py: the
group also probes those two functions on the same inputs (through two_d's namespace), and
``grader.hidden.depends`` applies the policy for failures that come from rope.py (no double
penalty when the 2-D code can be verified on top of the student's rope.py; otherwise a clear
"depends on rope.py" finding).

Known mistakes diagnosed: the column half first (MAE's order) or each half written as
``[sin … | cos …]``, frequencies over ``d`` instead of ``d/2``; ``align_corners=True`` in the
resize, the grid read as ``(w, h)``, prefix rows resized with the grid (or lost), the table's
dtype not kept; the row and column blocks of the 2-D rotation swapped, or both blocks turned by
the row.
"""

from __future__ import annotations

import numpy as np

from grader.hidden import depends
from grader.hidden.common import bf16, explained, loose_for, student, whole_case
from grader.hidden.spec import Case, Group, Input, Item, LabChecks
from grader.verdicts import Finding, JudgeContext, Tolerance, values_close

MODULE = "two_d"
# (height, width, d, base)
SIN_CASES = [(1, 7, 4, 10000.0), (7, 3, 20, 10000.0), (2, 9, 12, 50.0), (5, 5, 24, 10000.0)]
# (table key, dtype, new_hw, old_hw, prefix, mode); the table has prefix + h*w rows
GRID_CASES = [("g0", "float32", (7, 7), None, 1, "bicubic"),
              ("g1", "float32", (2, 6), (3, 5), 0, "bilinear"),
              ("g2", "float64", (2, 2), None, 0, "bicubic"),
              ("g3", "float32", (5, 3), (2, 4), 2, "bicubic"),
              ("g1", "float64", (3, 5), (3, 5), 0, "bicubic"),
              ("g2", "bfloat16", (4, 5), None, 0, "bilinear")]
GRID_SHAPES = {"g0": (1 + 16, 6), "g1": (15, 4), "g2": (9, 3), "g3": (2 + 8, 5)}
# (x key, dtype, positions key, F, convention)
ROPE_CASES = [("x0", "float32", "grid34", 2, "interleaved"), ("x0", "float32", "grid34", 3,
              "half"), ("x1", "float64", "batch", 1, "interleaved"),
              ("x0", "bfloat16", "grid34", 2, "half")]
SIN_TOL = Tolerance(1e-5, 1e-5)  # float32 angles pass too
# float32 angles: rope_cos_sin's tables are float32, also for float64 queries
ROPE_TOL = {"float32": Tolerance(1e-5, 5e-5), "float64": Tolerance(1e-5, 5e-5),
            "bfloat16": Tolerance(1.6e-2, 2e-2)}
PROBES_PER_CASE = 4  # rope_cos_sin(rows), rope_cos_sin(cols), apply_rotary on each block


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1706)
    arrays = {key: rng.standard_normal(shape) for key, shape in GRID_SHAPES.items()}
    arrays["x0"] = rng.standard_normal((2, 2, 12, 14)).astype(np.float32)
    arrays["x1"] = rng.standard_normal((2, 1, 5, 6))
    n = np.arange(12)
    arrays["grid34_r"], arrays["grid34_c"] = n // 4, n % 4
    arrays["batch_r"] = rng.integers(0, 9, size=(2, 5))
    arrays["batch_c"] = rng.integers(0, 9, size=(2, 5))
    for f in (1, 2, 3):
        arrays[f"f{f}"] = 7.0 ** (-np.arange(f) / f)
    for k, (x, _, pos, f, _) in enumerate(ROPE_CASES):  # the rope.py probes' inputs
        r = 2 * f
        arrays[f"xr{k}"], arrays[f"xc{k}"] = arrays[x][..., :r], arrays[x][..., r:2 * r]
        inv = arrays[f"f{f}"].astype(np.float32).astype(np.float64)
        for axis in ("r", "c"):
            angles = arrays[f"{pos}_{axis}"].astype(np.float64)[..., None] * inv
            arrays[f"c{axis}{k}"] = np.cos(angles).astype(np.float32)
            arrays[f"s{axis}{k}"] = np.sin(angles).astype(np.float32)
    return arrays


def _grid_case(key, dtype, new_hw, old_hw, prefix, mode) -> Case:
    kwargs = {"mode": mode}
    if old_hw is not None:
        kwargs["old_hw"] = old_hw
    if prefix:
        kwargs["num_prefix_tokens"] = prefix
    return Case("function", "interpolate_grid", (Input(key, dtype), new_hw), kwargs)


def _kw(convention: str) -> dict:
    return {} if convention == "interleaved" else {"convention": convention}


def _rope_case(x, dtype, pos, f, convention) -> Case:
    return Case("function", "apply_rope_2d", (Input(x, dtype), Input(f"{pos}_r", "int64"),
                                               Input(f"{pos}_c", "int64"),
                                               Input(f"f{f}", "float32")), _kw(convention))


def _rope_probes(k: int) -> tuple[Case, ...]:
    """rope.py's functions as apply_rope_2d calls them on case ``k`` (through two_d's names)."""
    _, dtype, pos, f, convention = ROPE_CASES[k]
    inv = Input(f"f{f}", "float32")
    return (Case("function", "rope_cos_sin", (Input(f"{pos}_r", "int64"), inv)),
            Case("function", "rope_cos_sin", (Input(f"{pos}_c", "int64"), inv)),
            *(Case("function", "apply_rotary", (Input(f"x{axis}{k}", dtype),
                                                 Input(f"c{axis}{k}"), Input(f"s{axis}{k}")),
                   _kw(convention)) for axis in ("r", "c")))


GROUPS = (
    Group("sin", MODULE, tuple(
        Case("function", "sinusoidal_2d", (h, w, d), {} if b == 10000.0 else {"base": b})
        for h, w, d, b in SIN_CASES)),
    Group("grid", MODULE, tuple(_grid_case(*c) for c in GRID_CASES)),
    Group("rope", MODULE, tuple(_rope_case(*c) for c in ROPE_CASES) + tuple(
        probe for k in range(len(ROPE_CASES)) for probe in _rope_probes(k))),
)


def _half_table(n, half, base, layout, over):
    inv = base ** (-np.arange(0, half, 2) / over)
    angles = np.arange(n)[:, None] * inv
    if layout == "blocks":
        return np.concatenate((np.sin(angles), np.cos(angles)), axis=-1)
    return np.stack((np.sin(angles), np.cos(angles)), axis=-1).reshape(n, half)


def sin2d(h, w, d, base, *, order="row", layout="pairs", over_d=False) -> np.ndarray:
    """The 2-D table (float64), or one of the usual mistakes."""
    half = d // 2
    over = d if over_d else half
    rows = np.broadcast_to(_half_table(h, half, base, layout, over)[:, None], (h, w, half))
    cols = np.broadcast_to(_half_table(w, half, base, layout, over)[None], (h, w, half))
    parts = (rows, cols) if order == "row" else (cols, rows)
    return np.concatenate(parts, axis=-1).reshape(h * w, d)


SIN_DIAGNOSES = {
    "column-first": ("La primera mitad de cada vector codifica la FILA y la segunda la COLUMNA; "
                     "tu código las pone al revés (el orden de MAE).",
                     "The first half of each vector encodes the ROW and the second the COLUMN; "
                     "your code puts them the other way round (MAE's order)."),
    "blocks": ("Cada mitad va intercalada como en la lección 17.01 (sen, cos, sen, cos, …), no "
               "como [sen … | cos …].",
               "Each half is interleaved as in lesson 17.01 (sin, cos, sin, cos, …), not as "
               "[sin … | cos …]."),
    "over-d": ("Las frecuencias de cada mitad son base^(−2i/(d/2)): el exponente se divide por "
               "d/2, el ancho de la mitad, no por d.",
               "The frequencies of each half are base^(−2i/(d/2)): the exponent is divided by "
               "d/2, the width of the half, not by d."),
}


def judge_sin(ctx: JudgeContext):
    checks = [whole_case(ctx, k, tol=SIN_TOL) for k in range(len(SIN_CASES))]
    failing = [k for k, c in enumerate(checks) if not c.ok]
    options = {"column-first": {"order": "column"}, "blocks": {"layout": "blocks"},
               "over-d": {"over_d": True}}

    def variant(kind):
        def make(k):
            wrong = sin2d(*SIN_CASES[k], **options[kind])
            return None if np.allclose(wrong, sin2d(*SIN_CASES[k])) else wrong
        return make

    names = explained(failing, {kind: variant(kind) for kind in SIN_DIAGNOSES},
                      lambda k: student(ctx, k))
    return ctx.verdict(checks, diagnoses=[Finding(n, *SIN_DIAGNOSES[n]) for n in names]
                       + depends.import_findings(ctx))


def resized(table, new_hw, old_hw, prefix, mode, *, corners=False, transposed=False,
            with_prefix=False) -> np.ndarray:
    """The resize computed with PyTorch on the trusted side (float64), or a usual mistake."""
    import torch
    import torch.nn.functional as F

    table = torch.as_tensor(np.asarray(table, dtype=np.float64))
    cells = table.shape[0] - prefix
    h, w = old_hw or (int(round(cells ** 0.5)),) * 2
    if transposed:
        h, w = w, h
    keep = 0 if with_prefix else prefix
    body = table[keep:]
    if with_prefix:
        body = body[:h * w] if body.shape[0] >= h * w else None
        if body is None:
            return None
    image = body.reshape(h, w, -1).permute(2, 0, 1)[None]
    size = tuple(new_hw[::-1]) if transposed else tuple(new_hw)
    out = F.interpolate(image, size=size, mode=mode, align_corners=corners)
    out = out[0].permute(1, 2, 0).reshape(size[0] * size[1], -1)
    return torch.cat((table[:keep], out)).numpy()


GRID_DIAGNOSES = {
    "align-corners": ("El cambio de tamaño usa align_corners=False (centros de píxel), como "
                      "DeiT, MAE y timm; tu código conserva las esquinas (align_corners=True).",
                      "The resize uses align_corners=False (pixel centres), as DeiT, MAE and "
                      "timm do; your code keeps the corners (align_corners=True)."),
    "transposed": ("Lees la rejilla como (ancho, alto): las filas de la tabla van por filas de "
                   "la imagen, reshape(h, w, D), y new_hw es (alto, ancho).",
                   "You read the grid as (width, height): the table's rows go row by row of the "
                   "image, reshape(h, w, D), and new_hw is (height, width)."),
}


def judge_grid(ctx: JudgeContext):
    checks = [whole_case(ctx, k) for k in range(len(GRID_CASES))]
    failing = [k for k, c in enumerate(checks) if not c.ok]

    def variant(kind):
        def make(k):
            key, dtype, new_hw, old_hw, prefix, mode = GRID_CASES[k]
            table = np.asarray(ctx.inputs[key], dtype=np.float64 if dtype == "float64"
                               else np.float32)
            if dtype == "bfloat16":
                table = bf16(table)
            right = resized(table, new_hw, old_hw, prefix, mode)
            if kind == "transposed" and (old_hw is None or old_hw[0] == old_hw[1]) and \
                    new_hw[0] == new_hw[1]:
                return None
            wrong = resized(table, new_hw, old_hw, prefix, mode,
                            corners=kind == "align-corners", transposed=kind == "transposed")
            return None if np.allclose(wrong, right) else wrong
        return make

    names = explained(failing, {kind: variant(kind) for kind in GRID_DIAGNOSES},
                      lambda k: student(ctx, k), lambda k: loose_for(GRID_CASES[k][1]))
    diagnoses = [Finding(n, *GRID_DIAGNOSES[n]) for n in names]
    prefixed = [k for k in range(len(GRID_CASES)) if GRID_CASES[k][4]]
    if failing and set(prefixed) <= set(failing) and all(
            checks[k].ok for k in range(len(GRID_CASES)) if k not in prefixed):
        diagnoses.append(Finding(
            "prefix",
            "Las filas de prefijo (CLS, registros) no tienen posición en la rejilla: se copian "
            "tal cual, delante, y solo se redimensionan las h·w filas siguientes.",
            "Prefix rows (CLS, registers) have no grid position: they are copied unchanged, in "
            "front, and only the h·w rows after them are resized."))
    changed = sorted({GRID_CASES[k][1] for k in range(len(GRID_CASES))
                      if (out := ctx.out(k)) is not None and out.get("dtype") != GRID_CASES[k][1]})
    if changed:
        diagnoses.append(Finding(
            "dtype-not-kept",
            f"interpolate_grid no conserva el dtype de la tabla ({', '.join(changed)}): "
            "interpola en float32 (o en float64 si la tabla lo es) y devuelve el dtype de "
            "entrada.",
            f"interpolate_grid does not keep the table's dtype ({', '.join(changed)}): "
            "interpolate in float32 (or in float64 for a float64 table) and return the input's "
            "dtype."))
    return ctx.verdict(checks, diagnoses=diagnoses + depends.import_findings(ctx))


def _rotate(x, pos, inv, convention):
    angles = np.asarray(pos, dtype=np.float64)[..., None] * inv  # (N, F) or (B, N, F)
    if angles.ndim == 3:
        angles = angles[:, None]
    cos, sin = np.cos(angles), np.sin(angles)
    if convention == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2], out[..., 1::2] = a * cos - b * sin, a * sin + b * cos
        return out
    f = inv.shape[0]
    a, b = x[..., :f], x[..., f:]
    return np.concatenate((a * cos - b * sin, a * sin + b * cos), axis=-1)


def rope2d(x, rows, cols, inv, convention, *, swap=False, rows_only=False) -> np.ndarray:
    """Axial 2-D RoPE (float64), or one of the usual mistakes."""
    x = np.asarray(x, dtype=np.float64)
    r = 2 * inv.shape[0]
    first, second = (cols, rows) if swap else (rows, cols)
    if rows_only:
        second = first
    return np.concatenate((_rotate(x[..., :r], first, inv, convention),
                           _rotate(x[..., r:2 * r], second, inv, convention), x[..., 2 * r:]),
                          axis=-1)


ROPE_DIAGNOSES = {
    "swapped": ("Aquí el primer bloque de 2F dimensiones gira con la FILA y el segundo con la "
                "COLUMNA (el orden de sinusoidal_2d); tu código los intercambia.",
                "Here the first block of 2F dimensions turns with the ROW and the second with "
                "the COLUMN (the order of sinusoidal_2d); your code swaps them."),
    "rows-only": ("Cada coordenada tiene su bloque: las dimensiones 0 … 2F−1 giran con la fila "
                  "y 2F … 4F−1 con la columna, cada bloque con las mismas F frecuencias; tu "
                  "código gira los dos bloques con la fila.",
                  "Each coordinate has its own block: dimensions 0 … 2F−1 turn with the row and "
                  "2F … 4F−1 with the column, each block with the same F frequencies; your code "
                  "turns both blocks with the row."),
}


def _rope_args(ctx, k):
    x, dtype, pos, f, convention = ROPE_CASES[k]
    values = np.asarray(ctx.inputs[x], dtype=np.float32 if dtype != "float64" else np.float64)
    inv = np.asarray(ctx.inputs[f"f{f}"], dtype=np.float32).astype(np.float64)
    return values, ctx.inputs[f"{pos}_r"], ctx.inputs[f"{pos}_c"], inv, convention


def _probes(k: int) -> list[int]:
    start = len(ROPE_CASES) + PROBES_PER_CASE * k
    return list(range(start, start + PROBES_PER_CASE))


def _composed(ctx: JudgeContext, k: int) -> bool:
    """Is case ``k`` what apply_rope_2d gives on top of the student's own apply_rotary?

    Only when their rope_cos_sin is right (the probes' tables are then the ones two_d gets)."""
    cos_rows, cos_cols, rot_rows, rot_cols = _probes(k)
    if not (whole_case(ctx, cos_rows, tolerances=ROPE_TOL).ok and
            whole_case(ctx, cos_cols, tolerances=ROPE_TOL).ok):
        return False
    blocks = [student(ctx, rot_rows), student(ctx, rot_cols)]
    actual = student(ctx, k)
    if actual is None or any(b is None for b in blocks):
        return False
    x, dtype, _, f, _ = ROPE_CASES[k]
    tail = np.asarray(ctx.inputs[x], dtype=np.float64)[..., 4 * f:]
    if dtype == "bfloat16":
        tail = bf16(tail.astype(np.float32)).astype(np.float64)
    try:
        composed = np.concatenate((*blocks, tail), axis=-1)
    except ValueError:
        return False
    return actual.shape == composed.shape and values_close(actual, composed, ROPE_TOL[dtype])[0]


def judge_rope(ctx: JudgeContext):
    n = len(ROPE_CASES)
    checks = [whole_case(ctx, k, tolerances=ROPE_TOL) for k in range(n)]
    checks, rope_findings, notes = depends.split_rope_failures(
        ctx, checks, function="apply_rope_2d",
        uses=("rope_cos_sin y apply_rotary", "rope_cos_sin and apply_rotary"),
        probes=_probes, composed=lambda k: _composed(ctx, k), probe_tolerances=ROPE_TOL)
    failing = [k for k, c in enumerate(checks) if not c.ok and c.reason != "rope"]
    options = {"swapped": {"swap": True}, "rows-only": {"rows_only": True}}

    def variant(kind):
        def make(k):
            args = _rope_args(ctx, k)
            wrong = rope2d(*args, **options[kind])
            return None if np.allclose(wrong, rope2d(*args)) else wrong
        return make

    names = explained(failing, {kind: variant(kind) for kind in ROPE_DIAGNOSES},
                      lambda k: student(ctx, k), lambda k: loose_for(ROPE_CASES[k][1]))
    return depends.verdict(ctx, checks, [Finding(n, *ROPE_DIAGNOSES[n]) for n in names],
                           rope_findings, notes)


ITEMS = (
    Item("sin", "sin", 2, "sinusoidal_2d: mitad de filas, mitad de columnas",
         "sinusoidal_2d: a row half and a column half", judge_sin),
    Item("grid", "grid", 2, "interpolate_grid: rejilla redimensionada y prefijo intacto",
         "interpolate_grid: resized grid and untouched prefix", judge_grid),
    Item("rope", "rope", 2, "apply_rope_2d: un bloque por coordenada (usa rope.py)",
         "apply_rope_2d: one block per coordinate (uses rope.py)", judge_rope),
)

CHECKS = LabChecks(lab_id="17.06", inputs=inputs, groups=GROUPS, items=ITEMS)
