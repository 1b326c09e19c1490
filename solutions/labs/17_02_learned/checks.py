"""Hidden checks of lab 17.02 (learned absolute positions).

Graded from ``src/minimodel/positional/learned.py`` (4 points) and the lab notebook (its
auto-graded cells, 6 points, at the end of this file; the written answers are graded by hand). The
notebook trains two small models: values that depend on training or on the table's random
initialisation are judged by the properties the lab asks for (accuracy above 0.9 inside the
training length, below 0.3 far past it; the head looks 3 back; rows taken from the student's own
table), not against the reference's numbers. Hidden inputs: tables of other sizes and dtypes
(float32, float64, float16), tables that grow and shrink, one-row tables and one-row results;
``forward`` at offsets that reach the last row of the table, on 2-D to 4-D inputs and in several
dtypes. The child cannot set the table's random weights, so ``forward`` runs with ``init_std=0``
(a zero table): it judges the rows taken (their number at every offset) and the dtype, not the
values of the rows. Tolerances: the per-dtype defaults.

Known mistakes diagnosed: the interpolation's, from the catalogue ``solutions/mistakes/
learned.py`` (rows placed at cell centres, ``align_corners=False``, instead of keeping the first
and last rows; the nearest row copied instead of blending two); the dtype of the table not
kept; in ``forward``, a slice that ignores or misplaces the offset (``weight[offset:T]``) and
the result left in the table's dtype.

One mistake costs once: ``test-table`` and ``test-interpolation`` run the module, which the module
items grade, so they name its catalogue: a record that holds what a catalogue mistake of the
module gives passes, with a note (``GIVEN`` recreates the names they use; the trained table is
not, so ``ends``, computed from it, is not carried forward).
"""

from __future__ import annotations

import numpy as np

from grader.hidden.cells import cell_judge, diagnosis, outputs, requirement, wrong_text
from grader.hidden.common import cases_judge, dtype_not_kept, judged_cases, resembles, student
from grader.hidden.spec import Case, CellCheck, Group, Input, Items, LabChecks, non_default
from grader.trusted.verdicts import Finding, JudgeContext, Tolerance

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


GROUPS = (
    Group("interpolate", MODULE, tuple(
        Case("function", "interpolate_positions", (Input(key, dtype), n))
        for key, dtype, n in INTERP_CASES)),
    Group("forward", MODULE, tuple(
        Case("module", "LearnedPositionalEmbedding", (Input(f"x{index}", dtype),),
             non_default({"offset": 0}, offset=offset), init_args=(max_len, d),
             init_kwargs={"init_std": 0.0})
        for index, (max_len, d, _, dtype, offset) in enumerate(FORWARD_CASES))),
)


ITEMS = Items()


ITEMS.add("interpolate", 3,
          "interpolate_positions: interpolación lineal que conserva los extremos",
          "interpolate_positions: linear interpolation that keeps the ends", cases_judge(
              keeps=("interpolate_positions", [dtype for _, dtype, _ in INTERP_CASES])))


@ITEMS.judge("forward", 1, "LearnedPositionalEmbedding: filas con offset y dtype de x",
             "LearnedPositionalEmbedding: rows at an offset and the dtype of x")
def judge_forward(ctx: JudgeContext):
    checks, failing, diagnoses = judged_cases(ctx)  # the catalogue has no forward mistakes
    shifted = [k for k in failing if FORWARD_CASES[k][4] > 0]
    if failing and len(shifted) == len(failing) and any(checks[k].ok for k in range(
            len(FORWARD_CASES)) if FORWARD_CASES[k][4] == 0):
        diagnoses.append(Finding(
            "offset",
            "Con offset > 0 tu forward falla o devuelve otra forma: las filas son "
            "weight[offset : offset + T] (T filas empezando en offset), no weight[offset : T].",
            "With offset > 0 your forward fails or returns another shape: the rows are "
            "weight[offset : offset + T] (T rows starting at offset), not weight[offset : T]."))
    diagnoses += dtype_not_kept(ctx, "LearnedPositionalEmbedding.forward",
                                [case[3] for case in FORWARD_CASES])
    return ctx.verdict(checks, diagnoses=diagnoses)


# --- the notebook --------------------------------------------------------------------------------

ZERO = Tolerance(1e-6, 1e-6)
T_TRAIN, T_EVAL, LAG, VOCAB = 32, 128, 3, 16


def _offset_rows(ctx, ok):
    rows, weight = student(ctx, "_rows"), student(ctx, "_weight")
    if ok["rows"] or rows is None or weight is None or weight.shape[0] < 6:
        return []
    if resembles(rows, weight[0:2], ZERO):
        return [("nb-offset-ignored",
                 "forward ignora offset: suma las filas 0 … T−1 en lugar de offset … offset+T−1.",
                 "forward ignores offset: it adds rows 0 … T−1 instead of offset … offset+T−1.")]
    if resembles(rows, weight[2:4], ZERO) or resembles(rows, weight[4:6], ZERO):
        return [("nb-offset-off-by-one",
                 "forward toma las filas desplazadas en una posición: deben ser exactamente "
                 "offset … offset+T−1.",
                 "forward takes the rows shifted by one position: they must be exactly offset … "
                 "offset+T−1.")]
    return []


NO_GRADIENT = diagnosis(
    "grad", lambda ctx: (ctx.error("grad") or {}).get("type") in ("AttributeError",
                                                                  "RuntimeError"),
    "nb-no-gradient",
    "La tabla no recibe gradiente: forward debe usar self.weight (un nn.Parameter) sin "
    ".detach() ni copias a NumPy.",
    "The table receives no gradient: forward must use self.weight (an nn.Parameter) with no "
    ".detach() and no copy through NumPy.")


def _curves(values: list) -> list[np.ndarray]:
    return [v for v in values if isinstance(v, np.ndarray)]


def _shapes_right(values: list) -> bool:
    curves = _curves(values)
    return len(curves) == 2 and all(v.shape == (T_EVAL - LAG,) for v in curves)


def _probes_right(*probes: list) -> bool:
    """accuracy_by_position on an untrained model and on the trained sinusoidal one (mostly
    wrong and mostly right), against the hits computed here from the logits the models gave."""
    for accuracy, logits, tokens in (probe[:3] for probe in probes):
        hits = (logits[:, LAG:].argmax(-1) == tokens[:, :-LAG]).mean(0)
        if accuracy.shape != hits.shape or not np.allclose(accuracy, hits, atol=1e-6):
            return False
    return True


def _diagnose_accuracy(ctx, ok):
    found = []
    shapes = {v.shape for v in _curves(outputs(ctx, "_accuracy"))}
    if shapes == {(256,)}:
        found.append(("nb-accuracy-axis",
                      "accuracy_by_position promedia sobre las posiciones en lugar de sobre el "
                      "lote: la media va por dim=0 (las secuencias) y queda una entrada por "
                      "posición.",
                      "accuracy_by_position averages over the positions instead of over the "
                      "batch: the mean runs along dim=0 (the sequences), leaving one entry per "
                      "position."))
    elif shapes == {(T_EVAL,)}:
        found.append(("nb-accuracy-all-positions",
                      "accuracy_by_position incluye las posiciones t < 3, que no tienen token "
                      "3 atrás: empieza en t = LAG.",
                      "accuracy_by_position includes the positions t < 3, which have no token 3 "
                      "back: start at t = LAG."))
    grown = outputs(ctx, "grown")
    if not ok["grown_head"] and ctx.out("grown_head") is not None:
        found.append(("nb-grow-not-copied",
                      "grow_table no copia las filas entrenadas: las primeras max_len filas de "
                      "la tabla nueva deben ser exactamente las de la tabla vieja.",
                      "grow_table does not copy the trained rows: the first max_len rows of the "
                      "new table must be exactly those of the old one."))
    if grown and len(grown) >= 5 and grown[4] is not None and not grown[4]:
        found.append(("nb-grow-zero-rows",
                      "Las filas nuevas de grow_table son ceros: deja las que crea "
                      "LearnedPositionalEmbedding al inicializarse (es lo que obtendría quien "
                      "sube max_len sin más).",
                      "The new rows of grow_table are zeros: keep the ones "
                      "LearnedPositionalEmbedding creates when it is initialised (what anyone "
                      "who simply raises max_len would get)."))
    return found


PROBE = "(lambda m, p: (accuracy_by_position(m, p), m(p).detach(), p))"


def _lower_median(values: np.ndarray) -> float:
    ordered = np.sort(values)
    return float(ordered[(ordered.size - 1) // 2])  # torch.median's choice for an even count


ACCURACY_REQUIREMENTS = (
    requirement(("_accuracy",), _shapes_right,
                "cada curva de acierto tiene una entrada por posición t ≥ 3 (forma (T − 3,)).",
                "each accuracy curve has one entry per position t ≥ 3 (shape (T − 3,))."),
    requirement(("_accuracy",), lambda a: _shapes_right(a) and all(
        v[: T_TRAIN - LAG].mean() > 0.9 for v in _curves(a)),
        "acierto medio > 0.9 dentro de la longitud de entrenamiento.",
        "mean accuracy > 0.9 inside the training length."),
    requirement(("_accuracy",), lambda a: _shapes_right(a) and all(
        v[T_TRAIN - LAG + 16:].mean() < 0.3 for v in _curves(a)),
        "acierto medio < 0.3 lejos de la longitud de entrenamiento.",
        "mean accuracy < 0.3 far past the training length."),
    requirement(("_untrained", "_trained"), _probes_right,
                "accuracy_by_position coincide con los aciertos de otros modelos y lotes.",
                "accuracy_by_position matches the hits of other models and batches."),
)
INTERPOLATION_REQUIREMENTS = (
    requirement(("_lag_trained",), lambda lag: lag.shape == (T_TRAIN,) and bool(
        np.all(lag[8:] == LAG)),
        "con la tabla entrenada, la cabeza mira 3 atrás.",
        "with the trained table, the head looks 3 back."),
    requirement(("_lag_interpolated",), lambda lag: lag.shape == (T_EVAL,) and
                9 <= _lower_median(lag[32:]) <= 15,
                "con la tabla interpolada, la cabeza mira unas 12 posiciones atrás.",
                "with the interpolated table, the head looks about 12 positions back."),
    requirement(("_accuracy",), lambda a: a.shape == (T_EVAL - LAG,) and a.mean() < 0.3,
                "con la tabla interpolada, acierto medio < 0.3.",
                "with the interpolated table, mean accuracy < 0.3."),
)

# The notebook's given cell that test-table's records use, recreated when the references are
# built so that each classic mistake of learned.py is run through the cells that name the
# catalogue: a record that holds what a mistake of the module gives is the notebook's work done
# right on top of it (error carried forward, grader.hidden.cells), and costs nothing here: the
# module's items grade it. The trained table is not recreated: ``ends`` is not carried forward.
GIVEN = """
torch.manual_seed(0)
small = LearnedPositionalEmbedding(max_len=6, d_model=4)
x = torch.zeros(1, 2, 4)
"""

CELLS = (
    CellCheck("test-table", "Cuaderno: la tabla y sus parámetros",
              "Notebook: the table and its parameters", {
                  "rows": "small(x, offset=3)[0] - small.weight[3:5]",
                  "dtype": "small(torch.zeros(2, 6, 4, dtype=torch.float64)).dtype",
                  "probe": "(lambda p: small(p, offset=4) - p - small.weight[4:6])"
                           "(torch.linspace(-1, 1, 24).reshape(3, 2, 4))",
                  "grad": "(lambda: (small.zero_grad(), small(torch.zeros(1, 2, 4), "
                          "offset=1).sum().backward(), (small.weight.grad.abs().sum(-1) > 0)"
                          ".tolist())[-1])()",
                  "_rows": "small(x, offset=3)[0]", "_weight": "small.weight",
              }, cell_judge(tol=ZERO, diagnoses=(_offset_rows, wrong_text(
                  "dtype", "nb-dtype-not-kept",
                  "Con una entrada float64, forward devuelve {got}: convierte las filas al "
                  "dtype de x antes de sumarlas.",
                  "With a float64 input, forward returns {got}: convert the rows to x's dtype "
                  "before adding them."), NO_GRADIENT)), catalogue=MODULE, given=GIVEN),
    CellCheck("test-past-lmax", "Cuaderno: más allá de L_max", "Notebook: past L_max", {
                  "_accuracy": "list(accuracy.values())",
                  "grown_head": "(lambda g: g.weight[:T_TRAIN] - trained_table.weight)"
                                "(grow_table(trained_table, 40))",
                  "grown": "(lambda g: (type(g).__name__, g.max_len, list(g.weight.shape), "
                           "bool(g.weight[T_TRAIN:].abs().sum() > 0)))"
                           "(grow_table(trained_table, 40))",
                  "_untrained": f"{PROBE}(Copier(SinusoidalPositionalEncoding(D, "
                                "max_len=64)), random_tokens(8, 10, torch.Generator()"
                                ".manual_seed(5)))",
                  "_trained": f"{PROBE}(models['sinusoidal'], random_tokens(8, 12, "
                              "torch.Generator().manual_seed(6)))",
              }, cell_judge(tol=ZERO, properties=ACCURACY_REQUIREMENTS,
                            diagnoses=(_diagnose_accuracy,)),
              volatile=frozenset({"_accuracy", "_trained"})),
    CellCheck("test-interpolation", "Cuaderno: interpolar la tabla",
              "Notebook: interpolating the table", {
                  "_lag_trained": "lag_trained", "_lag_interpolated": "lag_interpolated",
                  "_accuracy": "accuracy_interpolated",
                  "ends": "(lambda r: (r[0] - trained_table.weight[0], "
                          "r[-1] - trained_table.weight[-1]))"
                          "(interpolate_positions(trained_table.weight.detach(), T_EVAL))",
                  "probe": "interpolate_positions(torch.arange(12.0).reshape(4, 3), 7)",
              }, cell_judge(tol=ZERO, properties=INTERPOLATION_REQUIREMENTS),
              volatile=frozenset({"_lag_trained", "_lag_interpolated", "_accuracy"}),
              catalogue=MODULE, given=GIVEN),
)

CHECKS = LabChecks(
    lab_id="17.02", inputs=inputs, groups=GROUPS, items=ITEMS, cells=CELLS, questions=(
        ("por qué fallan pasado t = 32", "why they fail past t = 32"),
        ("cuándo conviene interpolar, y ViT", "when interpolating is right, and ViT")))
