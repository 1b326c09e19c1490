"""Hidden checks of lab 17.05 (learned relative biases: T5 buckets, Swin's index).

Graded from ``src/minimodel/positional/relative_bias.py`` (6 points) and the lab notebook (its
auto-graded cells, 12 points, at the end of this file; the written answers are graded by hand).
Hidden inputs: relative positions far past ``max_distance`` on both sides, other bucket counts
and distances (64/200, 10/20, 8/30, the T5 defaults), 0-d to 3-d position tensors;
``RelativePositionBias`` with 1 to 4 heads, 8 to 48 buckets, both modes, fewer queries than keys
(a KV cache) and as many; Swin windows that are not square (1 x 5, 3 x 2, 4 x 7).

``RelativePositionBias`` fills its table at random; each case replaces it (``state``: the probe
copies a hidden table with distinct values into ``bias.weight``, the attribute its given
``__init__`` creates), so every output is a known lookup and is compared value by value.
Tolerances: integer outputs must be exact; the bias, the float32 default (it is a lookup).

Known mistakes diagnosed: from the catalogue ``solutions/mistakes/relative_bias.py``, the sign
of the relative position (``query - key``), num_buckets not halved in bidirectional mode, the
causal mode with ``|rel|`` (future keys not sent to bucket 0), which ``RelativePositionBias``
inherits; in ``RelativePositionBias``, queries aligned to the start of the keys, ``.reshape``
instead of ``.permute(2, 0, 1)``, the axes ``(H, k_len, q_len)``, ``bidirectional`` not passed,
the default bucket count and distance used instead of the module's (a bucket past the table is
named only when every such case has fewer than 32 rows); Swin's index with T5's sign (key minus
query) or with the row stride ``window_w`` or ``2 window_h - 1`` instead of the table's
(``2 window_w - 1``).

One mistake costs once: ``test-buckets``, ``test-module`` and ``test-swin`` run the module, which
the module items grade, and name its catalogue: a record that holds what a catalogue mistake of
the module gives passes, with a note (``GIVEN_*`` recreate the names the records use). Not
``test-shaw`` (``shaw_logits`` uses none of the module) nor ``test-bucket-starts``: its
``bucket_starts`` with the key at ``+n`` gives exactly what ``relative_position_bucket`` with the
wrong sign gives, so there a record cannot tell the module's mistake from the notebook's.
"""

from __future__ import annotations

import numpy as np

from grader.hidden.cells import Mistake, cell_judge, formula_mistakes, ref, wrong_dtype, wrong_text
from grader.hidden.common import cases_judge, judged_cases, student
from grader.hidden.spec import Case, CellCheck, Group, Input, Items, LabChecks, non_default
from grader.trusted.verdicts import JudgeContext, Tolerance

MODULE = "relative_bias"
EXACT = Tolerance(0.0, 0.0)
# (positions key, bidirectional, num_buckets, max_distance); None: the T5 defaults
BUCKET_CASES = [("r0", True, 64, 200), ("r0", False, 64, 200), ("r1", True, 10, 20),
                ("r1", False, 10, 20), ("r2", False, None, None), ("r2", True, None, None),
                ("r3", True, 8, 30), ("r4", False, 8, 30)]
# (n_heads, num_buckets, max_distance, bidirectional, q_len, k_len)
BIAS_CASES = [(3, 16, 40, False, 5, 60), (2, 12, 30, True, 4, 45), (4, 32, 128, False, 1, 200),
              (2, 8, 20, True, 9, 9), (1, 10, 25, True, 3, 70), (2, 48, 300, False, 6, 400)]
WINDOWS = [(1, 5), (3, 2), (4, 7), (5, 5)]


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1705)
    arrays = {
        "r0": np.arange(-420, 421, 3, dtype=np.int64),
        "r1": (np.arange(37)[None, :] - np.arange(37)[:, None]).astype(np.int64),
        "r2": rng.integers(-600, 600, size=(3, 4, 9)).astype(np.int64),
        "r3": np.array(-29, dtype=np.int64),
        "r4": np.arange(-64, 65, dtype=np.int64).reshape(1, 129),
    }
    for k, (n_heads, nb, _, _, _, _) in enumerate(BIAS_CASES):  # the tables, all values distinct
        arrays[f"w{k}"] = rng.permutation(nb * n_heads).reshape(nb, n_heads).astype(
            np.float32) / 8 - 1
    return arrays


GROUPS = (
    Group("buckets", MODULE, tuple(  # None: the defaults, not passed
        Case("function", "relative_position_bucket", (Input(key, "int64"),), non_default(
            {}, bidirectional=bidirectional, num_buckets=nb, max_distance=dist))
        for key, bidirectional, nb, dist in BUCKET_CASES)),
    Group("bias", MODULE, tuple(
        Case("module", "RelativePositionBias", (q_len, k_len), init_args=(n_heads,),
             init_kwargs={"num_buckets": nb, "max_distance": md, "bidirectional": bidirectional},
             state={"bias.weight": Input(f"w{k}")})
        for k, (n_heads, nb, md, bidirectional, q_len, k_len) in enumerate(BIAS_CASES))),
    Group("swin", MODULE, tuple(Case("function", "swin_relative_index", w) for w in WINDOWS)),
)


ITEMS = Items()


ITEMS.add("buckets", 3, "relative_position_bucket: modos bidireccional y causal",
          "relative_position_bucket: bidirectional and causal modes", cases_judge(tol=EXACT))


@ITEMS.judge("bias", 2,
             "RelativePositionBias: cubetas del módulo, consultas al final, forma (H, q_len, "
             "k_len)",
             "RelativePositionBias: the module's buckets, queries at the end, shape (H, q_len, "
             "k_len)")
def judge_bias(ctx: JudgeContext):
    checks, failing, _ = judged_cases(ctx)
    raised = [k for k in failing if _out_of_table(ctx, k)]
    found = ctx.named_mistakes([k for k in failing if k not in raised])
    if raised:  # only the defaults explain a bucket past the table (fewer than 32 rows)
        found = [f for f in found if f.code == "defaults"] if all(
            BIAS_CASES[k][1] < 32 for k in raised) else []
    return ctx.verdict(checks, diagnoses=found)


def _out_of_table(ctx: JudgeContext, k: int) -> bool:
    """Did case ``k`` raise an index error (a bucket past the table's rows)?"""
    error = ctx.error(k) if ctx.out(k) is None else None
    return bool(error) and error.get("type") in ("IndexError", "RuntimeError") and \
        "index" in error.get("message", "").lower()


ITEMS.add("swin", 1, "swin_relative_index: signo consulta − clave y ancho de la tabla",
          "swin_relative_index: query − key sign and the table's width", cases_judge(tol=EXACT))


# --- the notebook --------------------------------------------------------------------------------
# Hidden probes use inputs built from sines and cosines; the parent rebuilds them to recognise
# known mistakes. Tables copied into RelativePositionBias make its output a known lookup.

CELL_TOL = Tolerance(1e-5, 1e-5)
SHAW_Q = "torch.sin(torch.arange(21.0) * 0.9).reshape(7, 3)"
SHAW_K = "torch.cos(torch.arange(21.0) * 0.5).reshape(7, 3)"
SHAW_TABLE = "torch.sin(torch.arange(15.0) * 1.7 + 0.3).reshape(5, 3)"


def _shaw(*, scale_all=True, scale=True, sign=1) -> np.ndarray:
    """Shaw's logits of the probe (K = 2), or with one of the usual mistakes."""
    q, k = np.sin(np.arange(21.0) * 0.9).reshape(7, 3), np.cos(np.arange(21.0) * 0.5).reshape(7, 3)
    table, K = np.sin(np.arange(15.0) * 1.7 + 0.3).reshape(5, 3), 2
    T, d = q.shape
    r = np.clip(sign * (np.arange(T)[None, :] - np.arange(T)[:, None]), -K, K) + K
    position = np.take_along_axis(q @ table.T, r, axis=1)
    root = np.sqrt(d) if scale else 1.0
    return (q @ k.T + position) / root if scale_all else q @ k.T / root + position


SHAW_MISTAKES = formula_mistakes("probe", _shaw, {
    "nb-shaw-scale-content-only": ({"scale_all": False}, (
        "shaw_logits solo divide entre √d el término de contenido: el de posición, q_i·a_ij, "
        "también forma parte del logit y se escala igual, (q_i·k_j + q_i·a_ij)/√d.",
        "shaw_logits divides only the content term by √d: the position term, q_i·a_ij, is part "
        "of the logit too and is scaled the same way, (q_i·k_j + q_i·a_ij)/√d.")),
    "nb-shaw-no-scale": ({"scale": False}, (
        "shaw_logits no divide entre √d.", "shaw_logits does not divide by √d.")),
    "nb-shaw-sign": ({"sign": -1}, (
        "shaw_logits usa la distancia consulta − clave: la fila r + K de la tabla es la de "
        "r = j − i (clave menos consulta).",
        "shaw_logits uses the distance query − key: row r + K of the table is that of "
        "r = j − i (key minus query).")),
}, Tolerance(1e-4, 1e-4))


def _diagnose_starts(ctx, ok):
    bi, expected = student(ctx, "bi"), ref(ctx, "bi")
    if ok["bi"] or bi is None or bi.shape != (16,) or expected is None:
        return []
    values, wanted = bi.tolist(), expected.tolist()
    if values[1:] == [-1.0] * 15:
        return [("nb-starts-sign",
                 "La clave que está n posiciones atrás tiene rel = −n (clave − consulta), no +n: "
                 "con +n casi todas las cubetas quedan vacías.",
                 "The key n positions back has rel = −n (key − query), not +n: with +n almost "
                 "every bucket is left empty.")]
    if values[8:15] == [w - 1 for w in wanted[9:16]]:
        return [("nb-starts-last",
                 "bucket_starts guarda la última distancia de cada cubeta, no la primera: no "
                 "sobrescribas una cubeta que ya tiene valor (setdefault).",
                 "bucket_starts keeps the last distance of each bucket, not the first: do not "
                 "overwrite a bucket that already has a value (setdefault).")]
    return []


HEADS_LAST = Mistake(
    "nb-module-permute", lambda get: {"small": get("ref:small").transpose(1, 2, 0)},
    "El módulo devuelve (q_len, k_len, H): la tabla indexada da las cabezas al final y hay que "
    "llevarlas delante con .permute(2, 0, 1).",
    "The module returns (q_len, k_len, H): the indexed table puts the heads last and they must "
    "be moved first with .permute(2, 0, 1).", EXACT)
SMALL_MODULE = "RelativePositionBias(3, num_buckets=8, max_distance=20, bidirectional=False)"

# The notebook's given cells that the cells' records use, recreated when the references are built
# so that each classic mistake of relative_bias.py is run through them: a record that holds what a
# mistake of the module gives is the notebook's work done right on top of it (error carried
# forward, grader.hidden.cells), and costs nothing here: the module's items grade it. The grader
# runs the notebook at its test size (T = 24). test-bucket-starts names no catalogue: its
# bucket_starts with +n for the key gives exactly what relative_position_bucket with the wrong
# sign gives, so a record that holds it does not tell the module's mistake from the notebook's
# (nb-starts-sign), and the cell charges it.
# One source per cell: a mistake that breaks a later given cell (a bucket past the table makes
# the module raise) still leaves the earlier cells' records to carry forward.
GIVEN_BUCKETS = """
rel = torch.tensor([-1000, -128, -64, -32, -16, -9, -8, -7, -1, 0, 1, 7, 8, 16, 32, 64, 127])
"""
GIVEN_MODULE = """
H = 4
module = RelativePositionBias(H, bidirectional=True)
with torch.no_grad():
    module.bias.weight.copy_(torch.arange(32.0)[:, None].expand(32, H))
T = 24
bias = module(T, T)
"""
GIVEN_SWIN = "index7 = swin_relative_index(7, 7)"

CELLS = (
    CellCheck("test-buckets", "Cuaderno: las cubetas de T5", "Notebook: T5's buckets", {
                  "bi": "relative_position_bucket(rel, bidirectional=True)",
                  "causal": "relative_position_bucket(rel, bidirectional=False)",
                  "grid": "[relative_position_bucket(torch.arange(-400, 401), bidirectional="
                          "b, num_buckets=n, max_distance=m) for n, m in ((32, 128), (16, 50),"
                          " (64, 300)) for b in (True, False)]",
                  "shape": "list(relative_position_bucket(torch.zeros(2, 3, 4, "
                           "dtype=torch.int32), bidirectional=True).shape)",
                  "dtype": "str(relative_position_bucket(rel, bidirectional=True).dtype)",
              }, cell_judge(tol=EXACT, diagnoses=(wrong_dtype(
                  "relative_position_bucket", "dtype", "nb-bucket-dtype",
                  "debe ser torch.int64 (LongTensor), para indexar la tabla.",
                  "it must be torch.int64 (a LongTensor), to index the table."),)),
              catalogue=MODULE, given=GIVEN_BUCKETS),
    CellCheck("test-bucket-starts", "Cuaderno: dónde empieza cada cubeta",
              "Notebook: where each bucket starts", {
                  "bi": "(lambda s: torch.tensor([s.get(b, -1) for b in range(16)]))"
                        "(bucket_starts(True))",
                  "causal": "(lambda s: torch.tensor([s.get(b, -1) for b in range(32)]))"
                            "(bucket_starts(False))",
                  "sizes": "(len(bucket_starts(True)), len(bucket_starts(False)))",
                  "_key_kind": "type(next(iter(bucket_starts(True)))).__name__",
              }, cell_judge(tol=EXACT, diagnoses=(wrong_text(
                  "_key_kind", "nb-starts-key-kind",
                  "Las claves del diccionario de bucket_starts son {got}: deben ser int de "
                  "Python (usa .tolist() o .item()).",
                  "The keys of bucket_starts's dictionary are {got}: they must be Python "
                  "ints (use .tolist() or .item())."), _diagnose_starts))),
    CellCheck("test-module", "Cuaderno: el módulo de sesgo relativo",
              "Notebook: the relative-bias module", {
                  "bias": "bias", "last": "module(1, T)",
                  "small": f"(lambda m: (m.bias.weight.data.copy_(torch.arange(24.0)"
                           f".reshape(8, 3)), m(2, 6))[1])({SMALL_MODULE})",
                  "encoder": "(lambda m: (m.bias.weight.data.copy_(torch.arange(40.0)"
                             ".reshape(10, 4)), m(3, 7))[1])(RelativePositionBias(4, "
                             "num_buckets=10, max_distance=30, bidirectional=True))",
                  "grad": f"(lambda m: (m(2, 6).sum().backward(), m.bias.weight.grad is not "
                          f"None and bool(m.bias.weight.grad.abs().sum() > 0))[1])"
                          f"({SMALL_MODULE})",
              }, cell_judge(tol=EXACT, mistakes=(HEADS_LAST,)), catalogue=MODULE,
              given=GIVEN_MODULE),
    CellCheck("test-shaw", "Cuaderno: Shaw frente al sesgo escalar",
              "Notebook: Shaw versus the scalar bias", {
                  "logits": "shaw_logits(q, k, table, K)",
                  "fixed": "shaw_logits(same_q, k, table, K)",
                  "probe": f"shaw_logits({SHAW_Q}, {SHAW_K}, {SHAW_TABLE}, 2)",
                  "zero": f"shaw_logits({SHAW_Q}, {SHAW_K}, torch.zeros(5, 3), 2)",
              }, cell_judge(tol=CELL_TOL, mistakes=SHAW_MISTAKES)),
    CellCheck("test-swin", "Cuaderno: el índice relativo de Swin",
              "Notebook: Swin's relative index", {
                  "i22": "swin_relative_index(2, 2)", "i7": "index7",
                  "i23": "swin_relative_index(2, 3)", "i11": "swin_relative_index(1, 1)",
                  "i34": "swin_relative_index(3, 4)", "dtype": "str(index7.dtype)",
              }, cell_judge(tol=EXACT), catalogue=MODULE, given=GIVEN_SWIN),
)

CHECKS = LabChecks(
    lab_id="17.05", inputs=inputs, groups=GROUPS, items=ITEMS, cells=CELLS, questions=(
        ("distancias que comparten cubeta", "distances that share a bucket"),
        ("clave − consulta o consulta − clave", "key − query or query − key")))
