"""Hidden checks of lab 17.03 (RoPE).

Graded from ``src/minimodel/positional/rope.py`` (11 points, 2 of them for the module inside a
Hugging Face Llama, part 7 of the notebook, computed in the sandbox from the module, never read
from the kernel) and the lab notebook (its
auto-graded cells, 14 points, at the end of this file; the written answers by hand). Hidden inputs:
other head sizes, partial rotation, per-sequence positions ``(B, T)``, positions far beyond the
visible ones (4095 … 100000), another base, an ``attention_factor``, float16 and bfloat16 queries,
offsets inside and past the cached table, and tensors on another device than the positions.
Tolerances: the per-dtype defaults (``grader.trusted.verdicts``) where the angles are given (tables
passed to ``apply_rotary``); where the student computes them, float32 angles (the contract) and
float64 ones must both pass: ``atol = 5e-5`` (positions below 100) and, for ``rope_cos_sin`` at
positions up to 100000, ``atol = 1e-2`` on cos and sin (float32 angles are off by up to 6e-3 rad
there; bfloat16 ones by whole radians).

Known mistakes diagnosed: the module's, from the catalogue ``solutions/mistakes/rope.py`` (the
two conventions swapped, rotation in the wrong direction or a sine of the wrong sign, a partial
rotation that touches the tail, angles computed in bfloat16, the exponent ``i/r`` instead of
``2i/r`` or without its minus sign, the attention factor ignored, the offset ignored); a tail
dropped, the dtype of ``x`` not kept, float64 frequencies, tables left on the CPU.

One mistake costs once: ``apply_rope``, ``RotaryEmbedding`` and the device item build on the
student's own ``rope_frequencies``, ``rope_cos_sin`` and ``apply_rotary``; a catalogue mistake of
one of those is carried forward (the case passes, with a note naming the function,
``grader.hidden.carried``), and so are the notebook's records that hold what it gives (``GIVEN``
recreates the notebook's names). ``llama`` composes the whole module inside a Hugging Face Llama
and cannot be judged apart from it (``COMPOSED``): a mistake the catalogue does not hold costs
there too, and its feedback says why.
"""

from __future__ import annotations

import numpy as np

from grader.hidden.carried import apart
from grader.hidden.cells import (
    Mistake,
    cell_judge,
    formula_mistakes,
    not_a_float,
    outputs,
    ref,
    wrong_dtype,
)
from grader.hidden.common import (
    bf16,
    cases_judge,
    contract,
    device_judge,
    dtype_not_kept,
    judged_cases,
    student,
    whole_case,
)
from grader.hidden.spec import (
    Case,
    CellCheck,
    Form,
    Group,
    Input,
    Items,
    LabChecks,
    non_default,
)
from grader.trusted.verdicts import Finding, JudgeContext, Tolerance

MODULE = "rope"
HALF_PRECISION = {"float16": Tolerance(2e-3, 2e-3), "bfloat16": Tolerance(1.6e-2, 2e-2)}
FAR_TOL = Tolerance(rtol=0.0, atol=1e-2)
# Where the student computes the angles: float32 angles (the contract) and float64 ones both pass.
ANGLE_TOL = {"float32": Tolerance(1e-5, 5e-5), **HALF_PRECISION}


def freqs(r: int, base: float = 10000.0) -> np.ndarray:
    return (1.0 / base ** (np.arange(0, r, 2, dtype=np.float32) / np.float32(r))).astype(
        np.float32)


P0 = np.array([0, 3, 9, 27, 81])
P1 = np.array([[5, 6, 7, 8, 9, 10, 11]])
PB = np.stack([P0, P0 + 7])  # (B, T) positions, one row per sequence
PL = np.array([0, 1, 5, 4095, 8191, 100000])
PM = np.array([[0, 2, 4, 6], [1, 3, 5, 7]])


def _tables(positions: np.ndarray, inv_freq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    angles = positions.astype(np.float64)[..., None] * inv_freq.astype(np.float64)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1703)
    arrays = {
        "x0": rng.standard_normal((2, 3, 5, 8)).astype(np.float32),
        "x1": rng.standard_normal((1, 2, 7, 12)).astype(np.float32),
        "x2": rng.standard_normal((2, 2, 4, 6)).astype(np.float32),
        "p0": P0, "p1": P1, "pb": PB, "pl": PL, "pm": PM,
        "f8": freqs(8), "f6": freqs(6), "f6b": freqs(6, 500.0), "f4": freqs(4),
        "tok": rng.integers(0, 128, (2, 12)),  # token ids for the tiny Llama (vocabulary 128)
    }
    arrays["c0"], arrays["s0"] = _tables(P0, arrays["f8"])
    arrays["c1"], arrays["s1"] = _tables(P1[0], arrays["f6"])
    arrays["cb"], arrays["sb"] = _tables(PB, arrays["f8"])
    return arrays


X = {name: Input(name) for name in ("x0", "x1", "x2")}
POS = {name: Input(name, "int64") for name in ("p0", "p1", "pb", "pl", "pm")}


FREQ_CASES = [(2, 10000.0), (6, 500.0), (64, 10000.0), (128, 1e6), (10, 2.0)]
# (positions, inv_freq, attention_factor)
COS_SIN_CASES = [("pl", "f8", 1.0), ("pm", "f6b", 1.0), ("p0", "f4", 0.5)]
# (x, dtype, cos, sin, convention)
ROTARY_CASES = [("x0", "float32", "c0", "s0", "interleaved"), ("x0", "float32", "c0", "s0", "half"),
                ("x1", "float32", "c1", "s1", "interleaved"), ("x1", "float32", "c1", "s1", "half"),
                ("x0", "float32", "cb", "sb", "interleaved"), ("x0", "bfloat16", "c0", "s0",
                                                               "interleaved"),
                ("x0", "float16", "c0", "s0", "half")]
# (x, positions, inv_freq, convention, attention_factor)
ROPE_CASES = [("x0", "p0", "f8", "interleaved", 1.0), ("x0", "pb", "f8", "half", 1.0),
              ("x1", "p1", "f6", "half", 1.0), ("x2", "pm", "f6b", "interleaved", 0.5)]
# (x, rotary_dim, max_len, base, convention, offset)
MODULE_CASES = [("x0", 8, 32, 10000.0, "interleaved", 0), ("x0", 8, 32, 10000.0, "interleaved", 9),
                ("x0", 8, 32, 10000.0, "interleaved", 30), ("x0", 8, 32, 10000.0, "half", 4),
                ("x1", 6, 16, 500.0, "interleaved", 2)]
PERM_CASES = [(8, None), (12, 6), (2, None), (10, 4)]


DEFAULTS = {"base": 10000.0, "attention_factor": 1.0, "convention": "interleaved", "offset": 0}

GROUPS = (
    Group("freq", MODULE, tuple(
        Case("function", "rope_frequencies", (r,), non_default(DEFAULTS, base=b))
        for r, b in FREQ_CASES)),
    Group("cos_sin", MODULE, tuple(
        Case("function", "rope_cos_sin", (POS[p], Input(f)),
             non_default(DEFAULTS, attention_factor=a)) for p, f, a in COS_SIN_CASES)),
    Group("rotary", MODULE, tuple(
        Case("function", "apply_rotary", (Input(x, dt), Input(c), Input(s)),
             non_default(DEFAULTS, convention=conv)) for x, dt, c, s, conv in ROTARY_CASES)),
    Group("rope", MODULE, tuple(
        Case("function", "apply_rope", (X[x], POS[p], Input(f)),
             non_default(DEFAULTS, convention=conv, attention_factor=a))
        for x, p, f, conv, a in ROPE_CASES)),
    Group("module", MODULE, tuple(
        Case("module", "RotaryEmbedding", (X[x],), non_default(DEFAULTS, offset=off),
             init_args=(r,), init_kwargs={"max_len": m, "base": b, "convention": conv})
        for x, r, m, b, conv, off in MODULE_CASES)),
    Group("device", MODULE, (
        Case("function", "apply_rope", (X["x0"], Input("p0", "int64", device="cpu"),
                                        Input("f8", device="cpu")), {}),
        Case("function", "apply_rope", (Input("x0", "bfloat16"), POS["p0"], Input("f8")),
             {"convention": "half"}),
        Case("module", "RotaryEmbedding", (X["x0"],), {"offset": 3}, init_args=(8,),
             init_kwargs={"max_len": 32}),
    ), device=True),
    Group("perm", MODULE, tuple(Case("function", "rope_permutation", (D,) if r is None else (D, r))
                                for D, r in PERM_CASES)),
    # The module in place of a Hugging Face Llama's rotary embedding (minimodel.hf_llama): in its
    # own convention, then with the heads put back in the interleaved layout by rope_permutation.
    Group("llama", MODULE, tuple(
        Case("given", "minimodel.hf_llama.course_rope_logits", (Input("tok", "int64"),), kwargs)
        for kwargs in ({}, {"convention": "interleaved", "converted": True}))),
)


# --- judges (the module's classic mistakes come from the catalogue) -----------------------------

ITEMS = Items()


ITEMS.add("frequencies", 1, "rope_frequencies: frecuencias", "rope_frequencies: frequencies",
          cases_judge(wrong_output=(lambda out, k: out.get("dtype") == "float64",
                                    contract("rope_frequencies", "float64-output"))), group="freq")


# Far positions (up to 100000): float32 angles are off by up to ~6e-3 rad, the reference's as
# well as a student's, and float64 angles are better still; both must pass. bfloat16 angles are
# off by whole radians.
ITEMS.add("cos_sin", 1, "rope_cos_sin: ángulos en float32 y attention_factor",
          "rope_cos_sin: float32 angles and attention_factor", cases_judge(
              lambda ctx, k: whole_case(ctx, k, tol=FAR_TOL if COS_SIN_CASES[k][0] == "pl"
                                        else None)))


def _tail_only(ctx: JudgeContext, k: int) -> bool:
    """Case ``k`` rotates part of the head and the student's rotated dimensions are right."""
    x, _, c, _, _ = ROTARY_CASES[k]
    r, D = 2 * ctx.inputs[c].shape[-1], ctx.inputs[x].shape[-1]
    got, want = student(ctx, k), ctx.ref(k).get("array")
    return r < D and got is not None and want is not None and got.ndim == want.ndim and \
        got.shape[:-1] == want.shape[:-1] and got.shape[-1] >= r and np.allclose(
            got[..., :r], np.asarray(want, dtype=np.float64)[..., :r], atol=1e-4)


@ITEMS.judge("rotary", 3, "apply_rotary: las dos convenciones, rotación parcial, dtypes",
             "apply_rotary: both conventions, partial rotation, dtypes")
def judge_rotary(ctx: JudgeContext):
    checks, failing, diagnoses = judged_cases(ctx, tolerances=HALF_PRECISION)
    if not diagnoses and failing and all(_tail_only(ctx, k) for k in failing):
        diagnoses = ctx.catalogue_finding(f"{MODULE}.tail")  # a tail changed otherwise, or dropped
    diagnoses += dtype_not_kept(ctx, "apply_rotary", [case[1] for case in ROTARY_CASES])
    return ctx.verdict(checks, diagnoses=diagnoses)


ITEMS.add("apply_rope", 1, "apply_rope: posiciones por secuencia y otra base",
          "apply_rope: per-sequence positions and another base",
          cases_judge(tolerances=ANGLE_TOL), group="rope")


@ITEMS.judge("module", 1, "RotaryEmbedding: offset y posiciones fuera de la tabla",
             "RotaryEmbedding: offset and positions past the table")
def judge_module(ctx: JudgeContext):
    checks, failing, diagnoses = judged_cases(ctx, tolerances=ANGLE_TOL)
    if not diagnoses and failing == [2]:
        diagnoses.append(Finding(
            "past-table",
            "Con offset + T mayor que max_len, RotaryEmbedding debe calcular los ángulos que "
            "faltan (RoPE no tiene límite de longitud), no fallar ni repetir la tabla.",
            "With offset + T beyond max_len, RotaryEmbedding must compute the missing angles "
            "(RoPE has no length limit), not fail or repeat the table."))
    return ctx.verdict(checks, diagnoses=diagnoses)


ITEMS.add("device", 1, "RoPE: conserva el dispositivo", "RoPE: keeps the device", device_judge(
    "El código crea o deja tablas en la CPU aunque x esté en otro dispositivo (se comprueba con "
    "el dispositivo «meta» de PyTorch, sin GPU). Mueve positions, inv_freq, cos y sin al "
    "dispositivo de x.",
    "The code creates or leaves tables on the CPU while x lives on another device (checked with "
    "PyTorch's 'meta' device, without a GPU). Move positions, inv_freq, cos and sin to x's "
    "device.",
    tolerances=ANGLE_TOL))


ITEMS.add("permutation", 1, "rope_permutation", "rope_permutation", cases_judge(), group="perm")


# Logits of two float32 passes through the same tiny Llama, one rotation done another way
# (|logits| ~ 10): within 1e-5 of each other; the wrong convention is off by whole units.
# The item composes the whole module inside the Llama: its logits cannot be judged apart from
# apply_rotary, rope_cos_sin, rope_frequencies and rope_permutation. A classic mistake of one of
# them is carried forward (grader.hidden.carried); any other shows here too, and the feedback
# says why (COMPOSED).
COMPOSED = {"llama": (
    "Este apartado compone todo tu rope.py dentro de un Llama: sus logits no se pueden juzgar "
    "aparte de apply_rotary, rope_cos_sin, rope_frequencies y rope_permutation. Un error de esas "
    "funciones que no está en el catálogo de errores típicos también resta aquí; corrígelo en la "
    "función (sus apartados dicen cuál).",
    "This item composes your whole rope.py inside a Llama: its logits cannot be judged apart "
    "from apply_rotary, rope_cos_sin, rope_frequencies and rope_permutation. A mistake of those "
    "functions that is not in the catalogue of classic mistakes costs here too; fix it in the "
    "function (its items say which).")}
ITEMS.add("llama", 2, "Tu RoPE dentro de un Llama de Hugging Face",
          "Your RoPE inside a Hugging Face Llama",
          apart(COMPOSED["llama"], cases_judge(tol=Tolerance(1e-4, 1e-4))))


# --- the notebook --------------------------------------------------------------------------------
# Hidden probes use linspace and arange inputs; the parent rebuilds them to recognise the usual
# mistakes of the functions the cells write (rope.py's are the module items').

CELL_TOL = Tolerance(1e-5, 1e-5)
LOOSE = Tolerance(1e-4, 1e-4)
FORM_X = "torch.linspace(-1, 1, 60).reshape(1, 2, 5, 6)"
FORM_P = "torch.tensor([3, 9, 27, 81, 243])"
FORM_F = "rope_frequencies(6, base=500.0)"
PAIRS = [(3, 5), (10, 12), (100, 102), (5, 3), (7, 40)]


def rotate(x, cos, sin, convention: str, direction: int = 1) -> np.ndarray:
    """RoPE on float64 ``x (B, H, T, D)`` with tables ``(T, F)``, rotating by ``direction``
    times the angle (to recognise the notebook's own formulations)."""
    x = np.asarray(x, dtype=np.float64)
    cos, sin = np.asarray(cos, dtype=np.float64), np.asarray(sin, dtype=np.float64)
    F = cos.shape[-1]
    out = x.copy()
    pairs = (slice(0, 2 * F, 2), slice(1, 2 * F, 2)) if convention == "interleaved" else \
        (slice(0, F), slice(F, 2 * F))
    a, b = x[..., pairs[0]], x[..., pairs[1]]
    out[..., pairs[0]], out[..., pairs[1]] = a * cos - direction * b * sin, \
        direction * a * sin + b * cos
    return out


def _formulation(convention: str, direction: int = 1) -> np.ndarray:
    x = np.linspace(-1, 1, 60).reshape(1, 2, 5, 6)
    cos, sin = _tables(np.array([3, 9, 27, 81, 243]), freqs(6, 500.0))
    return rotate(x, cos, sin, convention, direction)


FORMULATION_MISTAKES = (
    *formula_mistakes("complex", _formulation, {
        "nb-complex-direction": ({"convention": "interleaved", "direction": -1}, (
            "rope_complex gira en sentido contrario: la pareja (a, b) pasa a (a·cos − b·sin, "
            "a·sin + b·cos); multiplica por e^{+ipθ}, no por su conjugado.",
            "rope_complex rotates the wrong way: the pair (a, b) becomes (a·cos − b·sin, "
            "a·sin + b·cos); multiply by e^{+ipθ}, not by its conjugate.")),
        "nb-complex-convention": ({"convention": "half"}, (
            "rope_complex empareja las dimensiones como la otra convención: la pareja de "
            "rope_complex es (x_2i, x_2i+1).",
            "rope_complex pairs the dimensions like the other convention: rope_complex's pair "
            "is (x_2i, x_2i+1).")),
    }, LOOSE),
    *formula_mistakes("rotate_half", _formulation, {
        "nb-rotate_half-direction": ({"convention": "half", "direction": -1}, (
            "rope_rotate_half gira en sentido contrario: la pareja (a, b) pasa a (a·cos − b·sin, "
            "a·sin + b·cos): rotate_half(x) = [−x2, x1].",
            "rope_rotate_half rotates the wrong way: the pair (a, b) becomes (a·cos − b·sin, "
            "a·sin + b·cos): rotate_half(x) = [−x2, x1].")),
        "nb-rotate_half-convention": ({"convention": "interleaved"}, (
            "rope_rotate_half empareja las dimensiones como la otra convención: la pareja de "
            "rope_rotate_half es (x_i, x_i+D/2).",
            "rope_rotate_half pairs the dimensions like the other convention: "
            "rope_rotate_half's pair is (x_i, x_i+D/2).")),
    }, LOOSE),
)


def _relative_sign(ctx, ok):
    logits = outputs(ctx, "logits")
    wanted = [ref(ctx, "logits", i) for i in range(4)]
    if not ok["logits"] and len(logits) == 4 and all(v is not None for v in logits) and \
            np.allclose(logits[0], wanted[2], atol=1e-4) and \
            np.allclose(logits[2], wanted[0], atol=1e-4):
        return [("nb-relative-sign",
                 "relative_logit usa el ángulo del desplazamiento opuesto: q^T R_δ k con "
                 "δ = n − m (clave menos consulta) lleva +sin(δθ) en el término cruzado "
                 "q_{2i+1}k_{2i} − q_{2i}k_{2i+1}.",
                 "relative_logit uses the angle of the opposite shift: q^T R_δ k with "
                 "δ = n − m (key minus query) has +sin(δθ) on the cross term "
                 "q_{2i+1}k_{2i} − q_{2i}k_{2i+1}.")]
    return []


_W, _PERM = np.arange(36.0).reshape(12, 3), np.array([0, 2, 4, 1, 3, 5])
PERMUTE_MISTAKES = (
    Mistake("nb-permute-inverse",
            lambda get: {"other": _W.reshape(2, 6, 3)[:, np.argsort(_PERM)].reshape(12, 3)},
            "permute_heads aplica la permutación inversa: la fila j de cada cabeza nueva es la "
            "fila perm[j] de la vieja (w[..., perm, :]).",
            "permute_heads applies the inverse permutation: row j of each new head is row "
            "perm[j] of the old one (w[..., perm, :]).", LOOSE),
    Mistake("nb-permute-one-head", lambda get: {"other": _W[np.tile(_PERM, 2)]},
            "permute_heads toma las filas de la primera cabeza para todas: la permutación se "
            "aplica dentro de cada cabeza (reshape a (n_heads, D, d_model)).",
            "permute_heads takes the first head's rows for all of them: the permutation is "
            "applied inside each head (reshape to (n_heads, D, d_model)).", LOOSE),
)

BF16_P, BF16_F = np.array([257.0, 3001.0, 4097.0, 100003.0]), np.array([1.0, 0.01, 0.3])
_PRODUCT = (BF16_P[:, None] * BF16_F.astype(np.float32)[None, :]).astype(np.float32)
BF16_MISTAKES = (
    Mistake("nb-angles-rounded-late", lambda get: {"bf16": bf16(_PRODUCT).astype(np.float64)},
            "angles_in multiplica en float32 y solo redondea el resultado a dtype: convierte "
            "antes las posiciones y las frecuencias, y multiplica en dtype (así se ve el error "
            "de bfloat16).",
            "angles_in multiplies in float32 and only rounds the result to dtype: convert the "
            "positions and the frequencies first, and multiply in dtype (that is where the "
            "bfloat16 error shows).", Tolerance(0.0, 1e-6)),
    Mistake("nb-angles-not-in-dtype", lambda get: {"bf16": _PRODUCT.astype(np.float64)},
            "angles_in no usa dtype: los ángulos salen en float32 también para bfloat16.",
            "angles_in does not use dtype: the angles come out in float32 for bfloat16 too.",
            Tolerance(1e-6, 1e-6)),
)

# The notebook's given cells (and its solved functions) that the cells' records use, recreated
# when the references are built so that each classic mistake of rope.py is run through them: a
# record that holds what a mistake of the module gives is the notebook's work done right on
# top of it (error carried forward, grader.hidden.cells), and costs nothing here.
GIVEN = """
inv_freq = rope_frequencies(4)
x = torch.tensor([1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 1, 4)
one = torch.tensor([1])
interleaved = apply_rope(x, one, inv_freq, convention="interleaved")
half = apply_rope(x, one, inv_freq, convention="half")


def rope_complex(x, positions, inv_freq):
    angles = positions.float()[:, None] * inv_freq
    turn = torch.polar(torch.ones_like(angles), angles)
    pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(pairs * turn).flatten(-2)


def rope_rotate_half(x, positions, inv_freq):
    angles = positions.float()[:, None] * inv_freq
    angles = torch.cat([angles, angles], dim=-1)
    x1, x2 = x.chunk(2, dim=-1)
    return x * angles.cos() + torch.cat([-x2, x1], dim=-1) * angles.sin()


torch.manual_seed(0)
B, H, T, D = 2, 3, 16, 8
q = torch.randn(B, H, T, D)
positions = torch.arange(T)
f = rope_frequencies(D)


def relative_logit(q, k, delta, inv_freq):
    angle = delta * inv_freq.double()
    q, k = q.double(), k.double()
    same = q[0::2] * k[0::2] + q[1::2] * k[1::2]
    cross = q[1::2] * k[0::2] - q[0::2] * k[1::2]
    return (angle.cos() * same + angle.sin() * cross).sum().item()


torch.manual_seed(1)
qv, kv = torch.randn(D), torch.randn(D)
rotated = apply_rope(q, positions, f)


def permute_heads(w, perm, n_heads):
    return w.reshape(n_heads, perm.shape[0], -1)[:, perm].reshape(n_heads * perm.shape[0], -1)


perm = rope_permutation(D)
d_model, n_heads = 24, 3
torch.manual_seed(2)
w_q = torch.randn(n_heads * D, d_model) / d_model**0.5
w_k = torch.randn(n_heads * D, d_model) / d_model**0.5
hidden = torch.randn(1, T, d_model)


def logits(w_q, w_k, convention):
    heads_q = (hidden @ w_q.T).reshape(1, T, n_heads, D).transpose(1, 2)
    heads_k = (hidden @ w_k.T).reshape(1, T, n_heads, D).transpose(1, 2)
    q_rot = apply_rope(heads_q, positions, f, convention=convention)
    k_rot = apply_rope(heads_k, positions, f, convention=convention)
    return q_rot @ k_rot.transpose(-2, -1) / D**0.5


trained = logits(w_q, w_k, "interleaved")
converted = logits(permute_heads(w_q, perm, n_heads), permute_heads(w_k, perm, n_heads), "half")
partial = apply_rope(q, positions, rope_frequencies(4), convention="half")
rotary = RotaryEmbedding(D, max_len=64)
whole = rotary(q)
chunked = torch.cat([rotary(q[:, :, :10]), rotary(q[:, :, 10:15], offset=10),
                     rotary(q[:, :, 15:], offset=15)], dim=2)


def angles_in(dtype, positions, inv_freq):
    return (positions.to(dtype)[:, None] * inv_freq.to(dtype)[None, :]).double()


f_big = rope_frequencies(128)
torch.manual_seed(3)
x_bf16 = torch.randn(1, 2, 64, 128).to(torch.bfloat16)
ours = apply_rope(x_bf16, torch.arange(4096, 4096 + 64), f_big)
"""

CELLS = (
    CellCheck("test-by-hand", "Cuaderno: RoPE a mano", "Notebook: RoPE by hand", {
        "inv_freq": "inv_freq", "interleaved": "interleaved", "half": "half",
        "zero": "apply_rope(x, torch.tensor([0]), inv_freq)",
        "f8": "rope_frequencies(8, base=100.0)",
        "other": "apply_rope(torch.arange(6.0).reshape(1, 1, 1, 6), torch.tensor([7]), "
                 "rope_frequencies(6, base=50.0), convention='half')",
    }, cell_judge(tol=CELL_TOL), catalogue=MODULE, given=GIVEN),
    CellCheck("test-formulations", "Cuaderno: otras dos formulaciones",
              "Notebook: two other formulations", {
        "complex": f"rope_complex({FORM_X}, {FORM_P}, {FORM_F})",
        "rotate_half": f"rope_rotate_half({FORM_X}, {FORM_P}, {FORM_F})",
        "complex_q": "rope_complex(q, positions, f)",
        "rotate_half_q": "rope_rotate_half(q, positions, f)",
    }, cell_judge(tol=CELL_TOL, mistakes=FORMULATION_MISTAKES), catalogue=MODULE, given=GIVEN),
    CellCheck("test-relative", "Cuaderno: solo importa la distancia",
              "Notebook: only the distance matters", {
        "logits": "[relative_logit(torch.linspace(-1, 1, 12), torch.linspace(1, -2, 12) ** 2,"
                  " d, rope_frequencies(12, base=100.0)) for d in (-9, 0, 9, 77)]",
        "norms": "rotated.norm(dim=-1)",
        "pairs": f"[relative_logit(qv, kv, n - m, f) for m, n in {PAIRS}]",
        "kind": "type(relative_logit(qv, kv, 2, f)).__name__",
    }, cell_judge(tol=Tolerance(1e-5, 1e-4),
                  diagnoses=(_relative_sign, not_a_float("relative_logit"))),
              catalogue=MODULE, given=GIVEN),
    CellCheck("test-convert", "Cuaderno: de una convención a la otra",
              "Notebook: from one convention to the other", {
        "converted": "converted", "trained": "trained",
        "small": "permute_heads(torch.arange(24).reshape(8, 3), torch.tensor([0, 2, 1, 3]), 2)",
        "other": "permute_heads(torch.arange(36.0).reshape(12, 3), "
                 "torch.tensor([0, 2, 4, 1, 3, 5]), 2)",
    }, cell_judge(tol=CELL_TOL, mistakes=PERMUTE_MISTAKES), catalogue=MODULE, given=GIVEN),
    CellCheck("test-partial-and-cache", "Cuaderno: rotación parcial y caché",
              "Notebook: partial rotation and cache", {
        "partial": "partial", "chunked": "chunked", "whole": "whole",
        "middle": "rotary(q[:, :, 7:9], offset=7)",
    }, cell_judge(tol=CELL_TOL), catalogue=MODULE, given=GIVEN),
    CellCheck("test-bf16", "Cuaderno: ángulos en bfloat16", "Notebook: angles in bfloat16", {
        "bf16": "angles_in(torch.bfloat16, torch.tensor([257, 3001, 4097, 100003]), "
                "torch.tensor([1.0, 0.01, 0.3]))",
        "fp32": "angles_in(torch.float32, torch.tensor([0, 1, 2, 30001]), "
                "torch.tensor([1.0, 0.5]))",
        "ours": "ours", "dtype": "ours.dtype",
        "angles_dtype": "str(angles_in(torch.float32, torch.tensor([0, 1]), "
                        "torch.tensor([1.0])).dtype)",
    }, cell_judge(tolerances={"bfloat16": Tolerance(1.6e-2, 2e-2), "float64":
                              Tolerance(1e-6, 1e-6), "float32": CELL_TOL},
                  mistakes=BF16_MISTAKES, diagnoses=(wrong_dtype(
                      "angles_in", "angles_dtype", "nb-angles-dtype",
                      "debe devolver float64 (.double()) para medir el error sin añadir "
                      "redondeo.", "it must return float64 (.double()) to measure the error "
                      "without adding rounding."),)),
              catalogue=MODULE, given=GIVEN),
)

def _width_d_tables(x, positions, inv_freq) -> tuple:
    """``rope_rotate_half``'s arguments as Hugging Face's Llama passes them: ``x`` and cos/sin
    tables ``(T, D)``, each angle twice (float32)."""
    angles = positions.astype(np.float32)[:, None] * inv_freq.astype(np.float32)
    angles = np.concatenate([angles, angles], axis=-1)
    return x, np.cos(angles), np.sin(angles)


# Shipped code (a benchmark, a helper) may hold the notebook's Hugging Face formula with the
# tables already built: the release's leak search tries that form too.
FORMS = (Form("rope_rotate_half", "cos-sin-tables", ("x", "cos", "sin"), _width_d_tables),)

CHECKS = LabChecks(
    lab_id="17.03", inputs=inputs, groups=GROUPS, items=ITEMS, cells=CELLS, forms=FORMS,
    composed=COMPOSED, questions=(
        ("cargar un checkpoint sin permutar", "loading a checkpoint without permuting"),
        ("por qué crece el error de bfloat16", "why the bfloat16 error grows")))
