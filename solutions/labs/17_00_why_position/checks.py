"""Hidden checks of lab 17.00 (why position is needed).

Graded from ``src/minimodel/positional/equivariance.py`` (3 points) and the lab notebook (its
auto-graded cells, 8 points, are judged at the end of this file; the written answers are graded by
hand). ``permutation_equivariance_gap(layer, x, perm)`` takes a layer: the hidden
layers are lambdas the child builds from source written here (``spec.Function``), with hidden
weights: a row-wise MLP that changes the width, unmasked attention in float64, causal attention,
a layer that adds a position table, per-position weights and a position ramp. Hidden inputs:
batches larger and smaller than the sequence, ``T = 1``, the identity permutation, cycles (whose
inverse is another permutation), float32 and float64.

Tolerances: the gap as a float, ``rtol = atol = 1e-5`` (an equivariant float32 layer may leave
rounding noise; every non-zero hidden gap is above 0.1). The value may come back as a 0-d
tensor for the gap item; the contract item wants a Python float and a computation without
gradients (a layer that gives NaN when gradients are on must give a number).

Known mistakes diagnosed: the gap's, from the catalogue ``solutions/mistakes/equivariance.py``
(the output not permuted, the inverse permutation, the batch axis permuted instead of the
positions, the signed maximum (no absolute value), the mean or the norm instead of the maximum);
a tensor returned instead of a float (``.item()`` missing), gradients left on.

One mistake costs once: the notebook's cells that measure a gap with
``permutation_equivariance_gap`` (all but ``test-self-attention``) name the catalogue: a record
that holds what a catalogue mistake of the module gives (the notebook's own work done right on
top of it) passes, with a note (``GIVEN`` recreates the names the records use); the module's
items grade the mistake.
"""

from __future__ import annotations

import numpy as np

from grader.hidden.cells import CLOSE, Mistake, cell_judge, formula_mistakes, not_a_float, ref
from grader.hidden.common import cases_judge, contract, resembles, scalar, student
from grader.hidden.spec import Case, CellCheck, Function, Group, Input, Items, LabChecks
from grader.trusted.verdicts import Check, Finding, JudgeContext, Tolerance

MODULE = "equivariance"

ATTENTION = ("lambda z: torch.softmax((z @ wq) @ (z @ wk).transpose(-1, -2) / 2.0, dim=-1) "
             "@ (z @ wv)")
CAUSAL = ("lambda z: torch.softmax(((z @ wq) @ (z @ wk).transpose(-1, -2)).masked_fill("
          "torch.ones(z.shape[1], z.shape[1], dtype=torch.bool).triu(1), float('-inf')), "
          "dim=-1) @ (z @ wv)")
# name -> (source, the weights' dtype, {global: input key})
LAYERS = {
    "mlp": ("lambda z: torch.tanh(z @ w1) @ w2", "float32", {"w1": "w1", "w2": "w2"}),
    "attention": (ATTENTION, "float64", {"wq": "aq", "wk": "ak", "wv": "av"}),
    "causal": (CAUSAL, "float32", {"wq": "cq", "wk": "ck", "wv": "cv"}),
    "table": ("lambda z: z @ w + pe[: z.shape[1]]", "float32", {"w": "tw", "pe": "pe"}),
    "weights": ("lambda z: z * weights", "float32", {"weights": "wt"}),
    "ramp": ("lambda z: z + 0.5 * ramp", "float32", {"ramp": "r6"}),
    "table1": ("lambda z: z + pe1", "float32", {"pe1": "pe1"}),
    "grad": ("lambda z: z * (float('nan') if torch.is_grad_enabled() else 1.0)", "float32", {}),
}
# (layer, x key, x dtype, perm key): the gap item; the last case is the contract's no-grad one
CASES = [("mlp", "xa", "float32", "pa"), ("attention", "xb", "float64", "pb"),
         ("causal", "xa", "float32", "pa"), ("table", "xc", "float32", "pc"),
         ("weights", "xc", "float32", "pc"), ("ramp", "xe", "float32", "pe6"),
         ("ramp", "xe", "float32", "id6"), ("table1", "xd", "float32", "p1"),
         ("grad", "xc", "float32", "pc")]
GAP_CASES = range(len(CASES) - 1)
GRAD_CASE = len(CASES) - 1


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1700)
    normal = rng.standard_normal
    return {
        "xa": normal((8, 7, 5)), "xb": normal((9, 9, 4)), "xc": normal((6, 4, 3)),
        "xd": normal((2, 1, 5)), "xe": normal((3, 6, 4)),
        "pa": np.array([3, 6, 0, 5, 1, 2, 4]), "pb": np.array([8, 0, 1, 2, 3, 4, 5, 6, 7]),
        "pc": np.array([1, 2, 3, 0]), "pe6": np.array([5, 0, 1, 4, 2, 3]),
        "id6": np.arange(6), "p1": np.array([0]),
        "w1": normal((5, 16)) / 2, "w2": normal((16, 3)) / 4,
        "aq": normal((4, 4)), "ak": normal((4, 4)), "av": normal((4, 4)),
        "cq": normal((5, 5)) / 2, "ck": normal((5, 5)) / 2, "cv": normal((5, 5)),
        "tw": normal((3, 2)), "pe": normal((4, 2)), "wt": np.array([[1.0], [-2.0], [3.0], [0.5]]),
        "r6": np.arange(6.0)[:, None], "pe1": normal((1, 5)),
    }


def _function(layer: str) -> Function:
    source, dtype, env = LAYERS[layer]
    return Function(source, {name: Input(key, dtype) for name, key in env.items()})


GROUPS = (
    Group("gap", MODULE, tuple(
        Case("function", "permutation_equivariance_gap",
             (_function(layer), Input(x, dtype), Input(perm, "int64")))
        for layer, x, dtype, perm in CASES)),
)


ITEMS = Items()


judge_gap = ITEMS.add(
    "gap", 2, "permutation_equivariance_gap: el desvío de capas con y sin posición",
    "permutation_equivariance_gap: the gap of layers with and without position", cases_judge(
        JudgeContext.compare, cases=GAP_CASES, tol=CLOSE, check_kind=False, check_dtype=False))


@ITEMS.judge("contract", 1, "permutation_equivariance_gap: un float, sin gradientes",
             "permutation_equivariance_gap: a float, without gradients", group="gap")
def judge_contract(ctx: JudgeContext):
    outs = [o for o in (ctx.out(k) for k in range(len(CASES))) if o is not None]
    floats = bool(outs) and all(o.get("kind") == "scalar" and o.get("type") in (
        "float", "float64") for o in outs)  # np.float64 is a float too
    value = scalar(ctx, GRAD_CASE)
    finite = value is not None and bool(np.isfinite(value))
    checks = [Check(floats, "" if floats else "kind") if outs else
              Check(False, "error", error=ctx.error(0)),
              Check(finite, "" if finite else "values") if ctx.out(GRAD_CASE) is not None else
              Check(False, "error", error=ctx.error(GRAD_CASE))]
    diagnoses = []
    if any(o.get("kind") == "tensor" for o in outs):
        diagnoses.append(contract("permutation_equivariance_gap", "returns-tensor"))
    elif outs and not floats:
        diagnoses.append(contract("permutation_equivariance_gap", "not-a-float"))
    if value is not None and np.isnan(value):
        diagnoses.append(Finding(
            "gradients-on",
            "Calcula las dos salidas dentro de torch.no_grad(): el desvío solo mira valores, y "
            "con gradientes activados cada llamada guarda el grafo (memoria) y una capa puede "
            "comportarse distinto (aquí, una que da NaN cuando hay gradientes).",
            "Compute both outputs inside torch.no_grad(): the gap only looks at values, and "
            "with gradients on every call keeps its graph (memory) and a layer may behave "
            "differently (here, one that gives NaN when gradients are on)."))
    return ctx.verdict(checks, diagnoses=diagnoses)


# --- the notebook --------------------------------------------------------------------------------
# Hidden probes use inputs built from sines and cosines (no random generator, so the student's
# code cannot shift them); the parent rebuilds the same arrays to recognise known mistakes.

def _probe_inputs() -> tuple[np.ndarray, ...]:
    x = np.sin(np.arange(60) * 0.7).reshape(2, 5, 6)
    ws = [np.cos(np.arange(18) * step).reshape(6, 3) for step in (1.3, 0.4, 2.1)]
    return (x, *ws)


PROBE_X = "torch.sin(torch.arange(60, dtype=torch.float64) * 0.7).reshape(2, 5, 6)"
PROBE_W = ", ".join(f"torch.cos(torch.arange(18, dtype=torch.float64) * {step}).reshape(6, 3)"
                    for step in (1.3, 0.4, 2.1))
PREFIX = "torch.tensor([3, 0, 6, 1, 5, 2, 4, 7])"  # the first seven positions shuffled, T - 1 kept
LOOSE = Tolerance(1e-4, 1e-4)
FINISH = ("termina con .item()", "finish with .item()")


def _attention(*, scale=None, axis=-1, mask=None) -> np.ndarray:
    """Self-attention of the probe inputs, or with one of the usual mistakes."""
    x, w_q, w_k, w_v = _probe_inputs()
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    logits = q @ np.swapaxes(k, -1, -2) / (scale if scale is not None else np.sqrt(q.shape[-1]))
    if mask is not None:
        logits = np.where(mask, -np.inf, logits)
    logits = logits - logits.max(axis=axis, keepdims=True)
    weights = np.exp(logits)
    return (weights / weights.sum(axis=axis, keepdims=True)) @ v


ATTENTION_MISTAKES = formula_mistakes("probe", _attention, {
    "nb-no-scale": ({"scale": 1.0}, (
        "self_attention no divide los logits entre √d_k: QKᵀ/√d_k evita que el softmax se sature "
        "cuando d_k crece.",
        "self_attention does not divide the logits by √d_k: QKᵀ/√d_k keeps the softmax from "
        "saturating as d_k grows.")),
    "nb-scale-d-model": ({"scale": np.sqrt(6)}, (
        "self_attention divide entre √d (la anchura de x) en lugar de √d_k (la de Q y K). En el "
        "cuaderno coinciden, en las pruebas ocultas no: usa q.shape[-1].",
        "self_attention divides by √d (the width of x) instead of √d_k (that of Q and K). They "
        "match in the notebook but not in the hidden tests: use q.shape[-1].")),
    "nb-softmax-axis": ({"axis": -2}, (
        "El softmax va por columnas: cada fila de pesos (una consulta) debe sumar 1, así que va "
        "sobre la última dimensión (dim=-1), la de las claves.",
        "The softmax runs along columns: each row of weights (one query) must add up to 1, so it "
        "runs over the last dimension (dim=-1), the keys'.")),
})


def _diagnose_causal(ctx, ok):
    causal, T = student(ctx, "probe_causal"), 5
    if not ok["probe"] or ok["probe_causal"] or causal is None:
        return []
    if np.isnan(causal[:, 0]).all():
        return [("nb-mask-diagonal",
                 "La máscara causal también tapa la diagonal (triu(0) en lugar de triu(1)): cada "
                 "token debe verse a sí mismo, y la primera fila se queda sin ninguna clave (NaN).",
                 "The causal mask also covers the diagonal (triu(0) instead of triu(1)): each "
                 "token must see itself, and the first row is left with no key at all (NaN).")]
    if resembles(causal, _attention(mask=np.tril(np.ones((T, T), bool), -1))):
        return [("nb-mask-past",
                 "La máscara causal tapa el pasado en lugar del futuro: −∞ va por encima de la "
                 "diagonal (claves j > i), no por debajo.",
                 "The causal mask covers the past instead of the future: −∞ goes above the "
                 "diagonal (keys j > i), not below it.")]
    if resembles(causal, _attention()) and not resembles(
            causal, _attention(mask=np.triu(np.ones((T, T), bool), 1))):
        return [("nb-mask-ignored",
                 "Con causal=True la salida es la misma que sin máscara: falta aplicar la máscara.",
                 "With causal=True the output is the same as without a mask: the mask is never "
                 "applied.")]
    return []


NOT_PERMUTED_BACK = Mistake(
    "nb-not-permuted-back", lambda get: {"gap": get("ref:not_invariant")},
    "El desvío de la atención coincide con |Attn(PX) − Attn(X)|: antes de restar, hay que "
    "permutar también layer(X): P·layer(X) = layer(x)[:, perm].",
    "The gap of attention equals |Attn(PX) − Attn(X)|: before subtracting, layer(X) must be "
    "permuted too: P·layer(X) = layer(x)[:, perm].", LOOSE)


ONE_OFFSET = {  # offset_spread's value that equals the one of a single offset of the list
    "last": ("nb-last-offset",
             "offset_spread solo tiene en cuenta el último desplazamiento de la lista: debe "
             "devolver el máximo sobre todos.",
             "offset_spread only takes the last offset of the list into account: it must return "
             "the maximum over all of them."),
    "first": ("nb-first-offset",
              "offset_spread devuelve dentro del bucle, tras el primer desplazamiento: debe "
              "devolver el máximo sobre todos.",
              "offset_spread returns inside the loop, after the first offset: it must return the "
              "maximum over all of them."),
}


def _diagnose_offsets(ctx, ok):
    if ok["several"] or not ok["first"] or not ok["last"]:
        return []
    several = student(ctx, "several")
    return next(([finding] for record, finding in ONE_OFFSET.items()
                 if resembles(several, ref(ctx, record), Tolerance(1e-6, 1e-6))), [])


# The notebook's given cells (and its solved functions) that the cells' records use, recreated
# when the references are built so that each classic mistake of equivariance.py is run through
# them (the random draws in the notebook's order: the test cells between them draw nothing when
# graded): a record that holds what a mistake of the module gives is the notebook's work done
# right on top of it (error carried forward, grader.hidden.cells), and costs nothing here: the
# module's items grade it. The grader runs the notebook at its test size (T_long = 32).
GIVEN = """
def self_attention(x, w_q, w_k, w_v, causal=False):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    logits = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if causal:
        T = x.shape[-2]
        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        logits = logits.masked_fill(future, float("-inf"))
    return logits.softmax(dim=-1) @ v


torch.manual_seed(0)
B, T, d = 4, 8, 16
w_q, w_k, w_v = (torch.randn(d, d) / d**0.5 for _ in range(3))
x = torch.randn(B, T, d)
out = self_attention(x, w_q, w_k, w_v)
perm = torch.randperm(T)


def attention(z):
    return self_attention(z, w_q, w_k, w_v)


gap = permutation_equivariance_gap(attention, x, perm)
not_invariant = (attention(x[:, perm]) - attention(x)).abs().max().item()
mean_pooled = (attention(x[:, perm]).mean(dim=1) - attention(x).mean(dim=1)).abs().max().item()
block = torch.nn.TransformerEncoderLayer(d, nhead=4, dim_feedforward=32, dropout=0.0,
                                         batch_first=True)
block.eval()
block_gap = permutation_equivariance_gap(block, x, perm)
table = torch.randn(64, d)


def attention_with_positions(z):
    return self_attention(z + table[: z.shape[1]], w_q, w_k, w_v)


gap_positions = permutation_equivariance_gap(attention_with_positions, x, perm)


def causal_attention(z):
    return self_attention(z, w_q, w_k, w_v, causal=True)


gap_causal = permutation_equivariance_gap(causal_attention, x, perm)
T_long = 32
marker = torch.zeros(1, T_long, 1)
marker[0, 0, 0] = 1.0
zero, one = torch.zeros(1, 1), torch.ones(1, 1)
counted = self_attention(marker, zero, zero, one, causal=True)[0, :, 0]
flat = self_attention(marker, zero, zero, one)[0, :, 0]
inv_freq = 100.0 ** (-torch.arange(0, d, 2) / d)


def rotate_pairs(z, positions):
    angles = positions[:, None].float() * inv_freq
    pairs = torch.view_as_complex(z.reshape(*z.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(pairs * torch.polar(torch.ones_like(angles), angles)).flatten(-2)


def distance_bias(positions):
    return -0.5 * (positions[None, :] - positions[:, None]).abs().float()


def attention_logits(z, hook=None, offset=0):
    positions = offset + torch.arange(z.shape[1])
    if hook == "input":
        z = z + table[positions]
    q, k = z @ w_q, z @ w_k
    if hook == "qk":
        q, k = rotate_pairs(q, positions), rotate_pairs(k, positions)
    logits = q @ k.transpose(-2, -1) / d**0.5
    if hook == "logits":
        logits = logits + distance_bias(positions)
    return logits


def attend(z, hook=None):
    values = (z + table[: z.shape[1]] if hook == "input" else z) @ w_v
    return attention_logits(z, hook).softmax(dim=-1) @ values


def offset_spread(hook, z, offsets):
    start = attention_logits(z, hook, 0)
    return max((attention_logits(z, hook, o) - start).abs().max().item() for o in offsets)


offsets = [1, 5, 20, 50]
rows = {}
for hook in (None, "input", "qk", "logits"):
    rows[hook] = (permutation_equivariance_gap(lambda z, h=hook: attend(z, h), x, perm),
                  offset_spread(hook, x, offsets))
"""

CELLS = (
    CellCheck("test-self-attention", "Cuaderno: autoatención a mano",
              "Notebook: self-attention by hand", {
                  "out": "out", "causal": "self_attention(x, w_q, w_k, w_v, causal=True)",
                  "probe": f"self_attention({PROBE_X}, {PROBE_W})",
                  "probe_causal": f"self_attention({PROBE_X}, {PROBE_W}, causal=True)",
              }, cell_judge(tol=CLOSE, mistakes=ATTENTION_MISTAKES,
                            diagnoses=(_diagnose_causal,))),
    CellCheck("test-equivariance", "Cuaderno: equivariante, no invariante",
              "Notebook: equivariant, not invariant", {
                  "gap": "gap", "not_invariant": "not_invariant",
                  "mean_pooled": "mean_pooled", "block_gap": "block_gap",
                  "identity": "permutation_equivariance_gap(lambda z: z, x, perm)",
                  "ramp": "permutation_equivariance_gap(lambda z: z + torch.arange(T, "
                          "dtype=torch.float32)[:, None], x, perm)",
                  "kind": "type(gap).__name__",
              }, cell_judge(tol=CLOSE, mistakes=(NOT_PERMUTED_BACK,), diagnoses=(
                  not_a_float("permutation_equivariance_gap", *FINISH),)),
              catalogue=MODULE, given=GIVEN),
    CellCheck("test-positions", "Cuaderno: las posiciones rompen la simetría",
              "Notebook: positions break the symmetry", {
                  "gap_positions": "gap_positions",
                  "identity": "permutation_equivariance_gap(attention_with_positions, x, "
                              "torch.arange(T))",
              }, cell_judge(tol=CLOSE), catalogue=MODULE, given=GIVEN),
    CellCheck("test-causal", "Cuaderno: la máscara causal", "Notebook: the causal mask", {
                  "gap_causal": "gap_causal", "counted": "counted", "flat": "flat",
                  "prefix": f"causal_attention(x[:, {PREFIX}])[:, -1]",
                  "last": "causal_attention(x)[:, -1]",
              }, cell_judge(tol=CLOSE), catalogue=MODULE, given=GIVEN),
    CellCheck("test-hooks", "Cuaderno: absoluta o relativa según dónde entra",
              "Notebook: absolute or relative by where it enters", {
                  "rows": "[v for h in (None, 'input', 'qk', 'logits') for v in rows[h]]",
                  "zero": "offset_spread('input', x, [0])",
                  "several": "offset_spread('input', x, [3, 7, 1])",  # 7 gives the max
                  "first": "offset_spread('input', x, [3])",
                  "last": "offset_spread('input', x, [1])",
                  "rotated": "offset_spread('qk', x, [2, 9])",
                  "kind": "type(offset_spread('input', x, [3])).__name__",
              }, cell_judge(tol=LOOSE, diagnoses=(not_a_float("offset_spread", *FINISH),
                                                  _diagnose_offsets)),
              catalogue=MODULE, given=GIVEN),
)

CHECKS = LabChecks(
    lab_id="17.00", inputs=inputs, groups=GROUPS, items=ITEMS, cells=CELLS, questions=(
        ("posición sin codificación, causal o bidireccional",
         "position without an encoding, causal or bidirectional"),
        ("posición en los valores o solo en los pesos",
         "position in the values or only in the weights")))
