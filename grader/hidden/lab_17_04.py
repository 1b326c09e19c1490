"""Hidden checks of lab 17.04 (ALiBi).

Graded from ``src/minimodel/positional/alibi.py`` (5 points) and the lab notebook (its
auto-graded cells, 11 points, at the end of this file; the written answers by hand). Hidden inputs:
head counts that are and are not powers of two (1 … 96), query blocks shorter than the keys (a KV
cache: the queries are the LAST ones), the symmetric encoder form, slopes on another device.
Tolerances: the per-dtype defaults; ``-inf`` must be exactly ``-inf``.

Known mistakes diagnosed: the power-of-two rule applied to every head count, the wrong half of
the interleaved slopes (``[1::2]``), sorted slopes, the bias with the wrong sign, queries aligned
to the start of the keys instead of the end, no causal mask or a finite one (``-1e9``), the
row-constant form ``+m·j`` returned instead of the distance form.
"""

from __future__ import annotations

import math

import numpy as np

from grader.hidden import nbcells
from grader.hidden.common import device_judge, explained, resembles, student, whole_case
from grader.hidden.spec import (
    Case,
    CellCheck,
    Device,
    Group,
    Input,
    Item,
    LabChecks,
    NotebookChecks,
)
from grader.verdicts import Finding, JudgeContext, Tolerance

MODULE = "alibi"
HEADS = (1, 2, 3, 5, 6, 7, 8, 12, 16, 20, 24, 40, 96)
# (q_len, k_len, slopes, causal)
BIAS_CASES = [(8, 8, "s8", True), (1, 9, "s3", True), (2, 5, "s3", True), (3, 6, "s3", False),
              (4, 4, "s6", True), (5, 12, "s12", True), (7, 7, "s5", False)]


def _power_of_two(n: int) -> list[float]:
    return [2.0 ** (-8.0 * k / n) for k in range(1, n + 1)]


def slopes(n: int, rule: str = "paper") -> np.ndarray:
    """The slopes by the paper's rule, or by one of the usual mistakes."""
    closest = 2 ** math.floor(math.log2(n))
    if rule == "geometric":
        values = _power_of_two(n)
    elif rule == "odd-half":
        values = _power_of_two(closest) + _power_of_two(2 * closest)[1::2][: n - closest]
    else:
        values = _power_of_two(closest) + _power_of_two(2 * closest)[0::2][: n - closest]
    if rule == "sorted":
        values = sorted(values, reverse=True)
    return np.array(values, dtype=np.float64)


def inputs() -> dict[str, np.ndarray]:
    return {f"s{n}": slopes(n).astype(np.float32) for n in (3, 5, 6, 8, 12)}


GROUPS = (
    Group("slopes", MODULE, tuple(Case("function", "alibi_slopes", (n,)) for n in HEADS)),
    Group("bias", MODULE, tuple(
        Case("function", "alibi_bias", (q, k, Input(s)), {} if causal else {"causal": False})
        for q, k, s, causal in BIAS_CASES)),
    Group("device", MODULE, (
        Case("function", "alibi_bias", (3, 6, Input("s6")), {}),
        Case("function", "alibi_bias", (4, 4, Input("s3")), {"causal": False}),
        Case("function", "alibi_slopes", (6,), {"device": Device()}),
    ), device=True),
)


def bias(q_len: int, k_len: int, m: np.ndarray, causal: bool, *, align: str = "end",
         sign: int = -1, mask: str = "inf", form: str = "distance") -> np.ndarray:
    """The ALiBi bias, or one of its usual mistakes (float64, ``(H, q_len, k_len)``)."""
    query = np.arange(k_len - q_len, k_len) if align == "end" else np.arange(q_len)
    distance = query[:, None] - np.arange(k_len)[None, :]
    m = np.asarray(m, dtype=np.float64)[:, None, None]
    if not causal:
        return -m * np.abs(distance) * np.ones_like(m)
    values = m * np.arange(k_len)[None, None, :] * np.ones((1, q_len, 1)) if form == "row" \
        else sign * m * distance
    if mask == "inf":
        values = np.where(distance < 0, -np.inf, values)
    return values


SLOPE_DIAGNOSES = {
    "geometric": (
        "Para un número de cabezas que no es potencia de dos, la regla del artículo no es la "
        "serie 2^(−8k/n): toma las c pendientes de la potencia de dos c más cercana por debajo "
        "y añade las de 2c cabezas en posiciones alternas ([0::2]).",
        "For a head count that is not a power of two, the paper's rule is not the series "
        "2^(−8k/n): it takes the c slopes of the nearest power of two c below and adds every "
        "other slope of 2c heads ([0::2])."),
    "odd-half": (
        "Las pendientes añadidas deben ser las de posición par de 2c cabezas ([0::2], empezando "
        "por la primera); tu código toma las impares ([1::2]), que repiten las de c.",
        "The added slopes must be those in even positions of 2c heads ([0::2], from the first); "
        "your code takes the odd ones ([1::2]), which repeat those of c."),
    "sorted": (
        "Las pendientes no se ordenan: con 6 cabezas son 2^−2, 2^−4, 2^−6, 2^−8, 2^−1, 2^−3, en "
        "ese orden (cada cabeza conserva la suya).",
        "The slopes are not sorted: with 6 heads they are 2^−2, 2^−4, 2^−6, 2^−8, 2^−1, 2^−3, "
        "in that order (each head keeps its own)."),
}


def judge_slopes(ctx: JudgeContext):
    checks = [whole_case(ctx, k) for k in range(len(HEADS))]
    failing = [k for k, c in enumerate(checks) if not c.ok]
    names = explained(failing, {rule: (lambda k, rule=rule: slopes(HEADS[k], rule))
                                for rule in SLOPE_DIAGNOSES}, lambda k: student(ctx, k))
    diagnoses = [Finding(n, *SLOPE_DIAGNOSES[n]) for n in names]
    if failing and all((a := student(ctx, k)) is not None and np.all(a < 0) for k in failing):
        diagnoses.append(Finding(
            "negative-slopes",
            "Las pendientes son positivas, entre 0 y 1; el signo menos va en el sesgo.",
            "The slopes are positive, between 0 and 1; the minus sign belongs to the bias."))
    return ctx.verdict(checks, diagnoses=diagnoses)


BIAS_DIAGNOSES = {
    "sign": ("El sesgo tiene el signo cambiado: debe ser −m·(i − j), cero en la diagonal y "
             "negativo hacia el pasado, para que las claves lejanas pesen menos.",
             "The bias has the wrong sign: it must be −m·(i − j), zero on the diagonal and "
             "negative towards the past, so that far keys weigh less."),
    "start-aligned": ("Con menos consultas que claves (caché KV), las consultas son las ÚLTIMAS "
                      "q_len posiciones: la consulta i está en k_len − q_len + i, no en i.",
                      "With fewer queries than keys (KV cache), the queries are the LAST q_len "
                      "positions: query i sits at k_len − q_len + i, not at i."),
    "no-mask": ("Falta la máscara causal: las claves futuras (j > posición de la consulta) deben "
                "valer −inf.",
                "The causal mask is missing: future keys (j > the query's position) must be "
                "−inf."),
    "row-constant": ("Devuelves la forma constante por filas (+m·j). Da la misma atención causal, "
                     "pero la función pide la forma de distancia −m·(i − j), 0 en la diagonal.",
                     "You return the row-constant form (+m·j). It gives the same causal "
                     "attention, but the function asks for the distance form −m·(i − j), 0 on "
                     "the diagonal."),
}


def judge_bias(ctx: JudgeContext):
    checks = [whole_case(ctx, k) for k in range(len(BIAS_CASES))]
    failing = [k for k, c in enumerate(checks) if not c.ok]

    def variant(kind):
        def make(k):
            q, kl, s, causal = BIAS_CASES[k]
            m = ctx.inputs[s]
            if kind == "start-aligned" and q == kl:
                return None
            if kind in ("no-mask", "row-constant") and not causal:
                return None
            options = {"sign": {"sign": 1}, "start-aligned": {"align": "start"},
                       "no-mask": {"mask": "none"}, "row-constant": {"form": "row"}}[kind]
            return bias(q, kl, m, causal, **options)
        return make

    names = explained(failing, {kind: variant(kind) for kind in BIAS_DIAGNOSES},
                      lambda k: student(ctx, k))
    diagnoses = [Finding(n, *BIAS_DIAGNOSES[n]) for n in names]
    finite = []
    for k in failing:
        q, kl, s, causal = BIAS_CASES[k]
        expected = bias(q, kl, ctx.inputs[s], causal)
        got = student(ctx, k)
        future = np.isinf(expected)
        if got is not None and got.shape == expected.shape and future.any() and \
                np.all(np.isfinite(got[future])) and np.all(got[future] <= -1e3) and \
                np.allclose(got[~future], expected[~future], atol=1e-5):
            finite.append(k)
    if finite and len(finite) == len(failing):
        diagnoses.append(Finding(
            "finite-mask",
            "Las claves futuras deben valer exactamente −inf, no un número muy negativo: en "
            "float16 −1e9 se convierte en −inf de todos modos y −1e4 deja pasar atención.",
            "Future keys must be exactly −inf, not a very negative number: in float16 −1e9 turns "
            "into −inf anyway and −1e4 lets some attention through."))
    return ctx.verdict(checks, diagnoses=diagnoses)


judge_device = device_judge(
    "alibi_bias y alibi_slopes deben crear sus tensores en el dispositivo de slopes (o en "
    "device): se comprueba con el dispositivo «meta» de PyTorch, sin GPU.",
    "alibi_bias and alibi_slopes must create their tensors on the device of slopes (or on "
    "device): checked with PyTorch's 'meta' device, without a GPU.")


ITEMS = (
    Item("slopes", "slopes", 2, "alibi_slopes: la regla del artículo para cualquier número de "
         "cabezas", "alibi_slopes: the paper's rule for any head count", judge_slopes),
    Item("bias", "bias", 2, "alibi_bias: signo, máscara y consultas alineadas al final",
         "alibi_bias: sign, mask and queries aligned to the end", judge_bias),
    Item("device", "device", 1, "ALiBi: conserva el dispositivo", "ALiBi: keeps the device",
         judge_device),
)

# --- the notebook --------------------------------------------------------------------------------
# Hidden probes use linspace inputs; the parent rebuilds them (and the bias from the formula, not
# from the student's alibi_bias) to recognise the usual mistakes of the cells the student writes.

CELL_TOL = Tolerance(1e-5, 1e-6)
LOOSE = Tolerance(1e-4, 1e-4)
Q = "torch.linspace(-1, 1, 24).reshape(1, 3, 2, 4)"
K = "torch.linspace(1, -1, 60).reshape(1, 3, 5, 4)"
V = "torch.linspace(0, 2, 60).reshape(1, 3, 5, 4)"


def _qkv() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (np.linspace(-1, 1, 24).reshape(1, 3, 2, 4), np.linspace(1, -1, 60).reshape(1, 3, 5, 4),
            np.linspace(0, 2, 60).reshape(1, 3, 5, 4))


def _attention(b: np.ndarray, *, scale: str = "logits", axis: int = -1) -> np.ndarray:
    q, k, v = _qkv()
    logits = q @ np.swapaxes(k, -1, -2)
    root = np.sqrt(q.shape[-1])
    logits = {"logits": logits / root + b, "none": logits + b, "all": (logits + b) / root}[scale]
    logits = logits - np.max(np.where(np.isfinite(logits), logits, -1e300), axis=axis,
                             keepdims=True)
    weights = np.exp(logits)
    return (weights / weights.sum(axis=axis, keepdims=True)) @ v


ATTENTION_MISTAKES = {
    "nb-no-scale": ({"scale": "none"}, (
        "manual_attention no divide q·k entre √D.", "manual_attention does not divide q·k by √D.")),
    "nb-scaled-bias": ({"scale": "all"}, (
        "manual_attention divide también el sesgo entre √D: solo se escala q·kᵀ, y el sesgo se "
        "suma después, como hace SDPA con attn_mask.",
        "manual_attention divides the bias by √D too: only q·kᵀ is scaled, and the bias is "
        "added afterwards, as SDPA does with attn_mask.")),
    "nb-softmax-axis": ({"axis": -2}, (
        "El softmax va por la dimensión de las consultas: cada fila (una consulta) debe sumar 1 "
        "sobre las claves, dim=-1.",
        "The softmax runs along the queries' dimension: each row (one query) must add up to 1 "
        "over the keys, dim=-1.")),
}


def _diagnose_sdpa(ctx, ok):
    if ok["other"]:
        return []
    got, b = nbcells.arr(ctx, "other"), bias(2, 5, slopes(3), False)
    return [(code, *text) for code, (options, text) in ATTENTION_MISTAKES.items()
            if resembles(got, _attention(b, **options), LOOSE)]


def _diagnose_slopes(ctx, ok):
    found = []
    got = [nbcells.arr(ctx, "s12"), *nbcells.outputs(ctx, "others")]
    counts = (12, 5, 7, 20, 40)
    if not (ok["s12"] and ok["others"]) and len(got) == len(counts):
        for rule, text in SLOPE_DIAGNOSES.items():
            wrong = [slopes(n, rule) for n in counts]
            different = [k for k, n in enumerate(counts) if not np.allclose(wrong[k],
                                                                            slopes(n))]
            if different and all(resembles(got[k], wrong[k], LOOSE) for k in different):
                found.append((f"nb-{rule}", *text))
    dtype = nbcells.text(ctx, "dtype")
    if not ok["dtype"] and dtype:
        found.append(("nb-slopes-dtype", f"alibi_slopes devuelve {dtype}; debe ser float32.",
                      f"alibi_slopes returns {dtype}; it must be float32."))
    return found


def _diagnose_bias(ctx, ok):
    found = []
    got, m = nbcells.arr(ctx, "cached"), slopes(5)
    if not ok["cached"]:
        candidates = {"sign": {"sign": 1}, "start-aligned": {"align": "start"},
                      "no-mask": {"mask": "none"}, "row-constant": {"form": "row"}}
        found += [(f"nb-{name}", *BIAS_DIAGNOSES[name]) for name, options in candidates.items()
                  if resembles(got, bias(2, 7, m, True, **options), LOOSE)]
    encoder = nbcells.arr(ctx, "encoder")
    if not ok["encoder"] and encoder is not None and np.isinf(encoder).any():
        found.append(("nb-encoder-masked",
                      "Con causal=False no hay máscara: el sesgo simétrico −m·|i − j| es finito "
                      "en toda la matriz.",
                      "With causal=False there is no mask: the symmetric bias −m·|i − j| is "
                      "finite over the whole matrix."))
    return found


def _flip_finite(values: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(values), -values, values)


def _diagnose_row_constant(ctx, ok):
    found = []
    got, expected = nbcells.arr(ctx, "other"), nbcells.ref(ctx, "other")
    if not ok["other"] and expected is not None and got is not None:
        if resembles(got, _flip_finite(expected), LOOSE):
            found.append(("nb-row-sign",
                          "row_constant_bias tiene el signo cambiado: es +m·j (crece hacia las "
                          "claves recientes), no −m·j.",
                          "row_constant_bias has the wrong sign: it is +m·j (growing towards the "
                          "recent keys), not −m·j."))
        elif resembles(got, bias(7, 7, slopes(6), True), LOOSE):
            found.append(("nb-row-distance",
                          "row_constant_bias devuelve la forma de distancia −m·(i − j) (la de "
                          "alibi_bias); se pide la forma constante por filas, +m·j.",
                          "row_constant_bias returns the distance form −m·(i − j) (alibi_bias's); "
                          "the row-constant form, +m·j, is asked for."))
        elif np.isfinite(got).all() and resembles(
                got, np.where(np.isfinite(expected), expected, got), LOOSE):
            found.append(("nb-row-no-mask",
                          "Con causal=True faltan los −inf por encima de la diagonal (claves "
                          "futuras).",
                          "With causal=True the −inf above the diagonal (future keys) are "
                          "missing."))
    encoder = nbcells.arr(ctx, "encoder")
    if not ok["encoder"] and encoder is not None and np.isinf(encoder).any():
        found.append(("nb-row-masked",
                      "Con causal=False, row_constant_bias no lleva máscara: +m·j en toda la "
                      "matriz.",
                      "With causal=False, row_constant_bias has no mask: +m·j over the whole "
                      "matrix."))
    return found


def _diagnose_profile(ctx, ok):
    found = []
    got, expected = nbcells.arr(ctx, "small"), nbcells.ref(ctx, "small")
    if not ok["small"] and expected is not None and resembles(got, expected[:, ::-1], LOOSE):
        found.append(("nb-profile-not-flipped",
                      "attention_profile devuelve los pesos ordenados por clave, no por "
                      "distancia: la columna 0 debe ser la distancia 0 (la última clave); "
                      "invierte el orden con .flip(-1).",
                      "attention_profile returns the weights ordered by key, not by distance: "
                      "column 0 must be distance 0 (the last key); reverse the order with "
                      ".flip(-1)."))
    mass = nbcells.arr(ctx, "mass_probe")
    if not ok["mass_probe"] and mass is not None and mass.size == 1 and \
            float(mass.ravel()[0]) in (0.125, 0.5):
        found.append(("nb-mass-off-by-one",
                      "mass_beyond se desplaza en una columna: la masa a distancia ≥ K empieza "
                      "en la columna K (weights[:, K:]).",
                      "mass_beyond is off by one column: the mass at distance ≥ K starts at "
                      "column K (weights[:, K:])."))
    return found


NOTEBOOK = NotebookChecks(
    slug="17_04_alibi",
    cells=(
        CellCheck("test-slopes", "Cuaderno: pendientes", "Notebook: slopes", {
            "s8": "alibi_slopes(8)", "s12": "alibi_slopes(12)",
            "others": "[alibi_slopes(n) for n in (5, 7, 20, 40)]",
            "dtype": "str(alibi_slopes(8).dtype)",
        }, nbcells.cell_judge(tol=CELL_TOL, diagnose=_diagnose_slopes)),
        CellCheck("test-bias", "Cuaderno: la matriz de sesgos", "Notebook: the bias matrix", {
            "causal": "causal", "symmetric": "symmetric", "last": "alibi_bias(1, 8, slopes8)",
            "cached": "alibi_bias(2, 7, alibi_slopes(5))",
            "encoder": "alibi_bias(3, 4, alibi_slopes(2), causal=False)",
            "dtype": "str(alibi_bias(4, 4, alibi_slopes(3)).dtype)",
        }, nbcells.cell_judge(tol=CELL_TOL, diagnose=_diagnose_bias)),
        CellCheck("test-sdpa", "Cuaderno: atención a mano frente a SDPA",
                  "Notebook: attention by hand against SDPA", {
            "by_hand": "by_hand",
            "other": f"manual_attention({Q}, {K}, {V}, alibi_bias(2, 5, alibi_slopes(3), "
                     "causal=False))",
            "causal": f"manual_attention({Q}, {K}, {V}, alibi_bias(2, 5, alibi_slopes(3)))",
        }, nbcells.cell_judge(tol=Tolerance(1e-5, 1e-5), diagnose=_diagnose_sdpa)),
        CellCheck("test-row-constant", "Cuaderno: la forma constante por filas",
                  "Notebook: the row-constant form", {
            "rc": "row_constant_bias(12, s)",
            "encoder": "row_constant_bias(5, alibi_slopes(3), causal=False)",
            "other": "row_constant_bias(7, alibi_slopes(6))",
            "gaps": "[gap_causal.item(), gap_symmetric.item()]",
        }, nbcells.cell_judge(tol=CELL_TOL, tols={"gaps": Tolerance(1e-4, 1e-5)},
                              diagnose=_diagnose_row_constant)),
        CellCheck("test-profile", "Cuaderno: el perfil de atención",
                  "Notebook: the attention profile", {
            "short": "short", "mass": "mass_beyond(long, 10)", "change": "change",
            "small": "attention_profile(torch.tensor([0.3, 1.1]), 5)",
            "small_mass": "mass_beyond(attention_profile(torch.tensor([0.3, 1.1]), 5), 2)",
            "mass_probe": "mass_beyond(torch.tensor([[0.5, 0.25, 0.125, 0.125]]), 2)",
        }, nbcells.cell_judge(tol=Tolerance(1e-5, 1e-6), diagnose=_diagnose_profile)),
    ),
    manual_titles={
        "q1-answer": ("Pregunta 1: las dos formas con y sin máscara causal (corrección manual)",
                      "Question 1: both forms with and without a causal mask (graded by hand)"),
        "q2-answer": ("Pregunta 2: una ventana que ayuda a extrapolar, y su precio (corrección "
                      "manual)", "Question 2: a window that helps to extrapolate, and its price "
                      "(graded by hand)"),
    },
)

CHECKS = LabChecks(lab_id="17.04", inputs=inputs, groups=GROUPS, items=ITEMS, notebook=NOTEBOOK)
