"""Hidden checks of lab 18.02 (RoPE scaling for long context).

Graded from ``src/minimodel/positional/scaling.py`` (12 points, 1 of them for YaRN and Llama 3
called with a Hugging Face config's ``rope_parameters``, part 5 of the notebook, computed in the
sandbox from the module: it checks the numbers transformers gives, so a YaRN or Llama 3 mistake
costs there too) and the lab notebook (its two
auto-graded cells, 5 points; the written answers are graded by hand). Every method returns
``(inv_freq, attention_factor)``. Hidden inputs: other rotated widths (2 … 96), bases (10 … 10^6)
and factors (1, 2.5, 7, 32, integer and float); dynamic NTK below, at, just past and far past the
original length, and with ``seq_len=None``; YaRN's range with both ends clamped (including the
``+0.001`` nudge when they meet), unrounded, with other betas, and YaRN's ramp on those boundaries,
with ``truncate=False``, a given ``attention_factor`` and ``factor=1``; Llama 3 with other band
factors and ``factor=1``; LongRoPE (2 points: frequencies, attention factor) on a
Phi-3-mini-128k-shaped model (48 pairs, ``L0 = 4096``, ``s = 32``) below, at and past ``L0``, on
smaller ones with one set of factors or none, a given attention factor and ``s = 1``; unused
arguments passed. Tolerances: ``inv_freq`` the float32 defaults;
the attention factor and YaRN's range as float64 (the factor may be a Python int or float, not a
tensor).

Each method calls ``rope_frequencies`` of the student's own rope.py: every group also probes it
(through scaling's namespace) on the bases the method uses, and ``grader.hidden.depends`` applies
the policy for failures that come from rope.py.

Known mistakes diagnosed: those of the values, from the catalogue ``solutions/mistakes/scaling.py``
(linear scaling multiplying by ``s``; NTK's base without the exponent ``r/(r-2)``, with it upside
down, or frequencies divided instead; dynamic NTK with the scale ``L/L0``, static, changing the
base below ``L0``, without the exponent; YaRN's range not rounded outwards (or rounded when
``truncate=False``), with the ends swapped, not clamped, or without the ``2π``; YaRN's ramp
reversed, every pair divided, measured on ``s·L0``, ``truncate`` not passed on; YaRN's attention
factor squared, its square root, ``log10``, or the given one ignored; Llama 3's bands or the
blend's weights swapped; LongRoPE switching to its long factors at ``s·L0`` or already at ``L0``,
multiplying by the factors, its attention factor forgotten or YaRN's); float64 tables and tensor
attention factors.

Notebook: ``test-ratios`` records every method's ratios at 4 L0, dynamic NTK's at L0 and 2 L0
and the unseen-pair masks, visible and hidden (exact, the ratios within 1e-6); diagnosed: ratios
upside down (θ/θ'), the boundary ``c_i = 1`` counted as unseen, the slow-pair condition left out
or reversed. ``test-with-scaling`` records the copies' frequencies, configuration, weights and
mode (exact) and, since the model is trained, the largest logit differences of the plain,
dynamic-NTK and linear copies from the model itself, judged by property (equal within 1e-5;
different); diagnosed: the model changed in place, weights not copied, ``L0`` not set, the copy
left in training mode.
"""

from __future__ import annotations

import math

import numpy as np

from grader.hidden import depends
from grader.hidden.carried import carry_forward
from grader.hidden.cells import EXACT, Mistake, Property, cell_judge, value
from grader.hidden.common import contract, judged_cases, resembles, scalar, student, whole_case
from grader.hidden.spec import Case, CellCheck, Group, Items, LabChecks, non_default
from grader.trusted.verdicts import Check, Finding, JudgeContext, Tolerance

MODULE = "scaling"
FACTOR_TOL = Tolerance(1e-7, 1e-9)
FREQ_TOL = Tolerance(1e-5, 1e-6)

# (r, base, factor, extra kwargs)
LINEAR_CASES = [(6, 500.0, 3.0, {}), (2, 10000.0, 1.0, {}),
                (64, 1e6, 2.5, {"original_max_len": 100, "seq_len": 5000}), (10, 10000.0, 7, {})]
NTK_CASES = [(4, 10000.0, 2.0), (6, 500.0, 3.0), (96, 500000.0, 8.0), (32, 10000.0, 1.0)]
# (r, base, factor, original_max_len, seq_len)
DYNAMIC_CASES = [(16, 10000.0, 2.0, 100, 100), (16, 10000.0, 2.0, 100, 80),
                 (16, 10000.0, 2.0, 100, None), (16, 10000.0, 2.0, 100, 101),
                 (64, 500000.0, 4.0, 2048, 10000), (6, 500.0, 1.0, 50, 200)]
# (r, base, original_max_len, beta_fast, beta_slow, truncate)
RANGE_CASES = [(96, 500000.0, 8192, 32.0, 1.0, True), (64, 10000.0, 2048, 32.0, 1.0, False),
               (32, 10000.0, 100, 32.0, 1.0, True), (8, 100.0, 400000, 32.0, 1.0, True),
               (48, 10000.0, 4096, 16.0, 2.0, False), (8, 10000.0, 2, 32.0, 1.0, True),
               (20, 50.0, 3000, 32.0, 1.0, True)]
# (r, base, factor, original_max_len, extra kwargs)
YARN_CASES = [(96, 500000.0, 8.0, 8192, {}), (32, 10000.0, 4.0, 100, {}),
              (64, 10000.0, 16.0, 2048, {"truncate": False}),
              (48, 10000.0, 2.5, 4096, {"beta_fast": 16.0, "beta_slow": 2.0}),
              (16, 10000.0, 1.0, 512, {}), (32, 10000.0, 4.0, 256, {"attention_factor": 1.3}),
              (8, 100.0, 4.0, 400000, {}), (24, 10000.0, 3.0, 1024, {"seq_len": 9999})]
# (r, base, factor, original_max_len, low_freq_factor, high_freq_factor); None: the default
LLAMA_CASES = [(96, 500000.0, 8.0, 8192, None, None), (48, 10000.0, 4.0, 512, 1.5, 6.0),
               (16, 10000.0, 2.0, 64, None, None), (64, 500000.0, 32.0, 2048, 1.0, 4.0),
               (32, 10000.0, 1.0, 256, None, None)]


def _rising(pairs: int, low: float, high: float, power: float) -> list[float]:
    """``pairs`` factors rising from ``low`` (pair 0) to ``high`` (the slowest pair), as a search
    with LongRoPE's non-decreasing constraint gives them."""
    return [round(low + (high - low) * (i / max(pairs - 1, 1)) ** power, 4) for i in range(pairs)]


PHI3 = {"short_factor": _rising(48, 1.0, 2.5, 2.0), "long_factor": _rising(48, 1.0, 40.0, 3.0)}
# (r, base, factor, original_max_len, seq_len, extra kwargs): a Phi-3-mini-128k-shaped model
# (48 pairs, L0 = 4096, s = 32) past, at and below L0; factors as lists and tuples; only one of
# the two sets; no factors (past L0: YaRN's); a given attention factor; s = 1.
LONGROPE_CASES = [
    (96, 10000.0, 32.0, 4096, 8192, PHI3), (96, 10000.0, 32.0, 4096, 4096, PHI3),
    (96, 10000.0, 32.0, 4096, None, PHI3),
    (32, 500.0, 4.0, 100, 1000, {"short_factor": _rising(16, 1.0, 1.5, 1.0),
                                 "long_factor": tuple(_rising(16, 1.2, 6.0, 2.0))}),
    (16, 10000.0, 8.0, 64, 65, {"long_factor": _rising(8, 1.0, 9.0, 1.5)}),
    (16, 10000.0, 8.0, 64, 30, {"long_factor": _rising(8, 1.0, 9.0, 1.5)}),
    (24, 10000.0, 4.0, 256, 2048, {}),
    (32, 10000.0, 4.0, 128, 300, {"short_factor": _rising(16, 1.0, 1.3, 2.0),
                                  "long_factor": _rising(16, 1.0, 5.0, 2.0),
                                  "attention_factor": 1.25}),
    (8, 10000.0, 1.0, 512, 1024, {"long_factor": (1.0, 1.5, 2.0, 2.0)}),
    (64, 1e6, 16.0, 2048, None, {}),
]
# the cases whose frequencies are yarn_scaling's (past L0 with no long_factor)
LONGROPE_YARN = [k for k, (*_, L0, n, kw) in enumerate(LONGROPE_CASES)
                 if n is not None and n > L0 and kw.get("long_factor") is None]
# (head_dim, a Hugging Face config's rope_parameters): Llama 3.2's (Llama 3.1's is the
# self-check's, which students see), a long-context YaRN model's, and smaller ones with the other
# options. The reference gives transformers' own numbers on them (ROPE_INIT_FUNCTIONS;
# tests/model/test_hf_llama.py).
HF_CASES = [
    (64, {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0,
          "original_max_position_embeddings": 8192, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0}),
    (64, {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 4.0,
          "original_max_position_embeddings": 256, "low_freq_factor": 2.0,
          "high_freq_factor": 8.0}),
    (128, {"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 4.0,
           "original_max_position_embeddings": 32768}),
    (32, {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 8.0,
          "original_max_position_embeddings": 64, "beta_fast": 16.0, "beta_slow": 2.0,
          "truncate": False}),
]


def ntk_base(r: int, base: float, factor: float) -> float:
    return base * factor ** (r / (r - 2))


def dynamic_base(r, base, factor, original, seq_len) -> float:
    if seq_len is None or seq_len <= original:
        return base
    return base * (factor * seq_len / original - (factor - 1)) ** (r / (r - 2))


def _probe(r: int, base: float) -> Case:
    """rope.py's rope_frequencies, called through scaling's namespace as the method calls it."""
    return Case("function", "rope_frequencies", (r, base))


def inputs() -> dict[str, np.ndarray]:
    return {"none": np.zeros(1)}  # every argument is a number


GROUPS = (
    Group("linear", MODULE, tuple(
        Case("function", "linear_scaling", (r, b), {"factor": s, **kw})
        for r, b, s, kw in LINEAR_CASES) + tuple(_probe(r, b) for r, b, _, _ in LINEAR_CASES)),
    Group("ntk", MODULE, tuple(
        Case("function", "ntk_scaling", (r, b), {"factor": s}) for r, b, s in NTK_CASES)
        + tuple(_probe(r, ntk_base(r, b, s)) for r, b, s in NTK_CASES)),
    Group("dynamic", MODULE, tuple(
        Case("function", "dynamic_ntk_scaling", (r, b),
             non_default({}, factor=s, original_max_len=L0, seq_len=n))
        for r, b, s, L0, n in DYNAMIC_CASES) + tuple(
        _probe(r, dynamic_base(r, b, s, L0, n)) for r, b, s, L0, n in DYNAMIC_CASES)),
    Group("range", MODULE, tuple(
        Case("function", "yarn_correction_range", (r, b, L0, bf, bs),
             {} if truncate else {"truncate": False})
        for r, b, L0, bf, bs, truncate in RANGE_CASES)),
    Group("yarn", MODULE, tuple(
        Case("function", "yarn_scaling", (r, b), {"factor": s, "original_max_len": L0, **kw})
        for r, b, s, L0, kw in YARN_CASES) + tuple(_probe(r, b) for r, b, *_ in YARN_CASES)
        + tuple(  # the student's yarn_correction_range as yarn_scaling calls it
            Case("function", "yarn_correction_range",
                 (r, b, L0, kw.get("beta_fast", 32.0), kw.get("beta_slow", 1.0)),
                 {"truncate": kw.get("truncate", True)}) for r, b, _, L0, kw in YARN_CASES)),
    Group("llama3", MODULE, tuple(
        Case("function", "llama3_scaling", (r, b), non_default(
            {}, factor=s, original_max_len=L0, low_freq_factor=lo, high_freq_factor=hi))
        for r, b, s, L0, lo, hi in LLAMA_CASES) + tuple(
        _probe(r, b) for r, b, *_ in LLAMA_CASES)),
    Group("longrope", MODULE, tuple(
        Case("function", "longrope_scaling", (r, b), non_default(
            {}, factor=s, original_max_len=L0, seq_len=n, **kw))
        for r, b, s, L0, n, kw in LONGROPE_CASES) + tuple(
        _probe(r, b) for r, b, *_ in LONGROPE_CASES) + tuple(
        # the student's yarn_scaling, as longrope_scaling calls it without long factors
        Case("function", "yarn_scaling", (LONGROPE_CASES[k][0], LONGROPE_CASES[k][1]),
             {"factor": LONGROPE_CASES[k][2], "original_max_len": LONGROPE_CASES[k][3]})
        for k in LONGROPE_YARN)),
    Group("hf_config", MODULE, tuple(
        Case("given", "minimodel.hf_llama.scaling_from_rope_parameters", (params, r))
        for r, params in HF_CASES) + tuple(_probe(r, p["rope_theta"]) for r, p in HF_CASES)
        + tuple(  # the student's yarn_correction_range as YaRN calls it
            Case("function", "yarn_correction_range",
                 (r, p["rope_theta"], p["original_max_position_embeddings"],
                  p.get("beta_fast", 32.0), p.get("beta_slow", 1.0)),
                 {"truncate": p.get("truncate", True)}) for r, p in HF_CASES)),
)


# --- what a method gives on the student's own rope.py frequencies (parent side, float64) --------

def llama3(thetas, factor, original, low=1.0, high=4.0) -> np.ndarray:
    wavelength = 2 * math.pi / thetas
    short, long = original / high, original / low
    w = (original / wavelength - low) / (high - low)
    blended = (1 - w) * thetas / factor + w * thetas
    return np.where(wavelength < short, thetas, np.where(wavelength > long, thetas / factor,
                                                         blended))


# --- judging ------------------------------------------------------------------------------------

def _freq_check(ctx: JudgeContext, k: int) -> Check:
    return ctx.compare(k, 0, tol=FREQ_TOL)


def _factor_check(ctx: JudgeContext, k: int) -> Check:
    return ctx.compare(k, 1, tol=FACTOR_TOL, check_dtype=False)


def _of_pair(ctx: JudgeContext, k: int, check: Check) -> Check:
    """``check`` of case ``k``, or ``"shape"`` when the case did not return two outputs."""
    outputs = ctx.run.outputs(k)
    return Check(False, "shape") if outputs is not None and len(outputs) != 2 else check


def _pair_check(ctx: JudgeContext, k: int) -> Check:
    """Both outputs of case ``k``: the table (float32) and the attention factor (a number)."""
    freq = _freq_check(ctx, k)
    return _of_pair(ctx, k, freq if not freq.ok else _factor_check(ctx, k))


def contract_findings(ctx: JudgeContext, n: int, *, factor: bool = True) -> list[Finding]:
    """Diagnoses of the return contract: float32 table, Python number for the factor."""
    found = []
    outs = [ctx.run.outputs(k) or [] for k in range(n)]
    if any(len(o) != 2 for o in outs if o):
        found.append(contract(MODULE, "not-a-pair"))
    elif any(o and o[0].get("dtype") == "float64" for o in outs):
        found.append(contract(MODULE, "float64-output"))
    if factor and any(len(o) == 2 and o[1].get("kind") != "scalar" for o in outs):
        found.append(contract(MODULE, "factor-type"))
    return found


def _split(ctx: JudgeContext, checks: list[Check], function: str, composed):
    """depends.split_rope_failures with case ``k``'s rope_frequencies probe at ``n + k``."""
    n = len(checks)
    return depends.split_rope_failures(
        ctx, checks, function=function, uses=("rope_frequencies", "rope_frequencies"),
        probes=lambda k: [n + k], composed=composed)


def rope_judge(cases: list, function: str, compose=lambda k, thetas: thetas, extra=None, *,
               carried: bool = False):
    """The usual judge of a method: both outputs of each case; failures rope.py explains
    (``compose(k, thetas)``: the table the method gives on rope.py's ``thetas``) are split off,
    the rest are matched against the catalogue's mistakes (and ``extra(ctx, failing, named)``).
    ``carried``: the cases that are exactly a catalogue mistake of a function the method runs
    (one the group calls directly, or one reached through the given code, such as yarn_scaling
    through ``SCALINGS``), shown in that function's own item, pass (``carry_forward(own=True)``)."""
    n = len(cases)

    def judge(ctx: JudgeContext):
        checks, rope_findings, notes, failing = _split(
            ctx, [_pair_check(ctx, k) for k in range(n)], function,
            lambda k: _factor_check(ctx, k).ok and (thetas := student(ctx, n + k)) is not None
            and resembles(student(ctx, k), compose(k, thetas), FREQ_TOL))
        if carried:
            checks = carry_forward(ctx, checks, own=True)
            failing = [k for k in failing if not checks[k].ok]
        diagnoses = ctx.named_mistakes(failing)
        if extra is not None:
            diagnoses += extra(ctx, failing, diagnoses)
        diagnoses += contract_findings(ctx, n)
        return depends.verdict(ctx, checks, diagnoses, rope_findings, notes)

    return judge


def _below_original(ctx: JudgeContext, failing: list[int], names: list[Finding]):
    """Computing the scale below L0 can also raise (a negative scale): what fails is only the
    cases at or below L0, and every case past it passes."""
    short = [k for k, (*_, L0, n) in enumerate(DYNAMIC_CASES) if n is None or n <= L0]
    if names or not failing or not set(failing) <= set(short):
        return []
    return ctx.catalogue_finding(f"{MODULE}.below-original")


ITEMS = Items()
ITEMS.add("linear", 1, "linear_scaling: θ/s (usa rope.py)", "linear_scaling: θ/s (uses rope.py)",
          rope_judge(LINEAR_CASES, "linear_scaling", lambda k, t: t / LINEAR_CASES[k][2]))
ITEMS.add("ntk", 1, "ntk_scaling: base b·s^(r/(r−2)) (usa rope.py)",
          "ntk_scaling: base b·s^(r/(r−2)) (uses rope.py)", rope_judge(NTK_CASES, "ntk_scaling"))
ITEMS.add("dynamic_ntk", 2, "dynamic_ntk_scaling: antes, en y después de L0 (usa rope.py)",
          "dynamic_ntk_scaling: below, at and past L0 (uses rope.py)",
          rope_judge(DYNAMIC_CASES, "dynamic_ntk_scaling", extra=_below_original),
          group="dynamic")


def _student_range(ctx: JudgeContext, index: int) -> tuple[float, float] | None:
    """The two ends the student's yarn_correction_range returned (``None`` unless it returned
    exactly two numbers)."""
    ends = (scalar(ctx, index, 0), scalar(ctx, index, 1))
    return None if len(ctx.run.outputs(index) or ()) != 2 or None in ends else ends


def _range_case(ctx: JudgeContext, k: int) -> Check:
    parts = [ctx.compare(k, p, tol=FACTOR_TOL, check_dtype=False) for p in (0, 1)]
    return _of_pair(ctx, k, next((c for c in parts if not c.ok), parts[0]))


@ITEMS.judge("yarn_range", 1, "yarn_correction_range: extremos, redondeo y recorte",
             "yarn_correction_range: ends, rounding and clamping", group="range")
def judge_range(ctx: JudgeContext):
    checks, _, diagnoses = judged_cases(ctx, _range_case)
    return ctx.verdict(checks, diagnoses=diagnoses + depends.import_findings(ctx))


@ITEMS.judge("yarn", 2, "yarn_scaling: la rampa entre θ y θ/s (usa rope.py)",
             "yarn_scaling: the ramp between θ and θ/s (uses rope.py)")
def judge_yarn(ctx: JudgeContext):
    n = len(YARN_CASES)
    checks = [_freq_check(ctx, k) for k in range(n)]

    def on_own_parts(k):
        """Is case ``k`` what yarn_scaling gives on the student's own rope_frequencies and
        yarn_correction_range (both probed on case ``k``'s arguments)?"""
        thetas, ends = student(ctx, n + k), _student_range(ctx, 2 * n + k)
        if thetas is None or ends is None or ends[1] == ends[0]:
            return False
        ramp = np.clip((np.arange(YARN_CASES[k][0] // 2) - ends[0]) / (ends[1] - ends[0]), 0, 1)
        return resembles(student(ctx, k), thetas * (1 - ramp) + thetas / YARN_CASES[k][2] * ramp,
                         FREQ_TOL)

    # yarn_scaling right on top of the student's own (wrong) yarn_correction_range: the range
    # costs points in its own item only
    notes = []
    by_range = [k for k, c in enumerate(checks) if not c.ok and whole_case(ctx, n + k).ok
                and not _range_case(ctx, 2 * n + k).ok and on_own_parts(k)]
    for k in by_range:
        checks[k] = Check(True)
    if by_range:
        notes.append(Finding(
            "depends-on-range",
            f"Tu yarn_scaling usa bien tu yarn_correction_range, pero esa función no da los "
            f"extremos esperados (lo indica su propio apartado): en {len(by_range)} de {n} casos "
            "ocultos tu rampa es la que corresponde a tus extremos, así que aquí no resta.",
            f"Your yarn_scaling uses your yarn_correction_range correctly, but it does not give "
            f"the expected ends (its own item says so): in {len(by_range)} of {n} hidden cases "
            "your ramp is the one your ends lead to, so it costs nothing here.", scoring=False))
    checks, rope_findings, rope_notes, failing = _split(ctx, checks, "yarn_scaling", on_own_parts)
    notes += rope_notes
    diagnoses = ctx.named_mistakes(failing) + contract_findings(ctx, n, factor=False)
    return depends.verdict(ctx, checks, diagnoses, rope_findings, notes)


@ITEMS.judge("yarn_factor", 1, "yarn_scaling: factor de atención", "yarn_scaling: attention factor",
             group="yarn")
def judge_yarn_factor(ctx: JudgeContext):
    n = len(YARN_CASES)
    checks = [_of_pair(ctx, k, _factor_check(ctx, k)) for k in range(n)]
    checks, rope_findings, notes, failing = _split(ctx, checks, "yarn_scaling", lambda k: False)
    diagnoses = ctx.named_mistakes(failing)
    diagnoses += [f for f in contract_findings(ctx, n) if f.code == "factor-type"]
    return depends.verdict(ctx, checks, diagnoses, rope_findings, notes)


def _llama3(k: int, thetas: np.ndarray) -> np.ndarray:
    _, _, s, L0, lo, hi = LLAMA_CASES[k]
    return llama3(thetas, s, L0, 1.0 if lo is None else lo, 4.0 if hi is None else hi)


ITEMS.add("llama3", 1, "llama3_scaling: tres bandas de longitud de onda (usa rope.py)",
          "llama3_scaling: three wavelength bands (uses rope.py)",
          rope_judge(LLAMA_CASES, "llama3_scaling", _llama3))


@ITEMS.judge("hf_config", 1,
             "YaRN y Llama 3 con los rope_parameters de un Llama de Hugging Face (usa rope.py)",
             "YaRN and Llama 3 with a Hugging Face Llama's rope_parameters (uses rope.py)")
def judge_hf_config(ctx: JudgeContext):
    n = len(HF_CASES)

    def on_own_parts(k: int, thetas: np.ndarray) -> np.ndarray | None:
        """The table case ``k`` gives on the student's own rope.py frequencies (and, for YaRN,
        their own yarn_correction_range, probed at ``2n + k``)."""
        r, p = HF_CASES[k]
        if p["rope_type"] == "llama3":
            return llama3(thetas, p["factor"], p["original_max_position_embeddings"],
                          p["low_freq_factor"], p["high_freq_factor"])
        ends = _student_range(ctx, 2 * n + k)
        if ends is None or ends[1] == ends[0]:
            return None
        ramp = np.clip((np.arange(r // 2) - ends[0]) / (ends[1] - ends[0]), 0, 1)
        return thetas * (1 - ramp) + thetas / p["factor"] * ramp

    return rope_judge(HF_CASES, "yarn_scaling / llama3_scaling", on_own_parts, carried=True)(ctx)


def _longrope_factors(k: int, pairs: int) -> np.ndarray:
    """The factors case ``k`` of LONGROPE_CASES divides by (not for the YaRN cases)."""
    *_, L0, n, kw = LONGROPE_CASES[k]
    chosen = kw.get("long_factor") if n is not None and n > L0 else kw.get("short_factor")
    return np.ones(pairs) if chosen is None else np.asarray(chosen, dtype=np.float64)


@ITEMS.judge("longrope", 1, "longrope_scaling: factores por pareja, cortos o largos según L0 "
             "(usa rope.py)", "longrope_scaling: per-pair factors, short or long by L0 (uses "
             "rope.py)")
def judge_longrope(ctx: JudgeContext):
    n = len(LONGROPE_CASES)
    yarn_probe = {k: 2 * n + j for j, k in enumerate(LONGROPE_YARN)}
    checks = [_freq_check(ctx, k) for k in range(n)]

    def on_own_parts(k: int) -> bool:
        """Is case ``k`` what longrope_scaling gives on the student's own rope_frequencies (and,
        without long factors past L0, their own yarn_scaling)?"""
        if k in yarn_probe:
            return resembles(student(ctx, k), student(ctx, yarn_probe[k]), FREQ_TOL)
        thetas = student(ctx, n + k)
        if thetas is None or thetas.shape != _longrope_factors(k, thetas.size).shape:
            return False  # not one frequency per pair: nothing to build on
        return resembles(student(ctx, k), thetas / _longrope_factors(k, thetas.size), FREQ_TOL)

    # past L0 without long factors the frequencies are yarn_scaling's: a YaRN mistake costs
    # points in YaRN's items only
    notes = []
    by_yarn = [k for k in yarn_probe if not checks[k].ok and whole_case(ctx, n + k).ok
               and not _freq_check(ctx, yarn_probe[k]).ok and on_own_parts(k)]
    for k in by_yarn:
        checks[k] = Check(True)
    if by_yarn:
        notes.append(Finding(
            "depends-on-yarn",
            "Tu longrope_scaling usa bien tu yarn_scaling cuando no hay long_factor, pero esa "
            "función no da las frecuencias esperadas (lo indican sus propios apartados): aquí "
            "no resta.",
            "Your longrope_scaling uses your yarn_scaling correctly when there is no "
            "long_factor, but that function does not give the expected frequencies (its own "
            "items say so): it costs nothing here.", scoring=False))
    checks, rope_findings, rope_notes, failing = _split(ctx, checks, "longrope_scaling",
                                                        on_own_parts)
    notes += rope_notes
    diagnoses = ctx.named_mistakes(failing) + contract_findings(ctx, n, factor=False)
    return depends.verdict(ctx, checks, diagnoses, rope_findings, notes)


@ITEMS.judge("longrope_factor", 1, "longrope_scaling: factor de atención sqrt(1 + ln s / ln L0)",
             "longrope_scaling: attention factor sqrt(1 + ln s / ln L0)", group="longrope")
def judge_longrope_factor(ctx: JudgeContext):
    n = len(LONGROPE_CASES)
    checks = [_of_pair(ctx, k, _factor_check(ctx, k)) for k in range(n)]
    checks, rope_findings, notes, failing = _split(ctx, checks, "longrope_scaling",
                                                   lambda k: False)
    diagnoses = ctx.named_mistakes(failing)
    diagnoses += [f for f in contract_findings(ctx, n) if f.code == "factor-type"]
    return depends.verdict(ctx, checks, diagnoses, rope_findings, notes)


# --- the notebook --------------------------------------------------------------------------------

NB_L0, NB_PAIRS = 128, 16
_THETA = (10000.0 ** (-np.arange(0, 2 * NB_PAIRS, 2) / (2 * NB_PAIRS))).astype(np.float32)
NB_SLOW = NB_L0 * _THETA.astype(np.float64) / (2 * np.pi) < 1  # pairs 6 .. 15
RATIO_TOL = Tolerance(1e-6, 1e-9)
_NONE, _ALL = np.zeros(NB_PAIRS), np.ones(NB_PAIRS)

RATIO_MISTAKES = (
    Mistake("nb-inverted", lambda get: {"ratios": 1 / get("ref:ratios")},
            "Los cocientes están al revés: ρ_i = θ'_i / θ_i, la frecuencia nueva entre la "
            "original (entre 1/s y 1), no θ_i / θ'_i.",
            "The ratios are upside down: ρ_i = θ'_i / θ_i, the new frequency over the original "
            "one (between 1/s and 1), not θ_i / θ'_i.", RATIO_TOL),
    Mistake("nb-boundary", lambda get: {"unseen_hidden": np.stack([NB_SLOW] * 3)},
            "unseen_pairs cuenta como no vista una pareja con c_i = 1 exactamente (ρ = 1/s a s·L0 "
            "tokens, o RoPE sin escalar a L0): su ángulo máximo es el mismo que en el "
            "entrenamiento. La condición es c_i > 1 + 1e-6.",
            "unseen_pairs counts a pair with exactly c_i = 1 as unseen (ρ = 1/s at s·L0 tokens, "
            "or plain RoPE at L0): its largest angle is the same as in training. The condition "
            "is c_i > 1 + 1e-6.", EXACT),
    Mistake("nb-all-pairs", lambda get: {"unseen_hidden": np.stack([_NONE, _ALL, _NONE])},
            "unseen_pairs olvida que solo cuentan las parejas lentas (n_i < 1): las rápidas ya "
            "dieron vueltas completas en el entrenamiento y vieron todos los ángulos.",
            "unseen_pairs forgets that only the slow pairs (n_i < 1) count: the fast ones already "
            "turned full circles in training and saw every angle.", EXACT),
    Mistake("nb-fast-pairs", lambda get: {"unseen_hidden": np.stack([_NONE, ~NB_SLOW, _NONE])},
            "unseen_pairs toma las parejas rápidas (n_i > 1) en lugar de las lentas (n_i < 1).",
            "unseen_pairs takes the fast pairs (n_i > 1) instead of the slow ones (n_i < 1).",
            EXACT),
)


def _with_scaling_findings(ctx, ok: dict) -> list[Finding]:
    found = []
    state = value(ctx, "base_scaling")
    changed = not ok.get("base_freq", True) and ctx.out("base_freq") is not None
    if (isinstance(state, str) and state != "None 1.0") or changed:
        found.append(Finding(
            "nb-modified-model",
            "with_scaling cambia el modelo que recibe: crea una configuración nueva con "
            "dataclasses.replace y un GPT nuevo; model.config y sus frecuencias no se tocan.",
            "with_scaling changes the model it receives: build a new configuration with "
            "dataclasses.replace and a new GPT; model.config and its frequencies stay as they "
            "were."))
    weights = value(ctx, "same_weights")
    if weights is not None and not isinstance(weights, str) and weights.size == 1 and \
            float(weights) != 0.0:
        found.append(Finding(
            "nb-weights-not-copied",
            "La copia no tiene los pesos del modelo: carga model.state_dict() en el GPT nuevo "
            "(load_state_dict); las frecuencias no están en el state_dict y se calculan solas.",
            "The copy does not hold the model's weights: load model.state_dict() into the new "
            "GPT (load_state_dict); the frequencies are not in the state_dict and are computed "
            "on their own."))
    yarn = value(ctx, "yarn")
    if yarn is not None and not isinstance(yarn, str) and yarn.shape == (4,):
        if yarn[0] != NB_L0:
            found.append(Finding(
                "nb-original-length",
                "rope_original_max_len debe ser la longitud de entrenamiento del modelo "
                "(model.config.block_size): con ella se calculan el rango de YaRN y el NTK "
                "dinámico.",
                "rope_original_max_len must be the model's training length "
                "(model.config.block_size): YaRN's range and dynamic NTK are computed from it."))
        if yarn[3] == 1.0:
            found.append(Finding(
                "nb-train-mode",
                "La copia se queda en modo de entrenamiento: devuélvela con .eval().",
                "The copy stays in training mode: return it with .eval()."))
    return found


# The notebook's given cells (and its solved frequency_ratios and unseen_pairs) that
# test-ratios's records use, recreated when the references are built so that each classic
# mistake of scaling.py is run through them (through SCALINGS, as the notebook calls each
# method): a record that holds what a mistake of the module gives is the notebook's work done
# right on top of it (error carried forward, grader.hidden.cells), and costs nothing here: the
# module's items grade it.
GIVEN = """
ROTARY_DIM, BASE, L0 = 32, 10000.0, 128
SCALE = 4.0
METHODS = {"linear": {"factor": SCALE}, "ntk": {"factor": SCALE},
           "dynamic_ntk": {"factor": 1.0}, "yarn": {"factor": SCALE},
           "llama3": {"factor": SCALE}}
PLAIN = rope_frequencies(ROTARY_DIM, BASE).double()
TURNS = (L0 * PLAIN / (2 * np.pi)).numpy()


def frequency_ratios(length):
    ratios = {}
    for name, options in METHODS.items():
        inv_freq, _ = SCALINGS[name](ROTARY_DIM, BASE, original_max_len=L0, seq_len=length,
                                     **options)
        ratios[name] = (inv_freq.double() / PLAIN).numpy()
    return ratios


def unseen_pairs(ratio, length):
    return (TURNS < 1) & (length / L0 * ratio > 1 + 1e-6)


ratios = frequency_ratios(int(SCALE * L0))
unseen = {"none": unseen_pairs(np.ones(ROTARY_DIM // 2), int(SCALE * L0))}
unseen |= {name: unseen_pairs(ratio, int(SCALE * L0)) for name, ratio in ratios.items()}
"""

_PROBE = "torch.randint(1, data.vocab_size, (2, L0), generator=torch.Generator().manual_seed(0))"
GAP_PROPERTIES = (
    Property("nb-plain-differs", ("gaps",), lambda g: g.shape == (3,) and 0 <= g[0] <= 1e-5,
             "with_scaling(model, None) no da los mismos logits que el modelo.",
             "with_scaling(model, None) does not give the model's logits."),
    Property("nb-dynamic-differs", ("gaps",), lambda g: g.shape == (3,) and 0 <= g[1] <= 1e-5,
             "El NTK dinámico con factor 1 debe dar los mismos logits que el modelo hasta L0.",
             "Dynamic NTK with factor 1 must give the model's logits up to L0."),
    Property("nb-linear-same", ("gaps",), lambda g: g.shape == (3,) and g[2] > 1e-6,
             "La interpolación lineal no cambia los logits: ¿la copia usa el escalado pedido?",
             "Linear interpolation does not change the logits: does the copy use the scaling "
             "it was asked for?"),
)

CELLS = (
    CellCheck("test-ratios", "Cuaderno: los cocientes de frecuencia y las parejas no vistas",
              "Notebook: the frequency ratios and the unseen pairs",
              {"methods": "' '.join(sorted(map(str, ratios)))",
               "ratios": "np.stack([np.asarray(ratios[m], dtype=np.float64) "
                         "for m in METHODS])",
               "dyn_L0": "np.asarray(frequency_ratios(L0)['dynamic_ntk'], dtype=np.float64)",
               "dyn_2L0": "np.asarray(frequency_ratios(2 * L0)['dynamic_ntk'], "
                          "dtype=np.float64)",
               "unseen": "np.stack([np.asarray(unseen[n], dtype=bool) "
                         "for n in ('none', *METHODS)])",
               "unseen_hidden": "np.stack([np.asarray(unseen_pairs(r, n), dtype=bool) for "
                                "r, n in ((np.ones(16), L0), (np.full(16, 0.5), 4 * L0), "
                                "(np.full(16, 0.25), 4 * L0))])"},
              cell_judge(tol=RATIO_TOL, mistakes=RATIO_MISTAKES,
                         tols={"unseen": EXACT, "unseen_hidden": EXACT}),
              catalogue=MODULE, given=GIVEN),
    CellCheck("test-with-scaling", "Cuaderno: una copia del modelo con otro escalado",
              "Notebook: a copy of the model with another scaling",
              {"pi_freq": "with_scaling(base_model, 'linear', SCALE).hooks.rotary.inv_freq",
               "same_weights": "float((with_scaling(base_model, 'linear', SCALE).wte.weight"
                               " - base_model.wte.weight).abs().max())",
               "yarn": "(lambda m: np.array([m.config.rope_original_max_len, "
                       "m.config.rope_scaling_factor, float(m.hooks.rotary.attention_factor),"
                       " float(m.training)], dtype=np.float64))"
                       "(with_scaling(base_model, 'yarn', 2.0))",
               "gaps": f"(lambda probe: np.array([(with_scaling(base_model, name, factor)"
                       f"(probe)[0] - base_model(probe)[0]).abs().max().item() for name, "
                       f"factor in ((None, 1.0), ('dynamic_ntk', 1.0), ('linear', SCALE))]))"
                       f"({_PROBE})",
               "base_scaling": "(lambda copy: f'{base_model.config.rope_scaling} "
                               "{base_model.config.rope_scaling_factor}')"
                               "(with_scaling(base_model, 'ntk', SCALE))",
               "base_freq": "(lambda copy: base_model.hooks.rotary.inv_freq)"
                            "(with_scaling(base_model, 'yarn', SCALE))"},
              cell_judge(tols={"same_weights": EXACT, "yarn": FACTOR_TOL},
                         properties=GAP_PROPERTIES, diagnoses=(_with_scaling_findings,)),
              volatile=frozenset({"gaps"})),
)

CHECKS = LabChecks(
    lab_id="18.02", inputs=inputs, groups=GROUPS, items=ITEMS, cells=CELLS, questions=(
        ("qué métodos empeoran el modelo a 1x", "which methods make the model worse at 1x"),
        ("los métodos estáticos más allá de s·L0", "the static methods past s·L0"),
        ("el ajuste fino y su control", "the fine-tune and its control"),
        ("qué muestra el experimento y qué no", "what the experiment shows and what it cannot")))
