"""Hidden checks of lab 17.01 (sinusoidal positional encoding).

Graded from ``src/minimodel/positional/sinusoidal.py`` (9 points) and the lab notebook (the
auto-graded cells' points come from the notebook; the written answers are graded by hand).

Hidden inputs: lengths, widths, bases and offsets that the visible tests and the notebook never
use, including the edges (one position, an empty table, ``offset + T == max_len``), and inputs of
every floating dtype. Tolerance of the table: ``atol = 2e-4`` (angles computed in float32 are an
accepted choice and lose up to ~1e-4 at the longest hidden length, 1000); the tight float32
tolerance would reject them. A note (no points) tells students whose angles look like float32.

Known mistakes diagnosed (each tested in ``tests/grader``): from the catalogue
``solutions/mistakes/sinusoidal.py``, the table's (concatenated layout ``[sin | cos]``, exponent
``i/d`` instead of ``2i/d``, sine and cosine swapped, ``base`` ignored, positions from 1) and
forward's (``offset`` ignored, ``offset`` off by one: the catalogue reads rows from ``offset + 1``;
the judge also recognises a shift either way where every failing case has an offset, and says it
in the catalogue's words); float64 (or a tensor)
returned (``minimodel.selfcheck.contracts``), ``x``'s dtype not kept, rows not moved to ``x``'s
device (caught on the ``meta`` device without a GPU).

One mistake costs once: the module's items build on the student's own ``sinusoidal_pe``, and a
table mistake of the catalogue carried into the rows forward adds costs only in ``pe.*`` (the
module items keep their points, with a note, ``grader.hidden.carried``). The notebook's cells
``test-table`` and ``test-module`` only run the module, which the module items grade: a record
that holds what a catalogue mistake of the module gives passes, with a note (``GIVEN`` recreates
the names they use). Nothing in this lab is a composition that cannot be judged apart.
"""

from __future__ import annotations

import numpy as np

from grader.hidden.carried import carry_forward
from grader.hidden.cells import cell_judge, ref
from grader.hidden.common import contract, device_judge, dtype_not_kept, judged_cases, student
from grader.hidden.spec import Case, CellCheck, Group, Input, Items, LabChecks, non_default
from grader.trusted.verdicts import Check, Finding, JudgeContext, Tolerance

MODULE = "sinusoidal"
TABLE_TOL = Tolerance(rtol=0.0, atol=2e-4)
SUM_TOLERANCES = {  # x + table rows, in x's dtype
    "float64": Tolerance(1e-7, 2e-4),
    "float32": Tolerance(1e-5, 2e-4),
    "float16": Tolerance(2e-3, 3e-3),
    "bfloat16": Tolerance(1.6e-2, 2e-2),
}

# (T, d, base): one position, odd widths of pairs, another base, long tables, an empty one.
PE_CASES = [(1, 2, 10000.0), (9, 6, 10000.0), (37, 24, 10000.0), (100, 10, 500.0),
            (257, 96, 10000.0), (1000, 64, 10000.0), (0, 8, 10000.0)]
VALUE_CASES = range(6)
LAW_CASES = (2, 4, 5)

# (d_model, max_len, base, x shape, offset)
MODULE_CASES = [
    (12, 40, 10000.0, (7, 12), 0),
    (12, 40, 10000.0, (3, 7, 12), 0),
    (12, 40, 10000.0, (3, 7, 12), 5),
    (16, 64, 500.0, (2, 2, 9, 16), 31),
    (24, 100, 10000.0, (1, 30, 24), 70),  # offset + T == max_len
    (6, 10, 10000.0, (4, 1, 6), 9),  # one new token at the end of the table
]
# (dtype, x shape, offset)
# (dtype, x shape, offset); offset 0 so that these items judge the dtype and the device alone
# (the offset has its own item).
DTYPE_CASES = [("float64", (2, 5, 12), 0), ("float16", (2, 5, 12), 0),
               ("bfloat16", (2, 5, 12), 0), ("float16", (3, 12), 0)]
DEVICE_CASES = [("float32", (2, 5, 12), 0), ("bfloat16", (5, 12), 0)]


def inputs() -> dict[str, np.ndarray]:
    """The hidden input arrays (float32; cast to each case's dtype in the child)."""
    rng = np.random.default_rng(1701)
    arrays = {}
    for index, (_, _, _, shape, _) in enumerate(MODULE_CASES):
        arrays[f"m{index}"] = rng.standard_normal(shape).astype(np.float32)
    for index, (_, shape, _) in enumerate(DTYPE_CASES):
        arrays[f"t{index}"] = rng.standard_normal(shape).astype(np.float32)
    for index, (_, shape, _) in enumerate(DEVICE_CASES):
        arrays[f"v{index}"] = rng.standard_normal(shape).astype(np.float32)
    return arrays


DEFAULTS = {"base": 10000.0, "offset": 0}


def _module_case(d: int, max_len: int, base: float, key: str, dtype: str, offset: int) -> Case:
    return Case("module", "SinusoidalPositionalEncoding", (Input(key, dtype),),
                non_default(DEFAULTS, offset=offset), init_args=(d,),
                init_kwargs=non_default(DEFAULTS, max_len=max_len, base=base))


GROUPS = (
    Group("pe", MODULE, tuple(Case("function", "sinusoidal_pe", (T, d),
                                   non_default(DEFAULTS, base=b)) for T, d, b in PE_CASES)),
    Group("module", MODULE, tuple(_module_case(d, m, b, f"m{i}", "float32", off)
                                  for i, (d, m, b, _, off) in enumerate(MODULE_CASES))),
    Group("module_dtypes", MODULE, tuple(_module_case(12, 40, 10000.0, f"t{i}", dt, off)
                                         for i, (dt, _, off) in enumerate(DTYPE_CASES))),
    Group("module_device", MODULE, tuple(_module_case(12, 40, 10000.0, f"v{i}", dt, off)
                                         for i, (dt, _, off) in enumerate(DEVICE_CASES)),
          device=True),
)


# --- the formula, for the offset diagnoses (the table's mistakes come from the catalogue) --------

def table(T: int, d: int, base: float, *, start: int = 0) -> np.ndarray:
    """The sinusoidal table from its formula (float64), rows ``start .. start+T-1``."""
    pairs = np.arange(d // 2)
    angles = np.arange(start, start + T, dtype=np.float64)[:, None] * base ** (-2 * pairs / d)
    out = np.empty((T, 2 * len(pairs)))
    out[:, 0::2], out[:, 1::2] = np.sin(angles), np.cos(angles)
    return out


# --- judges ------------------------------------------------------------------------------------

ITEMS = Items()


@ITEMS.judge("pe.values", 3, "sinusoidal_pe: valores en casos ocultos",
             "sinusoidal_pe: values on hidden cases", group="pe")
def judge_pe_values(ctx: JudgeContext):
    checks, _, diagnoses = judged_cases(ctx, JudgeContext.compare, VALUE_CASES, tol=TABLE_TOL,
                                        check_dtype=False, check_kind=False)
    notes = []
    long_check = checks[max(VALUE_CASES, key=lambda k: PE_CASES[k][0])]  # VALUE_CASES: 0, 1, …
    if long_check.ok and long_check.max_err is not None and long_check.max_err > 2e-5:
        notes.append(Finding(
            "float32-angles",
            "Nota: tus ángulos parecen calculados en float32. Se acepta, pero el error crece con "
            "la posición (cerca de 1e-4 en p = 1000); calcúlalos en float64 y convierte al final.",
            "Note: your angles look computed in float32. That is accepted, but the error grows "
            "with the position (about 1e-4 at p = 1000); compute them in float64 and convert at "
            "the end.", scoring=False))
    return ctx.verdict(checks, diagnoses=diagnoses, notes=notes)


@ITEMS.judge("pe.dtype", 1, "sinusoidal_pe: tipo, dtype y forma",
             "sinusoidal_pe: type, dtype and shape", group="pe")
def judge_pe_dtype(ctx: JudgeContext):
    checks = [ctx.compare(k, values=False) for k in range(len(PE_CASES))]
    outs = [out for k in range(len(PE_CASES)) if (out := ctx.out(k)) is not None]
    broken = ["returns-tensor" if o.get("kind") == "tensor" else "float64-output" for o in outs
              if o.get("kind") == "tensor" or o.get("dtype") == "float64"]  # the first one said
    return ctx.verdict(checks, diagnoses=[contract("sinusoidal_pe", c) for c in broken[:1]],
                       expected_dtype="float32", got_dtypes=[o.get("dtype", "?") for o in outs])


LAWS = {
    "bounded": ("hay valores fuera de [−1, 1]", "some values lie outside [−1, 1]"),
    "unit-pairs": ("las parejas de columnas (2i, 2i+1) no cumplen sin² + cos² = 1",
                   "the column pairs (2i, 2i+1) do not satisfy sin² + cos² = 1"),
    "first-row": ("la fila de la posición 0 no es [0, 1, 0, 1, …]",
                  "the row of position 0 is not [0, 1, 0, 1, …]"),
    "rotation": ("desplazar k posiciones no es una rotación de cada pareja: "
                 "PE(p + k) ≠ M(k)·PE(p)",
                 "shifting by k positions is not a rotation of each pair: PE(p + k) ≠ M(k)·PE(p)"),
}


def shift_matrix(k: int, d: int, base: float) -> np.ndarray:
    """M(k) with PE(p + k) = M(k) PE(p) for the interleaved table (the lesson's rotation)."""
    omega = base ** (-np.arange(0, d, 2) / d)
    c, s = np.cos(k * omega), np.sin(k * omega)
    m = np.zeros((d, d))
    m[0::2, 0::2], m[0::2, 1::2] = np.diag(c), np.diag(s)
    m[1::2, 0::2], m[1::2, 1::2] = np.diag(-s), np.diag(c)
    return m


def laws(student: np.ndarray, d: int, base: float) -> dict[str, bool]:
    """The table's laws, checked on the student's own output (no reference involved)."""
    sin, cos = student[:, 0::2], student[:, 1::2]
    rotation = all(
        np.allclose(student[k:], student[:-k] @ shift_matrix(k, d, base).T, atol=5e-4)
        for k in (1, 7)
    )
    return {
        "bounded": bool(np.all(np.abs(student) <= 1 + 1e-6)),
        "unit-pairs": bool(np.allclose(sin**2 + cos**2, 1.0, atol=1e-4)),
        "first-row": bool(np.allclose(sin[0], 0, atol=1e-6) and np.allclose(cos[0], 1,
                                                                             atol=1e-6)),
        "rotation": bool(rotation),
    }


@ITEMS.judge("pe.laws", 1, "sinusoidal_pe: propiedades (rotación, normas, PE(0))",
             "sinusoidal_pe: properties (rotation, norms, PE(0))", group="pe")
def judge_pe_properties(ctx: JudgeContext):
    """A case passes when every law holds on the student's table (a table of zeros is bounded
    and "rotates", but it is not a sinusoidal table)."""
    checks, broken = [], set()
    for k in LAW_CASES:
        T, d, base = PE_CASES[k]
        got = student(ctx, k)
        if got is None or got.shape != (T, d):
            reason = "error" if ctx.error(k) else ("shape" if got is not None else "missing")
            checks.append(Check(False, reason, error=ctx.error(k)))
            continue
        held = laws(got, d, base)
        broken |= {name for name, ok in held.items() if not ok}
        checks.append(Check(all(held.values()), "" if all(held.values()) else "law"))
    diagnoses = [Finding(f"law-{name}", f"Propiedad: {LAWS[name][0]}.",
                         f"Property: {LAWS[name][1]}.") for name in LAWS if name in broken]
    return ctx.verdict(checks, diagnoses=diagnoses)


def _off_by_one(ctx: JudgeContext, k: int) -> bool:
    """Module case ``k`` has an offset, and forward added rows ``offset ± 1 …`` to every
    sequence."""
    d, _, base, shape, offset = MODULE_CASES[k]
    got, x = student(ctx, k), ctx.inputs[f"m{k}"]
    if not offset or got is None or got.shape != x.shape:
        return False
    added = (got - x.astype(np.float64)).reshape(-1, shape[-2], d)
    return all(np.allclose(a, added[0], atol=1e-3) for a in added) and any(
        np.allclose(added[0], table(shape[-2], d, base, start=offset + s), atol=1e-3)
        for s in (-1, 1))


@ITEMS.judge("module.values", 2, "SinusoidalPositionalEncoding: valores con offset",
             "SinusoidalPositionalEncoding: values with offset", group="module")
def judge_module_values(ctx: JudgeContext):
    """forward's own mistakes (the catalogue's, such as the offset ignored) first, then an offset
    off by one, then the table's mistakes, which the rows forward adds inherit."""
    checks, failing, named = judged_cases(ctx, JudgeContext.compare, tolerances=SUM_TOLERANCES)
    own = {m["code"].split(".", 1)[1] for m in ctx.mistakes if m["target"].endswith(".forward")}
    if diagnoses := [f for f in named if f.code in own]:
        return ctx.verdict(checks, diagnoses=diagnoses)
    if failing and all(_off_by_one(ctx, k) for k in failing):  # either way: offset ± 1
        return ctx.verdict(checks, diagnoses=ctx.catalogue_finding("sinusoidal.offset-off-by-one"))
    return ctx.verdict(checks, diagnoses=[Finding(
        f"module-{f.code}", "Las filas que suma forward heredan un error de la tabla. " + f.es,
        "The rows forward adds inherit a mistake of the table. " + f.en) for f in named])


@ITEMS.judge("module.dtype", 1, "SinusoidalPositionalEncoding: conserva el dtype",
             "SinusoidalPositionalEncoding: keeps the dtype", group="module_dtypes")
def judge_module_dtype(ctx: JudgeContext):
    checks = carry_forward(ctx, [ctx.compare(k, tolerances=SUM_TOLERANCES)
                                 for k in range(len(DTYPE_CASES))], own=True)
    return ctx.verdict(checks, diagnoses=dtype_not_kept(
        ctx, "SinusoidalPositionalEncoding.forward", [dtype for dtype, _, _ in DTYPE_CASES]))


ITEMS.add("module.device", 1, "SinusoidalPositionalEncoding: conserva el dispositivo",
          "SinusoidalPositionalEncoding: keeps the device", device_judge(
    "forward usa tensores de la CPU aunque x esté en otro dispositivo (se comprueba con el "
    "dispositivo «meta» de PyTorch, que imita una GPU sin tenerla). Mueve las filas con "
    ".to(device=x.device) y crea cualquier tensor nuevo en x.device.",
    "forward uses CPU tensors even when x lives on another device (checked with PyTorch's "
    "'meta' device, which stands in for a GPU). Move the rows with .to(device=x.device) and "
    "create any new tensor on x.device.", tolerances=SUM_TOLERANCES), group="module_device")


# --- the notebook --------------------------------------------------------------------------------

def _offset_mishandled(ctx, ok):
    """Right without an offset, wrong with every one: the module mishandles ``offset``."""
    with_offset = ("chunked", "rows", "hidden")
    if ok["full"] and not any(ok[n] for n in with_offset) and \
            all(ctx.out(n) is not None for n in with_offset):
        return [("nb-offset",
                 "Sin offset el módulo da lo esperado, pero con offset no: los trozos de la celda "
                 "«module-offset» no coinciden con la secuencia entera. Revisa qué filas de la "
                 "tabla suma forward.",
                 "Without an offset the module gives the expected values, but not with one: the "
                 "chunks of cell 'module-offset' do not match the whole sequence. Check which "
                 "rows of the table forward adds.")]
    return []


def _transposed(ctx, ok):
    """Every failing value is the transpose of the reference's."""
    failing = [n for n in ctx.cell.records if not ok[n]]
    flipped = [n for n in failing if (a := student(ctx, n)) is not None and a.ndim == 2 and
               (r := ref(ctx, n)) is not None and a.shape == r.shape[::-1] and
               np.allclose(a, r.T, atol=1e-5)]
    if failing and len(flipped) == len(failing):
        return [("transposed",
                 "shift_matrix devuelve la traspuesta: M(Δ)ᵀ = M(−Δ) desplaza hacia atrás. Revisa "
                 "el signo de los senos: la fila del seno lleva (cos Δω, sin Δω) y la del coseno "
                 "(−sin Δω, cos Δω).",
                 "shift_matrix returns the transpose: M(Δ)ᵀ = M(−Δ) shifts backwards. Check the "
                 "signs of the sines: the sine row holds (cos Δω, sin Δω) and the cosine row "
                 "(−sin Δω, cos Δω).")]
    return []


# The notebook's given cells that the records use, recreated when the references are built so
# that each classic mistake of sinusoidal.py is run through them: a record that holds what a
# mistake of the module gives is the notebook run right on top of it (error carried forward,
# grader.hidden.cells), and costs nothing here: test-table and test-module only run the module,
# which the module items grade.
GIVEN = """
pe = sinusoidal_pe(64, 32)
pe_long = sinusoidal_pe(256, 64)
dots = pe_long.astype(np.float64) @ pe_long[0].astype(np.float64)
closed_form = np.cos(np.arange(256)[:, None] * 10000.0 ** (-np.arange(0, 64, 2) / 64)).sum(axis=1)
torch.manual_seed(0)
encoder = SinusoidalPositionalEncoding(d_model=32, max_len=128)
x = torch.randn(2, 10, 32)
full = encoder(x)
chunked = torch.cat([encoder(x[:, :6]), encoder(x[:, 6:9], offset=6),
                     encoder(x[:, 9:], offset=9)], dim=1)
"""

CELLS = (
    CellCheck("test-table", "Cuaderno: la tabla", "Notebook: the table",
              {"pe": "pe", "small": "sinusoidal_pe(6, 10, base=300.0)"},
              cell_judge(tol=TABLE_TOL), catalogue=MODULE, given=GIVEN),
    CellCheck("test-shift", "Cuaderno: el desplazamiento es una rotación",
              "Notebook: a shift is a rotation",
              {"M": "M", "a": "shift_matrix(9, 10, base=30.0)",
               "b": "shift_matrix(2, 14)", "c": "shift_matrix(11, 10)",
               "composed": "shift_matrix(2, 10) @ shift_matrix(9, 10)"},
              cell_judge(tol=Tolerance(1e-6, 1e-6), diagnoses=(_transposed,))),
    CellCheck("test-dots", "Cuaderno: el producto escalar", "Notebook: the dot product",
              {"dots": "dots", "closed_form": "closed_form"},
              cell_judge(tol=Tolerance(1e-5, 2e-3)), catalogue=MODULE, given=GIVEN),
    CellCheck("test-module", "Cuaderno: el módulo y el offset",
              "Notebook: the module and the offset",
              {"chunked": "chunked", "full": "full",
               "bf16": "encoder(x.to(torch.bfloat16)).dtype",
               "rows": "encoder(torch.zeros(1, 3, 32), offset=4)[0]",
               "hidden": "SinusoidalPositionalEncoding(d_model=10, max_len=30, base=60.0)"
                         "(torch.zeros(2, 4, 10, dtype=torch.float64), offset=13)"},
              cell_judge(tolerances=SUM_TOLERANCES, diagnoses=(_offset_mishandled,)),
              catalogue=MODULE, given=GIVEN),
)

CHECKS = LabChecks(
    lab_id="17.01", inputs=inputs, groups=GROUPS, items=ITEMS, cells=CELLS, questions=(
        ("por qué oscila el producto escalar", "why the dot product oscillates"),
        ("pesos de la disposición concatenada", "weights from the concatenated layout")))
