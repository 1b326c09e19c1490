"""Hidden checks of lab 17.06 (positions on a 2-D grid).

Graded from ``src/minimodel/positional/two_d.py`` (6 points) and the lab notebook (its
auto-graded cells, 11 points, at the end of this file; the written answers are graded by hand).
Hidden inputs: non-square grids (1 x 7, 7 x 3, 2 x 9), other widths and bases; tables with
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

Known mistakes diagnosed: from the catalogue ``solutions/mistakes/two_d.py``, the column half
first (MAE's order) or each half written as ``[sin … | cos …]``, frequencies over ``d`` instead of
``d/2``; ``align_corners=True`` in the resize, the grid read as ``(w, h)`` or permuted with
``permute(2, 1, 0)``; the row and column blocks of the 2-D rotation swapped, or both blocks turned
by the row. In the judge: prefix rows resized with the grid (or lost), the table's dtype not kept.

One mistake costs once: the notebook's cells run ``sinusoidal_2d``, ``interpolate_grid`` or
``apply_rope_2d``, which the module items grade, and name the catalogue: a record that holds what
a catalogue mistake of the module gives (the notebook's own work done right on top of it) passes,
with a note (``GIVEN`` recreates the names the records use). Not ``test-mae``: its
``to_mae_layout`` with the halves left in place gives a ``mae_row`` that is exactly what
``sinusoidal_2d`` with the column half first gives, so there the record cannot tell the module's
mistake from the notebook's.
"""

from __future__ import annotations

import numpy as np

from grader.hidden import depends
from grader.hidden.cells import EXACT, Mistake, cell_judge, not_a_float, requirement, wrong_dtype
from grader.hidden.common import bf16, dtype_not_kept, judged_cases, resembles, student, whole_case
from grader.hidden.spec import Case, CellCheck, Group, Input, Items, LabChecks, non_default
from grader.trusted.verdicts import Finding, JudgeContext, Tolerance

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


DEFAULTS = {"base": 10000.0, "num_prefix_tokens": 0, "convention": "interleaved"}


def _rope_case(x, dtype, pos, f, convention) -> Case:
    return Case("function", "apply_rope_2d", (Input(x, dtype), Input(f"{pos}_r", "int64"),
                                               Input(f"{pos}_c", "int64"),
                                               Input(f"f{f}", "float32")),
                non_default(DEFAULTS, convention=convention))


def _rope_probes(k: int) -> tuple[Case, ...]:
    """rope.py's functions as apply_rope_2d calls them on case ``k`` (through two_d's names)."""
    _, dtype, pos, f, convention = ROPE_CASES[k]
    inv = Input(f"f{f}", "float32")
    return (Case("function", "rope_cos_sin", (Input(f"{pos}_r", "int64"), inv)),
            Case("function", "rope_cos_sin", (Input(f"{pos}_c", "int64"), inv)),
            *(Case("function", "apply_rotary", (Input(f"x{axis}{k}", dtype),
                                                 Input(f"c{axis}{k}"), Input(f"s{axis}{k}")),
                   non_default(DEFAULTS, convention=convention)) for axis in ("r", "c")))


GROUPS = (
    Group("sin", MODULE, tuple(
        Case("function", "sinusoidal_2d", (h, w, d), non_default(DEFAULTS, base=b))
        for h, w, d, b in SIN_CASES)),
    Group("grid", MODULE, tuple(
        Case("function", "interpolate_grid", (Input(key, dtype), new_hw), non_default(
            DEFAULTS, mode=mode, old_hw=old_hw, num_prefix_tokens=prefix))
        for key, dtype, new_hw, old_hw, prefix, mode in GRID_CASES)),
    Group("rope", MODULE, tuple(_rope_case(*c) for c in ROPE_CASES) + tuple(
        probe for k in range(len(ROPE_CASES)) for probe in _rope_probes(k))),
)


ITEMS = Items()


@ITEMS.judge("sin", 2, "sinusoidal_2d: mitad de filas, mitad de columnas",
             "sinusoidal_2d: a row half and a column half")
def judge_sin(ctx: JudgeContext):
    checks, _, diagnoses = judged_cases(ctx, tol=SIN_TOL)
    return ctx.verdict(checks, diagnoses=diagnoses + depends.import_findings(ctx))


@ITEMS.judge("grid", 2, "interpolate_grid: rejilla redimensionada y prefijo intacto",
             "interpolate_grid: resized grid and untouched prefix")
def judge_grid(ctx: JudgeContext):
    checks, failing, diagnoses = judged_cases(ctx)
    prefixed = [k for k in range(len(GRID_CASES)) if GRID_CASES[k][4]]
    if failing and set(prefixed) <= set(failing) and all(
            checks[k].ok for k in range(len(GRID_CASES)) if k not in prefixed):
        diagnoses.append(Finding(
            "prefix",
            "Las filas de prefijo (CLS, registros) no tienen posición en la rejilla: se copian "
            "tal cual, delante, y solo se redimensionan las h·w filas siguientes.",
            "Prefix rows (CLS, registers) have no grid position: they are copied unchanged, in "
            "front, and only the h·w rows after them are resized."))
    diagnoses += dtype_not_kept(ctx, "interpolate_grid", [case[1] for case in GRID_CASES])
    return ctx.verdict(checks, diagnoses=diagnoses + depends.import_findings(ctx))


def _probes(k: int) -> list[int]:
    start = len(ROPE_CASES) + PROBES_PER_CASE * k
    return list(range(start, start + PROBES_PER_CASE))


def _composed(ctx: JudgeContext, k: int) -> bool:
    """Is case ``k`` what apply_rope_2d gives on top of the student's own apply_rotary?

    Only when their rope_cos_sin is right (the probes' tables are then the ones two_d gets)."""
    cos_rows, cos_cols, rot_rows, rot_cols = _probes(k)
    if not all(whole_case(ctx, p, tolerances=ROPE_TOL).ok for p in (cos_rows, cos_cols)):
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
    return resembles(actual, composed, ROPE_TOL[dtype])


@ITEMS.judge("rope", 2, "apply_rope_2d: un bloque por coordenada (usa rope.py)",
             "apply_rope_2d: one block per coordinate (uses rope.py)")
def judge_rope(ctx: JudgeContext):
    n = len(ROPE_CASES)
    checks = [whole_case(ctx, k, tolerances=ROPE_TOL) for k in range(n)]
    checks, rope_findings, notes, failing = depends.split_rope_failures(
        ctx, checks, function="apply_rope_2d",
        uses=("rope_cos_sin y apply_rotary", "rope_cos_sin and apply_rotary"),
        probes=_probes, composed=lambda k: _composed(ctx, k), probe_tolerances=ROPE_TOL)
    return depends.verdict(ctx, checks, ctx.named_mistakes(failing), rope_findings, notes)


# --- the notebook --------------------------------------------------------------------------------

CELL_TOL = Tolerance(1e-5, 1e-5)


def _sin_then_cos(start: int, half: int) -> np.ndarray:
    return np.concatenate((np.arange(start, start + half, 2),
                           np.arange(start + 1, start + half, 2)))


_MAE = np.concatenate((_sin_then_cos(8, 8), _sin_then_cos(0, 8)))  # to_mae_layout(16)
MAE_MISTAKES = (
    Mistake("nb-mae-halves",
            lambda get: {"perm16": np.concatenate((_sin_then_cos(0, 8), _sin_then_cos(8, 8)))},
            "to_mae_layout deja la fila en la primera mitad: MAE pone primero la mitad de la "
            "columna (su primera rejilla es la coordenada w) y después la de la fila.",
            "to_mae_layout leaves the row in the first half: MAE puts the column's half first "
            "(its first grid is the w coordinate) and then the row's.", EXACT),
    Mistake("nb-mae-interleaved",
            lambda get: {"perm16": np.concatenate((np.arange(8, 16), np.arange(0, 8)))},
            "Dentro de cada mitad, MAE pone primero todos los senos y después todos los "
            "cosenos; to_mae_layout deja las parejas intercaladas.",
            "Inside each half, MAE puts all the sines first and then all the cosines; "
            "to_mae_layout leaves the pairs interleaved.", EXACT),
    Mistake("nb-mae-inverse", lambda get: {"perm16": np.argsort(_MAE)},
            "to_mae_layout devuelve la permutación inversa: perm[j] debe ser nuestra columna "
            "para la columna j de MAE, de modo que pe2[:, perm] sea la tabla de MAE.",
            "to_mae_layout returns the inverse permutation: perm[j] must be our column for "
            "MAE's column j, so that pe2[:, perm] is MAE's table.", EXACT),
)


def _sampled(position) -> dict:
    """What sampled_positions(old, new) gives for the cell's three calls, by ``position(old,
    new)`` (a wrong formula)."""
    return {name: position(old, new) for name, (old, new) in
            zip(("sp", "sp42", "sp_other"), ((14, 24), (4, 2), (5, 8)), strict=True)}


SAMPLED_MISTAKES = (
    Mistake("nb-align-corners", lambda get: _sampled(
        lambda old, new: np.arange(new) * (old - 1) / (new - 1)),
            "sampled_positions sigue align_corners=True (las esquinas de las dos rejillas "
            "coinciden); interpolate_grid usa align_corners=False: los centros de las celdas, "
            "(j + 0.5)·old/new − 0.5.",
            "sampled_positions follows align_corners=True (the corners of both grids meet); "
            "interpolate_grid uses align_corners=False: cell centres, "
            "(j + 0.5)·old/new − 0.5.", Tolerance(1e-6, 1e-6)),
    Mistake("nb-no-half-cell", lambda get: _sampled(lambda old, new: np.arange(new) * old / new),
            "sampled_positions escala el índice sin el medio píxel: con align_corners=False "
            "se escalan los centros de las celdas, (j + 0.5)·old/new − 0.5.",
            "sampled_positions scales the index without the half cell: with "
            "align_corners=False the cell centres are scaled, (j + 0.5)·old/new − 0.5.",
            Tolerance(1e-6, 1e-6)),
)


def _spread_whole(ctx, ok):
    small, other = student(ctx, "ls"), student(ctx, "ls_other")
    if not ok["ls"] and small is not None and other is not None and \
            np.isclose(small, 4.0) and np.isclose(other, 11.0):
        return [("nb-spread-whole",
                 "largest_spread mide max − min de toda la matriz: debe medirlo dentro de cada "
                 "grupo de entradas con la misma clave y devolver el mayor.",
                 "largest_spread measures max − min over the whole matrix: it must measure it "
                 "inside each group of entries with the same key and return the largest.")]
    return []


def _video_swapped(get) -> dict:
    """Time repeated frame by frame and space token by token, from the reference's table."""
    expected, frames, n, d_time = get("ref:v2"), 3, 4, 6
    tokens = np.arange(frames * n)
    return {"v2": np.concatenate((expected[::n, :d_time][tokens % frames],
                                  expected[:n, d_time:][tokens // frames]), axis=1)}


VIDEO_MISTAKES = (
    Mistake("nb-video-repeat", _video_swapped,
            "Los tokens van ordenados por fotograma: el tiempo se repite token a token "
            "(repeat_interleave) y el espacio fotograma a fotograma (repeat); tu tabla lo hace "
            "al revés.",
            "Tokens are ordered by frame: time repeats token by token (repeat_interleave) and "
            "space frame by frame (repeat); your table does it the other way round.", CELL_TOL),
    Mistake("nb-video-order", lambda get: {"v2": np.concatenate(
        (get("ref:v2")[:, 6:], get("ref:v2")[:, :6]), 1)},
            "La tabla pone [espacio | tiempo]; debe ser [tiempo | espacio 2-D].",
            "The table holds [space | time]; it must be [time | 2-D space].", CELL_TOL),
)

ZERO_POS = "torch.zeros(1, dtype=torch.long)"

# The notebook's given cells (and its solved functions) that the cells' records use, recreated
# when the references are built so that each classic mistake of two_d.py is run through them: a
# record that holds what a mistake of the module gives is the notebook's work done right on top
# of it (error carried forward, grader.hidden.cells), and costs nothing here: the module's items
# grade it. The grader runs the notebook at its test size (new = 20). test-mae names no
# catalogue: to_mae_layout with the halves left in place (nb-mae-halves) gives a mae_row that is
# exactly what sinusoidal_2d with the column half first gives, so that record does not tell the
# module's mistake from the notebook's, and the cell charges it.
GIVEN = """
def sinusoidal_at(positions, d, base=10000.0):
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = positions.double()[:, None] * inv_freq
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)


H, W, d = 8, 8, 64
pe2 = sinusoidal_2d(H, W, d)


def sampled_positions(old, new):
    return (torch.arange(new, dtype=torch.float64) + 0.5) * old / new - 0.5


old, new, D = 14, 20, 64
torch.manual_seed(0)
cls = torch.randn(1, D)
learned = torch.cat((cls, sinusoidal_2d(old, old, D)), dim=0)
resized = interpolate_grid(learned, (new, new), num_prefix_tokens=1)
s = sampled_positions(old, new)
inside = (s >= 0) & (s <= old - 1)
exact_rows = sinusoidal_at(s, D // 2)
got_rows = resized[1:].reshape(new, new, D)[:, new // 2, : D // 2].double()
error = (got_rows - exact_rows)[inside].abs().amax(dim=0)

G, D_head = 6, 32
inv_freq = 100.0 ** (-torch.arange(0, D_head // 2, 2, dtype=torch.float32) / (D_head // 2))
rows, cols = grid_positions(G, G)
torch.manual_seed(1)
q_vec = torch.randn(D_head)
k_vec = q_vec + 0.5 * torch.randn(D_head)
q = apply_rope_2d(q_vec.expand(1, 1, G * G, D_head), rows, cols, inv_freq)
k = apply_rope_2d(k_vec.expand(1, 1, G * G, D_head), rows, cols, inv_freq)
logits = (q @ k.transpose(-2, -1))[0, 0]
n = rows * G + cols
q1 = apply_rope_2d(q_vec.expand(1, 1, G * G, D_head), n, n, inv_freq)
k1 = apply_rope_2d(k_vec.expand(1, 1, G * G, D_head), n, n, inv_freq)
logits_1d = (q1 @ k1.transpose(-2, -1))[0, 0]
a, b = 2 * G + 5, 3 * G + 0
c_, e_ = 2 * G + 3, 2 * G + 4


def largest_spread(matrix, key):
    spread = 0.0
    for value in key.unique():
        group = matrix[key == value]
        spread = max(spread, (group.max() - group.min()).item())
    return spread


d_row = rows[None, :] - rows[:, None]
d_col = cols[None, :] - cols[:, None]
offset_2d = (d_row + G) * (2 * G + 1) + (d_col + G)
offset_n = n[None, :] - n[:, None]
spread_2d = largest_spread(logits.detach(), offset_2d)
spread_2d_by_n = largest_spread(logits.detach(), offset_n)
spread_1d_by_n = largest_spread(logits_1d.detach(), offset_n)


def video_positions(frames, height, width, d_time, d_space):
    time = sinusoidal_at(torch.arange(frames), d_time).float()
    space = sinusoidal_2d(height, width, d_space)
    n = height * width
    return torch.cat((time.repeat_interleave(n, dim=0), space.repeat(frames, 1)), dim=1)


video = video_positions(4, 3, 3, 16, 32)
"""

CELLS = (
    CellCheck("test-two-d", "Cuaderno: la codificación sinusoidal 2-D",
              "Notebook: the 2-D sinusoidal encoding", {
                  "pe2": "pe2", "dtype": "str(pe2.dtype)",
                  "rect": "sinusoidal_2d(3, 5, 12, base=100.0)",
                  "small": "sinusoidal_2d(2, 2, 8)",
              }, cell_judge(tol=CELL_TOL), catalogue=MODULE, given=GIVEN),
    CellCheck("test-mae", "Cuaderno: la disposición de MAE", "Notebook: MAE's layout", {
                  "perm8": "to_mae_layout(8)", "perm16": "to_mae_layout(16)",
                  "perm4": "to_mae_layout(4)", "mae_row": "mae_row",
              }, cell_judge(tol=EXACT, tols={"mae_row": CELL_TOL}, mistakes=MAE_MISTAKES)),
    CellCheck("test-interpolate", "Cuaderno: interpolar una tabla aprendida",
              "Notebook: interpolating a learned table", {
                  "shape": "list(resized.shape)", "cls": "resized[0] - learned[0]",
                  "sp": "sampled_positions(14, 24)", "sp42": "sampled_positions(4, 2)",
                  "sp_other": "sampled_positions(5, 8)",
                  "sp_dtype": "str(sampled_positions(4, 2).dtype)",
                  "same": "interpolate_grid(learned, (old, old), num_prefix_tokens=1) - "
                          "learned",
                  "rect": "list(interpolate_grid(torch.zeros(6, 4), (4, 6), "
                          "old_hw=(2, 3)).shape)",
                  "_error": "error",
              }, cell_judge(tol=CELL_TOL, mistakes=SAMPLED_MISTAKES, properties=(requirement(
                  ("_error",), lambda error: error.ndim == 1 and error.size >= 2 and
                  error[0] > 10 * error[-2] and error[-2] < 1e-3,
                  "tras interpolar, las frecuencias altas pierden mucho más que las lentas "
                  "(error[0] > 10·error[−2], error[−2] < 1e-3).",
                  "after interpolating, high frequencies lose much more than slow ones "
                  "(error[0] > 10·error[−2], error[−2] < 1e-3)."),), diagnoses=(wrong_dtype(
                  "sampled_positions", "sp_dtype", "nb-sampled-dtype",
                  "debe ser torch.float64.", "it must be torch.float64."),)),
              catalogue=MODULE, given=GIVEN),
    CellCheck("test-rope-2d", "Cuaderno: RoPE 2-D axial", "Notebook: axial 2-D RoPE", {
                  "q_shape": "list(q.shape)", "q_dtype": "str(q.dtype)",
                  "origin": f"apply_rope_2d(q_vec.expand(1, 1, 1, D_head), {ZERO_POS}, "
                            f"{ZERO_POS}, inv_freq)[0, 0, 0] - q_vec",
                  "kind": "type(spread_2d).__name__",
                  "spreads": "[spread_2d, spread_2d_by_n, spread_1d_by_n]",
                  "logits": "[logits_1d[a, b].item(), logits_1d[c_, e_].item(), "
                            "logits[a, b].item(), logits[c_, e_].item()]",
                  "ls": "largest_spread(torch.tensor([[1.0, 5.0], [2.0, 3.0]]), "
                        "torch.tensor([[0, 1], [1, 0]]))",
                  "ls_other": "largest_spread(torch.tensor([[-4.0, 2.0, 0.5], [1.0, -1.0, "
                              "7.0]]), torch.tensor([[2, 0, 2], [0, 1, 0]]))",
                  "ls_single": "largest_spread(torch.tensor([[3.0]]), torch.tensor([[5]]))",
                  "rope": "apply_rope_2d(torch.sin(torch.arange(480.0)).reshape(2, 3, 4, "
                          "20), torch.tensor([0, 1, 2, 3]), torch.tensor([3, 2, 1, 0]), "
                          "inv_freq[:4])",
              }, cell_judge(tol=Tolerance(1e-4, 1e-4),
                            diagnoses=(not_a_float("largest_spread"), _spread_whole)),
              catalogue=MODULE, given=GIVEN),
    CellCheck("test-video", "Cuaderno: el tiempo como eje", "Notebook: time as an axis", {
                  "video": "video", "dtype": "str(video.dtype)",
                  "v": "video_positions(2, 1, 2, 4, 8)",
                  "v2": "video_positions(3, 2, 2, 6, 8)",
              }, cell_judge(tol=CELL_TOL, mistakes=VIDEO_MISTAKES, diagnoses=(wrong_dtype(
                  "video_positions", "dtype", "nb-video-dtype",
                  "debe ser float32 (sinusoidal_at da float64: conviértelo con .float()).",
                  "it must be float32 (sinusoidal_at gives float64: convert it with "
                  ".float())."),)), catalogue=MODULE, given=GIVEN),
)

CHECKS = LabChecks(
    lab_id="17.06", inputs=inputs, groups=GROUPS, items=ITEMS, cells=CELLS, questions=(
        ("recalcular o interpolar la tabla", "recomputing or interpolating the table"),
        ("vecinos en la RoPE 1-D sobre n", "neighbours in 1-D RoPE over n")))
