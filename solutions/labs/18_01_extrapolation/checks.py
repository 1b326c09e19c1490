"""Hidden checks of lab 18.01 (extrapolation: loss by position, failure point, passkey distance).

Graded from ``src/minimodel/positional/extrapolation.py`` (5 points) and the lab notebook (its two
auto-graded cells, 4 points; the written answers are graded by hand). Hidden inputs: training
lengths from 1 to 1000 with evaluation lengths shorter than, equal to, just past and many times
``T`` (up to 33 T); loss tensors ``(N, L)`` and ``(L,)`` in float32 and float64 with targets
missing at random, whole rows without targets and buckets with none, buckets that overlap or skip
positions; loss curves that rise slowly, rise in a step, never rise, have targets missing, reach
``reference + tolerance`` exactly, end at ``T``, or are smoothed over a window longer than ``T``;
passkeys of 1 to 7 digits at depths that round half-way (Python rounds to even) and next to both
ends.

Tolerances: integers (buckets, positions, distances) must be exact; ``bucket_means`` the float32
default, NaN exactly where a bucket has no target. ``doubling_buckets`` must return exactly the
pairs of the reference (a longer or shorter list fails the case); ``failure_position`` and
``needle_distance`` a Python ``int`` (or ``None``), not a tensor.

Known mistakes diagnosed: those of the values, from the catalogue
``solutions/mistakes/extrapolation.py`` (buckets of length ``T``, the last bucket not cut; a mean
of means, NaNs not skipped or counted as zeros; in ``failure_position`` a centred or forward
window, no smoothing, the reference over ``[0, T)``, the search from 0, NaNs not skipped, ``>=``,
the window's start returned; in ``needle_distance`` ``int()`` or half-up rounding, off by one, 5
digits always); pairs that are not Python ints, a result that is not float32, a tensor instead of
an int.

Notebook: ``test-measures`` records the visible and hidden test values of the four functions
(exact; the usual mistakes above are recognised from them); ``test-averages`` records
``window_mean`` and ``last_half`` next to the same means computed in the kernel straight from
``losses`` (the models are trained, so the values are judged against those, within 1e-5, not
against stored ones). Diagnosed there: the two dictionaries swapped, the first half of the window
instead of the last, the doubling buckets instead of the windows ``[0, L)``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from grader.hidden.cells import Mistake, Property, cell_judge, close
from grader.hidden.common import judged_cases
from grader.hidden.spec import Case, CellCheck, Group, Input, Item, LabChecks
from grader.trusted.verdicts import Check, Finding, JudgeContext, Tolerance

MODULE = "extrapolation"
EXACT = Tolerance(0.0, 0.0)

# (train_len, length); at most 8 buckets (16 numbers come back from the probe)
BUCKET_CASES = [(100, 1000), (1, 1), (3, 100), (50, 49), (7, 14), (10, 21), (64, 64), (5, 6),
                (1000, 5000)]
# (loss key, dtype, buckets)
MEAN_CASES = [("l0", "float32", [(0, 5), (5, 10), (10, 20), (20, 40)]),
              ("l0", "float32", [(30, 37), (37, 40), (0, 1)]),
              ("l1", "float64", [(0, 6), (6, 12), (12, 25)]),
              ("l2", "float32", [(0, 16), (4, 8), (8, 16)]),
              ("l3", "float32", [(2, 9), (0, 1), (11, 12)])]
# (curve key, dtype, train_len, tolerance, window)
FAILURE_CASES = [("fa", "float32", 40, 0.5, 8), ("fb", "float64", 32, 0.25, 6),
                 ("fc", "float32", 16, 0.3, 5), ("fd", "float32", 8, 0.5, 4),
                 ("fe", "float64", 24, 0.1, 3), ("ff", "float32", 20, 0.2, 64),
                 ("fa", "float32", 40, 2.5, 1)]
# (length, depth, n_digits)
NEEDLE_CASES = [(64, 0.0, 5), (64, 1.0, 3), (1000, 0.37, 5), (41, 0.5, 7), (30, 0.25, 1),
                (200, 0.999, 5), (12, 0.6, 4), (16, 0.5, 6), (99, 0.3, 2)]


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1801)
    l0 = rng.gamma(2.0, 1.0, size=(4, 40)).astype(np.float32)
    l0[rng.random((4, 40)) < 0.3] = np.nan  # missing targets, a different count per row
    l0[:, 37:] = np.nan  # a bucket without any target
    l0[2] = np.nan  # a sequence without targets
    l1 = rng.gamma(3.0, 0.5, size=25)
    l1[[0, 7, 8, 20]] = np.nan
    l2 = rng.normal(2.0, 0.5, size=(3, 16)).astype(np.float32)
    l3 = rng.normal(1.0, 0.3, size=(2, 12)).astype(np.float32)
    l3[0, 3:] = np.nan
    l3[1, 0] = np.nan
    positions = np.arange(120)
    fa = np.where(positions < 40, 1.0, 1.0 + 0.0625 * (positions - 40))
    fa[:10] = 4.0 - 0.25 * np.arange(10)  # little context at the start: high loss
    fb = np.where(np.arange(100) < 40, 1.0, 2.0)
    fb[::3] = np.nan
    fc = 1.5 + 0.125 * np.sin(np.arange(60))
    fc[:4] = 3.0
    fd = np.array([1.0] * 8 + [3.0, 1.0, 3.0, 1.0, 3.0, 3.0, 3.0, 3.0])  # smooth = 1.5 at p = 8
    fe = rng.normal(1.0, 0.5, size=24)  # ends at T: nothing to find
    ff = np.concatenate([np.full(20, 2.0), 2.0 + 0.03125 * np.arange(180)])
    return {"l0": l0, "l1": l1, "l2": l2, "l3": l3, "fa": fa.astype(np.float32), "fb": fb,
            "fc": fc.astype(np.float32), "fd": fd.astype(np.float32), "fe": fe,
            "ff": ff.astype(np.float32)}


GROUPS = (
    Group("buckets", MODULE, tuple(Case("function", "doubling_buckets", c) for c in BUCKET_CASES)),
    Group("means", MODULE, tuple(
        Case("function", "bucket_means", (Input(key, dtype), [list(b) for b in buckets]))
        for key, dtype, buckets in MEAN_CASES)),
    Group("failure", MODULE, tuple(
        Case("function", "failure_position", (Input(key, dtype), T),
             {"tolerance": tol, "window": window})
        for key, dtype, T, tol, window in FAILURE_CASES)),
    Group("needle", MODULE, tuple(
        Case("function", "needle_distance", (length, depth),
             {"n_digits": k} if k != 5 else {}) for length, depth, k in NEEDLE_CASES)),
)


def _plain_ints(ctx: JudgeContext, k: int) -> bool:
    """Whether case ``k`` returned only numbers that are Python ints."""
    return all(out.get("kind") == "scalar" and out.get("array") is not None and
               np.asarray(out["array"]).dtype.kind in "iu" for out in ctx.run.outputs(k) or ())


def _list_case(ctx: JudgeContext, k: int) -> Check:
    """The whole list: as many numbers as the reference, each one exactly, plain integers."""
    outputs = ctx.run.outputs(k)
    if outputs is None:
        return ctx.compare(k)  # an exception or nothing at all
    refs = ctx.refs[k] if k < len(ctx.refs) else []
    if len(outputs) != len(refs):
        return Check(False, "shape")
    for position in range(len(refs)):
        check = ctx.compare(k, position, tol=EXACT, check_dtype=False)
        if not check.ok:
            return check
    return Check(True, max_err=0.0)


# --- doubling_buckets ----------------------------------------------------------------------------

def judge_buckets(ctx: JudgeContext):
    checks, failing, diagnoses = judged_cases(ctx, _list_case)
    if failing and not diagnoses and all(ctx.run.outputs(k) is not None and
                                         not _plain_ints(ctx, k) for k in failing):
        diagnoses.append(Finding(
            "not-ints", "doubling_buckets devuelve una lista de pares (inicio, fin) de enteros de "
            "Python, no tensores ni floats.",
            "doubling_buckets returns a list of (start, end) pairs of Python ints, not tensors "
            "or floats."))
    return ctx.verdict(checks, diagnoses=diagnoses)


# --- bucket_means --------------------------------------------------------------------------------

def judge_means(ctx: JudgeContext):
    checks, failing, diagnoses = judged_cases(ctx, JudgeContext.compare)
    if any((out := ctx.out(k)) is not None and out.get("dtype") not in (None, "float32")
           for k in failing):
        diagnoses.append(Finding(
            "not-float32", "bucket_means devuelve float32 sea cual sea el dtype de loss.",
            "bucket_means returns float32 whatever the dtype of loss."))
    return ctx.verdict(checks, diagnoses=diagnoses)


# --- failure_position ----------------------------------------------------------------------------

def judge_failure(ctx: JudgeContext):
    checks, failing, diagnoses = judged_cases(ctx, JudgeContext.compare, tol=EXACT,
                                              check_dtype=False)
    tensors = [k for k in failing if (out := ctx.out(k)) is not None and
               out.get("kind") in ("tensor", "ndarray")]
    if tensors:
        diagnoses.append(Finding(
            "not-int", "failure_position devuelve un int de Python (int(p)) o None, no un "
            "tensor.", "failure_position returns a Python int (int(p)) or None, not a tensor."))
    return ctx.verdict(checks, diagnoses=diagnoses)


# --- needle_distance -----------------------------------------------------------------------------

def judge_needle(ctx: JudgeContext):
    checks, failing, diagnoses = judged_cases(ctx, JudgeContext.compare, tol=EXACT,
                                              check_dtype=False)
    if any((out := ctx.out(k)) is not None and out.get("kind") != "scalar" for k in failing):
        diagnoses.append(Finding(
            "not-int", "needle_distance devuelve un int de Python, no un tensor ni un array.",
            "needle_distance returns a Python int, not a tensor or an array."))
    return ctx.verdict(checks, diagnoses=diagnoses)


ITEMS = (
    Item("buckets", "buckets", 1, "doubling_buckets: cubetas que doblan y se cortan en length",
         "doubling_buckets: doubling buckets cut at length", judge_buckets),
    Item("means", "means", 1, "bucket_means: media de todos los valores sin NaN, en float32",
         "bucket_means: mean of every non-NaN value, in float32", judge_means),
    Item("failure", "failure", 2, "failure_position: media hacia atrás, referencia en [T/2, T)",
         "failure_position: trailing mean, reference over [T/2, T)", judge_failure),
    Item("needle", "needle", 1, "needle_distance: la distancia de la clave en la tarea passkey",
         "needle_distance: the passkey's distance in the passkey task", judge_needle),
)


# --- the notebook --------------------------------------------------------------------------------

# The test cell's mistakes, modelled here (the module items name the catalogue's,
# solutions/mistakes/extrapolation.py).

def buckets(train_len: int, length: int, mistake: str | None = None) -> list[int]:
    """The flattened ``(start, end)`` pairs, or one of the usual mistakes."""
    if mistake == "linear":
        edges = list(range(0, length, train_len)) + [length]
    elif mistake == "not-cut":
        edges = [0, train_len]
        while edges[-1] < length:
            edges.append(2 * edges[-1])
    else:
        edges = [0, min(train_len, length)]
        while edges[-1] < length:
            edges.append(min(2 * edges[-1], length))
    return [v for pair in zip(edges[:-1], edges[1:], strict=True) for v in pair]


BUCKET_DIAGNOSES = {
    "linear": ("Las cubetas deben doblar su longitud: [0, T), [T, 2T), [2T, 4T), [4T, 8T)…; cada "
               "una termina en el doble de su inicio, no T posiciones más allá.",
               "The buckets must double in length: [0, T), [T, 2T), [2T, 4T), [4T, 8T)…; each "
               "ends at twice its start, not T positions further."),
    "not-cut": ("Ninguna cubeta puede pasar de length: la última (o la única, si length ≤ T) "
                "termina en length.",
                "No bucket may go past length: the last one (or the only one, when length ≤ T) "
                "ends at length."),
}


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # means of empty or all-NaN slices
        return function(*args, **kwargs)


def means(loss: np.ndarray, spans, mistake: str | None = None) -> np.ndarray:
    """The mean loss per bucket (float64), or one of the usual mistakes."""
    loss = np.asarray(loss, dtype=np.float64)
    rows = loss if loss.ndim == 2 else loss[None, :]
    out = []
    for start, end in spans:
        part = rows[:, start:end]
        if mistake == "mean-of-means":
            out.append(_quiet(np.nanmean, _quiet(np.nanmean, part, axis=1)))
        elif mistake == "nan-not-skipped":
            out.append(part.mean())
        elif mistake == "nan-as-zero":
            out.append(np.nan_to_num(part, nan=0.0).mean())
        else:
            out.append(_quiet(np.nanmean, part))
    return np.array(out)


MEAN_DIAGNOSES = {
    "mean-of-means": ("Es una media de medias por secuencia: cada valor de la cubeta debe contar "
                      "una vez (la media de todos los valores sin NaN de todas las secuencias).",
                      "This is a mean of per-sequence means: every value in the bucket must "
                      "count once (the mean of all non-NaN values of every sequence)."),
    "nan-not-skipped": ("Una cubeta con algún NaN da NaN: usa torch.nanmean, que ignora las "
                        "posiciones sin objetivo.",
                        "A bucket with any NaN gives NaN: use torch.nanmean, which skips the "
                        "positions without a target."),
    "nan-as-zero": ("Los NaN cuentan como ceros: las posiciones sin objetivo no deben entrar ni "
                    "en la suma ni en la cuenta (torch.nanmean).",
                    "NaNs count as zeros: positions without a target must enter neither the sum "
                    "nor the count (torch.nanmean)."),
}


def failure(curve, train_len: int, tolerance: float, window: int,
            mistake: str | None = None) -> int | None:
    """The first failing position (float64, as the reference), or one of the usual mistakes."""
    c = np.asarray(curve, dtype=np.float64)
    mean = np.mean if mistake == "nan-not-skipped" else np.nanmean
    ref_start = 0 if mistake == "reference-from-start" else train_len // 2
    reference = _quiet(mean, c[ref_start:train_len])
    start = 0 if mistake == "search-from-zero" else train_len
    for p in range(start, len(c)):
        lo, hi = max(0, p - window + 1), p + 1
        if mistake == "centred":
            lo, hi = max(0, p - window // 2), p + (window + 1) // 2
        elif mistake == "forward":
            lo, hi = p, p + window
        elif mistake == "no-smoothing":
            lo, hi = p, p + 1
        smooth = _quiet(mean, c[lo:hi])
        if smooth >= reference + tolerance if mistake == "greater-equal" else \
                smooth > reference + tolerance:
            return p - window + 1 if mistake == "window-start" else p
    return None


FAILURE_DIAGNOSES = {
    "centred": ("La media móvil está centrada en p: debe ir hacia atrás, "
                "per_position[p − window + 1 .. p], sin mirar posiciones posteriores a p.",
                "The moving mean is centred on p: it must look back, "
                "per_position[p − window + 1 .. p], without positions after p."),
    "forward": ("La media móvil mira hacia delante (p .. p + window − 1): debe ir hacia atrás, "
                "per_position[p − window + 1 .. p].",
                "The moving mean looks ahead (p .. p + window − 1): it must look back, "
                "per_position[p − window + 1 .. p]."),
    "no-smoothing": ("Comparas la pérdida de cada posición sin suavizar: usa la media de las "
                     "últimas window posiciones hasta p.",
                     "You compare each position's loss unsmoothed: use the mean of the last "
                     "window positions up to p."),
    "reference-from-start": ("La referencia es la media de [T//2, T), posiciones con contexto; "
                             "las primeras posiciones tienen una pérdida alta que no cuenta.",
                             "The reference is the mean over [T//2, T), positions with context; "
                             "the first positions have a high loss that does not count."),
    "search-from-zero": ("La búsqueda empieza en T: el resultado nunca es menor que train_len.",
                         "The search starts at T: the result is never below train_len."),
    "nan-not-skipped": ("Con posiciones sin objetivo (NaN), las medias deben saltarlas "
                        "(torch.nanmean): con NaN ninguna comparación es cierta.",
                        "With positions without a target (NaN), the means must skip them "
                        "(torch.nanmean): with NaN no comparison is true."),
    "greater-equal": ("La pérdida falla cuando SUPERA referencia + tolerance (>), no cuando la "
                      "iguala (>=).",
                      "The loss fails when it EXCEEDS reference + tolerance (>), not when it "
                      "equals it (>=)."),
    "window-start": ("Devuelve p, la posición donde la media móvil supera el umbral, no el "
                     "inicio de su ventana (p − window + 1).",
                     "Return p, the position where the moving mean crosses the threshold, not "
                     "the start of its window (p − window + 1)."),
}


def needle(length: int, depth: float, k: int = 5, mistake: str | None = None) -> int:
    """The passkey distance, or one of the usual mistakes."""
    if mistake == "digits-fixed":
        k = 5
    filler = length - 2 * k - 2
    if mistake == "truncated":
        before = int(depth * filler)
    elif mistake == "half-up":
        before = math.floor(depth * filler + 0.5)
    else:
        before = round(depth * filler)
    return length - k - 2 - before + (1 if mistake == "off-by-one" else 0)


NEEDLE_DIAGNOSES = {
    "truncated": ("w se calcula con round() de Python, como PasskeyTask, no con int(), que "
                  "trunca.",
                  "w is computed with Python's round(), as PasskeyTask does, not with int(), "
                  "which truncates."),
    "half-up": ("round() de Python redondea los medios al par (round(2.5) = 2): no redondees "
                "siempre hacia arriba.",
                "Python's round() rounds halves to even (round(2.5) = 2): do not always round "
                "half up."),
    "off-by-one": ("La distancia sale una posición más larga: cuenta desde QUERY (índice "
                   "length − k), el token que predice d_1, hasta la cifra d_1 de la aguja "
                   "(índice w + 2), no hasta MARK ni desde el token predicho.",
                   "The distance comes out one position too long: count from QUERY (index "
                   "length − k), the token that predicts d_1, to the needle's digit d_1 "
                   "(index w + 2), not to MARK nor from the predicted token."),
    "digits-fixed": ("La clave tiene n_digits cifras (k), no siempre 5: k entra en el relleno "
                     "F = length − 2k − 2 y en la distancia length − k − 2 − w.",
                     "The passkey has n_digits digits (k), not always 5: k enters the filler "
                     "F = length − 2k − 2 and the distance length − k − 2 − w."),
}


NB_T = 64
NB_STEP = np.concatenate([np.full(NB_T, 1.2, np.float32), np.full(7 * NB_T, 2.0, np.float32)])
NB_NAN_LOSS = np.array([[1.0, 2.0, np.nan, 4.0], [np.nan, 2.0, 3.0, np.nan]])
NB_NAN_SPANS = [(0, 2), (2, 4), (0, 4)]
NB_FLAT = np.full(90, 3.0)
NB_RAMP = np.concatenate([np.ones(40, np.float32),
                          np.float32(1) + np.float32(0.01) * np.arange(1, 81, dtype=np.float32)])
NB_NEEDLES = [(256, 0.0, 5), (256, 1.0, 5), (512, 0.5, 5), (18, 0.25, 3)]
NAN_LOSS_SOURCE = ("torch.tensor([[1.0, 2.0, float('nan'), 4.0], "
                   "[float('nan'), 2.0, 3.0, float('nan')]])")
RAMP_SOURCE = "torch.cat([torch.ones(40), 1 + 0.01 * torch.arange(1, 81)])"


def _pairs(flat: list[int]) -> np.ndarray:
    return np.array(flat).reshape(-1, 2)


def _measure_mistakes() -> tuple[Mistake, ...]:
    found = []
    for name, (es, en) in BUCKET_DIAGNOSES.items():
        found.append(Mistake(name, lambda get, n=name: {
            "spans": _pairs(buckets(NB_T, 8 * NB_T, n)), "buckets": _pairs(buckets(100, 350, n)),
            "short": _pairs(buckets(64, 10, n))}, es, en, EXACT))
    for name, (es, en) in MEAN_DIAGNOSES.items():
        found.append(Mistake(name, lambda get, n=name: {
            "nan_means": means(NB_NAN_LOSS, NB_NAN_SPANS, n)}, es, en))
    for name, (es, en) in FAILURE_DIAGNOSES.items():
        found.append(Mistake(name, lambda get, n=name: {
            "failure": failure(NB_STEP, NB_T, 0.1, 20, n),
            "never": failure(NB_FLAT, 30, 0.0, 5, n),
            "ramp1": failure(NB_RAMP, 40, 0.205, 1, n),
            "ramp11": failure(NB_RAMP, 40, 0.205, 11, n)}, es, en, EXACT))
    for name, (es, en) in NEEDLE_DIAGNOSES.items():
        found.append(Mistake(name, lambda get, n=name: {
            "needles": np.array([needle(*c, mistake=n) for c in NB_NEEDLES])}, es, en, EXACT))
    return tuple(found)


def _averages(window: str) -> str:
    """Per encoding and L, the mean of ``losses`` over a window, computed in the kernel."""
    return (f"torch.stack([torch.stack([losses[e][:, {window}].double().nanmean() "
            f"for L in LENGTHS]) for e in ENCODINGS])")


def _student_dict(name: str) -> str:
    return f"torch.stack([torch.as_tensor({name}[e]).double().reshape(-1) for e in ENCODINGS])"


def _doubling_buckets_instead(get) -> dict:
    window, half = get("truth_window"), get("truth_half")
    return {"window_mean": np.concatenate([window[:, :1], half[:, 1:]], axis=1)}


AVERAGE_PROPERTIES = (
    Property("window-mean", ("window_mean", "truth_window"), close,
             "window_mean no es, para cada codificación y cada L, la media de losses sobre "
             "[0, L) (todas las secuencias y posiciones juntas, sin NaN).",
             "window_mean is not, for each encoding and each L, the mean of losses over [0, L) "
             "(all sequences and positions together, NaNs skipped)."),
    Property("last-half", ("last_half", "truth_half"), close,
             "last_half no es, para cada codificación y cada L, la media de losses sobre "
             "[L/2, L).",
             "last_half is not, for each encoding and each L, the mean of losses over "
             "[L/2, L)."),
)

AVERAGE_MISTAKES = (
    Mistake("swapped", lambda get: {"window_mean": get("truth_half"),
                                    "last_half": get("truth_window")},
            "window_mean y last_half están intercambiados: window_mean es la media de toda la "
            "ventana [0, L) y last_half la de su mitad final [L/2, L).",
            "window_mean and last_half are swapped: window_mean is the mean over the whole "
            "window [0, L) and last_half the mean over its last half [L/2, L)."),
    Mistake("first-half", lambda get: {"last_half": get("truth_first")},
            "last_half usa la primera mitad de la ventana, [0, L/2); es la mitad final, "
            "[L/2, L): las posiciones nuevas.",
            "last_half uses the first half of the window, [0, L/2); it is the last half, "
            "[L/2, L): the new positions."),
    Mistake("doubling-buckets", _doubling_buckets_instead,
            "window_mean son las cubetas que doblan ([0, T), [T, 2T), …), no la ventana entera "
            "[0, L) de cada longitud: cada media empieza en la posición 0.",
            "window_mean holds the doubling buckets ([0, T), [T, 2T), …), not the whole window "
            "[0, L) of each length: every mean starts at position 0."),
)

CELLS = (
    CellCheck("test-measures", "Cuaderno: cubetas, medias, punto de fallo y distancia",
              "Notebook: buckets, means, failure point and distance",
              {"spans": "np.array(spans)",
               "buckets": "np.array(doubling_buckets(100, 350))",
               "short": "np.array(doubling_buckets(64, 10))",
               "means": "bucket_means(step, spans)",
               "nan_means": f"bucket_means({NAN_LOSS_SOURCE}, {NB_NAN_SPANS})",
               "failure": "failure_position(step, T, tolerance=0.1, window=20)",
               "never": "failure_position(torch.full((90,), 3.0), 30, tolerance=0.0, "
                        "window=5)",
               "ramp1": f"failure_position({RAMP_SOURCE}, 40, tolerance=0.205, window=1)",
               "ramp11": f"failure_position({RAMP_SOURCE}, 40, tolerance=0.205, window=11)",
               "needles": "np.array([needle_distance(256, 0.0), needle_distance(256, 1.0), "
                          "needle_distance(512, 0.5), "
                          "needle_distance(18, 0.25, n_digits=3)])"},
              cell_judge(unfilled=True, tols={k: EXACT for k in ("spans", "buckets", "short",
                                                                 "failure", "ramp1", "ramp11",
                                                                 "needles")},
                         exact_kind=("never",), mistakes=_measure_mistakes())),
    CellCheck("test-averages", "Cuaderno: la media de la ventana y la de su mitad final",
              "Notebook: the mean over the window and over its last half",
              {"keys": "' '.join(sorted(map(str, window_mean))) + ' | ' + "
                       "' '.join(sorted(map(str, last_half)))",
               "window_mean": _student_dict("window_mean"),
               "last_half": _student_dict("last_half"),
               "truth_window": _averages(":L"),
               "truth_half": _averages("L // 2 : L"),
               "truth_first": _averages(": L // 2")},
              cell_judge(unfilled=True, properties=AVERAGE_PROPERTIES, mistakes=AVERAGE_MISTAKES),
              volatile=frozenset({"window_mean", "last_half", "truth_window", "truth_half",
                                  "truth_first"})),
)

CHECKS = LabChecks(
    lab_id="18.01", inputs=inputs, groups=GROUPS, items=ITEMS, cells=CELLS, questions=(
        ("lo que esconde una media por longitud", "what a mean per length hides"),
        ("pérdida del texto frente a recuperación", "text loss versus retrieval")))
