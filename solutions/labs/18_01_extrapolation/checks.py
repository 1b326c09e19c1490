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

import numpy as np

from grader.hidden.cells import EXACT, Mistake, Property, cell_judge, close
from grader.hidden.common import cases_judge, contract, judged_cases, whole_case
from grader.hidden.spec import Case, CellCheck, Group, Input, Items, LabChecks
from grader.trusted.verdicts import Check, JudgeContext

MODULE = "extrapolation"

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


def _an_int(out: dict) -> bool:
    """Whether an output is a Python int (or ``None``, which failure_position may return)."""
    return out.get("kind") == "none" or (out.get("kind") == "scalar" and out.get("array") is not
                                         None and np.asarray(out["array"]).dtype.kind in "iu")


def _plain_ints(ctx: JudgeContext, k: int) -> bool:
    """Whether case ``k`` returned only numbers that are Python ints."""
    return all(_an_int(out) for out in ctx.run.outputs(k) or ())


def _list_case(ctx: JudgeContext, k: int) -> Check:
    """The whole answer (a list, or one number): as many numbers as the reference, each one
    exactly, all of them Python ints, as the self-check wants them (a float of the right value
    fails here too)."""
    outputs = ctx.run.outputs(k)
    if outputs is None:
        return ctx.compare(k)  # an exception or nothing at all
    if len(outputs) != len(ctx.refs[k] if k < len(ctx.refs) else []):
        return Check(False, "shape")
    check = whole_case(ctx, k, tol=EXACT, check_dtype=False)
    return check if not check.ok or _plain_ints(ctx, k) else Check(False, "kind")


# --- doubling_buckets ----------------------------------------------------------------------------

ITEMS = Items()


@ITEMS.judge("buckets", 1, "doubling_buckets: cubetas que doblan y se cortan en length",
             "doubling_buckets: doubling buckets cut at length")
def judge_buckets(ctx: JudgeContext):
    checks, failing, diagnoses = judged_cases(ctx, _list_case)
    if failing and not diagnoses and all(ctx.run.outputs(k) is not None and
                                         not _plain_ints(ctx, k) for k in failing):
        diagnoses.append(contract("doubling_buckets", "not-ints"))
    return ctx.verdict(checks, diagnoses=diagnoses)


# --- bucket_means --------------------------------------------------------------------------------

ITEMS.add("means", 1, "bucket_means: media de todos los valores sin NaN, en float32",
          "bucket_means: mean of every non-NaN value, in float32", cases_judge(
              JudgeContext.compare, wrong_output=(
                  lambda out, k: out.get("dtype") not in (None, "float32"),
                  contract("bucket_means", "not-float32"))))


# --- failure_position ----------------------------------------------------------------------------

ITEMS.add("failure", 2, "failure_position: media hacia atrás, referencia en [T/2, T)",
          "failure_position: trailing mean, reference over [T/2, T)", cases_judge(
              _list_case, wrong_output=(lambda out, k: not _an_int(out),
                                        contract("failure_position", "not-int"))))


# --- needle_distance -----------------------------------------------------------------------------

ITEMS.add("needle", 1, "needle_distance: la distancia de la clave en la tarea passkey",
          "needle_distance: the passkey's distance in the passkey task", cases_judge(
              _list_case, wrong_output=(lambda out, k: not _an_int(out),
                                        contract("needle_distance", "not-int"))))


# --- the notebook --------------------------------------------------------------------------------

NB_NAN_SPANS = [(0, 2), (2, 4), (0, 4)]
NAN_LOSS_SOURCE = ("torch.tensor([[1.0, 2.0, float('nan'), 4.0], "
                   "[float('nan'), 2.0, 3.0, float('nan')]])")
RAMP_SOURCE = "torch.cat([torch.ones(40), 1 + 0.01 * torch.arange(1, 81)])"
GIVEN = """
T = 64
step = torch.cat([torch.full((T,), 1.2), torch.full((7 * T,), 2.0)])
spans = doubling_buckets(T, 8 * T)
"""  # the names of the cell 'synthetic' that test-measures uses


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
              cell_judge(tols={k: EXACT for k in ("spans", "buckets", "short",
                                                                 "failure", "ramp1", "ramp11",
                                                                 "needles")},
                         exact_kind=("never",)),
              catalogue=MODULE, given=GIVEN),
    CellCheck("test-averages", "Cuaderno: la media de la ventana y la de su mitad final",
              "Notebook: the mean over the window and over its last half",
              {"keys": "' '.join(sorted(map(str, window_mean))) + ' | ' + "
                       "' '.join(sorted(map(str, last_half)))",
               "window_mean": _student_dict("window_mean"),
               "last_half": _student_dict("last_half"),
               "truth_window": _averages(":L"),
               "truth_half": _averages("L // 2 : L"),
               "truth_first": _averages(": L // 2")},
              cell_judge(properties=AVERAGE_PROPERTIES, mistakes=AVERAGE_MISTAKES),
              volatile=frozenset({"window_mean", "last_half", "truth_window", "truth_half",
                                  "truth_first"})),
)

CHECKS = LabChecks(
    lab_id="18.01", inputs=inputs, groups=GROUPS, items=ITEMS, cells=CELLS, questions=(
        ("lo que esconde una media por longitud", "what a mean per length hides"),
        ("pérdida del texto frente a recuperación", "text loss versus retrieval")))
