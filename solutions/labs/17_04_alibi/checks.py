"""Hidden checks of lab 17.04 (ALiBi).

Graded from ``src/minimodel/positional/alibi.py`` (5 points) and the lab notebook (its
auto-graded cells, 11 points, at the end of this file; the written answers by hand). Hidden inputs:
head counts that are and are not powers of two (1 … 96), query blocks shorter than the keys (a KV
cache: the queries are the LAST ones), the symmetric encoder form, slopes on another device.
Tolerances: the per-dtype defaults; ``-inf`` must be exactly ``-inf``.

Known mistakes diagnosed: the slopes' and the bias's, from the catalogue
``solutions/mistakes/alibi.py`` (the power-of-two rule applied to every head count, the wrong half
of the interleaved slopes ``[1::2]``, sorted slopes, positions from 0, the bias with the wrong
sign, queries aligned to the start of the keys instead of the end, no causal mask, the
row-constant form ``+m·j``, a mask or no ``|i − j|`` in the encoder form); negative slopes, a
finite mask (``-1e9``).

One mistake costs once: the notebook's cells run ``alibi_slopes`` or ``alibi_bias``, which the
module items grade, and name the catalogue: a record that holds what a catalogue mistake of the
module gives (the notebook's own work done right on top of it) passes, with a note (``GIVEN``
recreates the names the records use). Not ``test-profile``: its ``attention_profile`` without
the flip gives exactly what ``alibi_bias`` with the wrong sign gives, so there the record cannot
tell the module's mistake from the notebook's.
"""

from __future__ import annotations

import math

import numpy as np

from grader.hidden.cells import Mistake, cell_judge, diagnosis, formula_mistakes, wrong_dtype
from grader.hidden.common import cases_judge, device_judge, finite_mask, student
from grader.hidden.spec import Case, CellCheck, Device, Group, Input, Items, LabChecks
from grader.trusted.verdicts import Finding, Tolerance

MODULE = "alibi"
HEADS = (1, 2, 3, 5, 6, 7, 8, 12, 16, 20, 24, 40, 96)
# (q_len, k_len, slopes, causal)
BIAS_CASES = [(8, 8, "s8", True), (1, 9, "s3", True), (2, 5, "s3", True), (3, 6, "s3", False),
              (4, 4, "s6", True), (5, 12, "s12", True), (7, 7, "s5", False)]


def slopes(n: int) -> np.ndarray:
    """The slopes by the paper's rule (float64): the hidden inputs of the bias cases."""
    def power_of_two(c: int) -> list[float]:
        return [2.0 ** (-8.0 * k / c) for k in range(1, c + 1)]

    closest = 2 ** math.floor(math.log2(n))
    return np.array(power_of_two(closest) + power_of_two(2 * closest)[0::2][: n - closest])


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


def bias(q_len: int, k_len: int, m: np.ndarray, causal: bool) -> np.ndarray:
    """The ALiBi bias (float64, ``(H, q_len, k_len)``), for the notebook's attention probes."""
    distance = np.arange(k_len - q_len, k_len)[:, None] - np.arange(k_len)[None, :]
    m = np.asarray(m, dtype=np.float64)[:, None, None]
    if not causal:
        return -m * np.abs(distance)
    return np.where(distance < 0, -np.inf, -m * distance)


ITEMS = Items()


judge_slopes = ITEMS.add(
    "slopes", 2, "alibi_slopes: la regla del artículo para cualquier número de cabezas",
    "alibi_slopes: the paper's rule for any head count", cases_judge(every_failing=(
        lambda ctx, k: (a := student(ctx, k)) is not None and np.all(a < 0), Finding(
            "negative-slopes",
            "Las pendientes son positivas, entre 0 y 1; el signo menos va en el sesgo.",
            "The slopes are positive, between 0 and 1; the minus sign belongs to the bias."))))


judge_bias = ITEMS.add(
    "bias", 2, "alibi_bias: signo, máscara y consultas alineadas al final",
    "alibi_bias: sign, mask and queries aligned to the end", cases_judge(every_failing=(
        lambda ctx, k: (e := ctx.ref(k).get("array")) is not None and finite_mask(
            student(ctx, k), e, atol=1e-5), Finding(
            "finite-mask",
            "Las claves futuras deben valer exactamente −inf, no un número muy negativo: en "
            "float16 −1e9 se convierte en −inf de todos modos y −1e4 deja pasar atención.",
            "Future keys must be exactly −inf, not a very negative number: in float16 −1e9 "
            "turns into −inf anyway and −1e4 lets some attention through."))))


ITEMS.add("device", 1, "ALiBi: conserva el dispositivo", "ALiBi: keeps the device", device_judge(
    "alibi_bias y alibi_slopes deben crear sus tensores en el dispositivo de slopes (o en "
    "device): se comprueba con el dispositivo «meta» de PyTorch, sin GPU.",
    "alibi_bias and alibi_slopes must create their tensors on the device of slopes (or on "
    "device): checked with PyTorch's 'meta' device, without a GPU."))


# --- the notebook --------------------------------------------------------------------------------
# Hidden probes use linspace inputs; the parent rebuilds them (and the bias from the formula, not
# from the student's alibi_bias) to recognise the usual mistakes of the functions the notebook
# asks for.

CELL_TOL = Tolerance(1e-5, 1e-6)
LOOSE = Tolerance(1e-4, 1e-4)
Q = "torch.linspace(-1, 1, 24).reshape(1, 3, 2, 4)"
K = "torch.linspace(1, -1, 60).reshape(1, 3, 5, 4)"
V = "torch.linspace(0, 2, 60).reshape(1, 3, 5, 4)"


def _attention(*, scale: str = "logits", axis: int = -1) -> np.ndarray:
    """The probe's attention with the bias of 3 heads (2 queries, 5 keys, no mask), or with one
    of the usual mistakes."""
    q = np.linspace(-1, 1, 24).reshape(1, 3, 2, 4)
    k, v = np.linspace(1, -1, 60).reshape(1, 3, 5, 4), np.linspace(0, 2, 60).reshape(1, 3, 5, 4)
    b = bias(2, 5, slopes(3), False)
    logits = q @ np.swapaxes(k, -1, -2)
    root = np.sqrt(q.shape[-1])
    logits = {"logits": logits / root + b, "none": logits + b, "all": (logits + b) / root}[scale]
    logits = logits - np.max(np.where(np.isfinite(logits), logits, -1e300), axis=axis,
                             keepdims=True)
    weights = np.exp(logits)
    return (weights / weights.sum(axis=axis, keepdims=True)) @ v


ATTENTION_MISTAKES = formula_mistakes("other", _attention, {
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
}, LOOSE)


def _unmasked(get) -> dict:
    """The row-constant bias without its −inf: finite, and the reference's wherever it is."""
    got, expected = get("other"), get("ref:other")
    return {"other": np.where(np.isfinite(expected), expected, got)} if np.isfinite(
        got).all() else {}


ROW_MISTAKES = (
    Mistake("nb-row-sign", lambda get: {"other": np.where(np.isfinite(
        get("ref:other")), -get("ref:other"), get("ref:other"))},
            "row_constant_bias tiene el signo cambiado: es +m·j (crece hacia las claves "
            "recientes), no −m·j.",
            "row_constant_bias has the wrong sign: it is +m·j (growing towards the recent "
            "keys), not −m·j.", LOOSE),
    Mistake("nb-row-distance", lambda get: {"other": bias(7, 7, slopes(6), True)},
            "row_constant_bias devuelve la forma de distancia −m·(i − j) (la de alibi_bias); se "
            "pide la forma constante por filas, +m·j.",
            "row_constant_bias returns the distance form −m·(i − j) (alibi_bias's); the "
            "row-constant form, +m·j, is asked for.", LOOSE),
    Mistake("nb-row-no-mask", _unmasked,
            "Con causal=True faltan los −inf por encima de la diagonal (claves futuras).",
            "With causal=True the −inf above the diagonal (future keys) are missing.", LOOSE),
)


ENCODER_MASKED = diagnosis(
    "encoder", lambda ctx: np.isinf(student(ctx, "encoder")).any(), "nb-row-masked",
    "Con causal=False, row_constant_bias no lleva máscara: +m·j en toda la matriz.",
    "With causal=False, row_constant_bias has no mask: +m·j over the whole matrix.")
MASS_OFF_BY_ONE = diagnosis(  # one number, that of the column before or after K
    "mass_probe", lambda ctx: student(ctx, "mass_probe").item() in (0.125, 0.5),
    "nb-mass-off-by-one",
    "mass_beyond se desplaza en una columna: la masa a distancia ≥ K empieza en la columna K "
    "(weights[:, K:]).",
    "mass_beyond is off by one column: the mass at distance ≥ K starts at column K "
    "(weights[:, K:]).")


NOT_FLIPPED = Mistake(
    "nb-profile-not-flipped", lambda get: {"small": get("ref:small")[:, ::-1]},
    "attention_profile devuelve los pesos ordenados por clave, no por distancia: la columna 0 "
    "debe ser la distancia 0 (la última clave); invierte el orden con .flip(-1).",
    "attention_profile returns the weights ordered by key, not by distance: column 0 must be "
    "distance 0 (the last key); reverse the order with .flip(-1).", LOOSE)

# The notebook's given cells (and its solved functions) that the cells' records use, recreated
# when the references are built so that each classic mistake of alibi.py is run through them: a
# record that holds what a mistake of the module gives is the notebook's work done right on top
# of it (error carried forward, grader.hidden.cells), and costs nothing here: the module's items
# grade it. test-profile names no catalogue: attention_profile without its flip gives exactly
# what alibi_bias with the wrong sign gives, so a record that holds it does not tell the module's
# mistake from the notebook's (nb-profile-not-flipped), and the cell charges it.
GIVEN = """
slopes8 = alibi_slopes(8)
causal = alibi_bias(8, 8, slopes8)
symmetric = alibi_bias(8, 8, slopes8, causal=False)


def manual_attention(q, k, v, bias):
    logits = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5 + bias
    return logits.softmax(dim=-1) @ v


torch.manual_seed(0)
B, H, T, D = 2, 8, 16, 32
q, k, v = (torch.randn(B, H, T, D) for _ in range(3))
bias = alibi_bias(T, T, alibi_slopes(H))
by_hand = manual_attention(q, k, v, bias)


def row_constant_bias(T, slopes, causal=True):
    j = torch.arange(T, dtype=torch.float32)
    bias = slopes[:, None, None] * j[None, None, :] + torch.zeros(T, 1)
    if causal:
        bias = bias.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return bias


logits = torch.randn(8, 12, 12)
s = alibi_slopes(8)
gap_causal = ((logits + row_constant_bias(12, s)).softmax(-1)
              - (logits + alibi_bias(12, 12, s)).softmax(-1)).abs().max()
gap_symmetric = ((logits + row_constant_bias(12, s, causal=False)).softmax(-1)
                 - (logits + alibi_bias(12, 12, s, causal=False)).softmax(-1)).abs().max()
"""

CELLS = (
    CellCheck("test-slopes", "Cuaderno: pendientes", "Notebook: slopes", {
        "s8": "alibi_slopes(8)", "s12": "alibi_slopes(12)",
        # one array (not a list of four lengths), so that a mistake's values can be stored
        "others": "torch.cat([alibi_slopes(n) for n in (5, 7, 20, 40)])",
        "dtype": "str(alibi_slopes(8).dtype)",
    }, cell_judge(tol=CELL_TOL, diagnoses=(wrong_dtype(
        "alibi_slopes", "dtype", "nb-slopes-dtype", "debe ser float32.",
        "it must be float32."),)), catalogue=MODULE, given=GIVEN),
    CellCheck("test-bias", "Cuaderno: la matriz de sesgos", "Notebook: the bias matrix", {
        "causal": "causal", "symmetric": "symmetric", "last": "alibi_bias(1, 8, slopes8)",
        "cached": "alibi_bias(2, 7, alibi_slopes(5))",
        "encoder": "alibi_bias(3, 4, alibi_slopes(2), causal=False)",
        "dtype": "str(alibi_bias(4, 4, alibi_slopes(3)).dtype)",
    }, cell_judge(tol=CELL_TOL), catalogue=MODULE, given=GIVEN),
    CellCheck("test-sdpa", "Cuaderno: atención a mano frente a SDPA",
              "Notebook: attention by hand against SDPA", {
        "by_hand": "by_hand",
        "other": f"manual_attention({Q}, {K}, {V}, alibi_bias(2, 5, alibi_slopes(3), "
                 "causal=False))",
        "causal": f"manual_attention({Q}, {K}, {V}, alibi_bias(2, 5, alibi_slopes(3)))",
    }, cell_judge(tol=Tolerance(1e-5, 1e-5), mistakes=ATTENTION_MISTAKES),
        catalogue=MODULE, given=GIVEN),
    CellCheck("test-row-constant", "Cuaderno: la forma constante por filas",
              "Notebook: the row-constant form", {
        "rc": "row_constant_bias(12, s)",
        "encoder": "row_constant_bias(5, alibi_slopes(3), causal=False)",
        "other": "row_constant_bias(7, alibi_slopes(6))",
        # apart: a mistake of alibi_bias in one form only is credited in that form's gap
        "gap_causal": "gap_causal.item()", "gap_symmetric": "gap_symmetric.item()",
    }, cell_judge(tol=CELL_TOL, tols=dict.fromkeys(("gap_causal", "gap_symmetric"),
                                                    Tolerance(1e-4, 1e-5)),
                  mistakes=ROW_MISTAKES,
                  diagnoses=(ENCODER_MASKED,)), catalogue=MODULE, given=GIVEN),
    CellCheck("test-profile", "Cuaderno: el perfil de atención",
              "Notebook: the attention profile", {
        "short": "short", "mass": "mass_beyond(long, 10)", "change": "change",
        "small": "attention_profile(torch.tensor([0.3, 1.1]), 5)",
        "small_mass": "mass_beyond(attention_profile(torch.tensor([0.3, 1.1]), 5), 2)",
        "mass_probe": "mass_beyond(torch.tensor([[0.5, 0.25, 0.125, 0.125]]), 2)",
    }, cell_judge(tol=Tolerance(1e-5, 1e-6), mistakes=(NOT_FLIPPED,),
                  diagnoses=(MASS_OFF_BY_ONE,))),
)

CHECKS = LabChecks(
    lab_id="17.04", inputs=inputs, groups=GROUPS, items=ITEMS, cells=CELLS, questions=(
        ("las dos formas con y sin máscara causal", "both forms with and without a causal mask"),
        ("una ventana que ayuda a extrapolar, y su precio",
         "a window that helps to extrapolate, and its price")))
