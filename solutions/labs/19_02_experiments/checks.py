"""Hidden checks of lab 19.02 (experiments: seeds, spread, which differences are real).

The lab has no module of its own: it is graded from its notebook alone (two auto-graded cells,
4 points; the written answers are graded by hand).

- ``test-statistics``: ``seed_statistics`` on the lab's own rows (trained models: ``n`` exactly,
  the mean, sample standard deviation and standard error against the same statistics computed in
  the kernel from ``rows``) and on hidden made-up rows with other encodings and lengths mixed in
  (exact, float64). Diagnosed: the population standard deviation (``n`` instead of ``n − 1``),
  the standard error as ``s / n`` or as ``s``, rows of other encodings or lengths counted.
- ``test-separated``: ``clearly_different`` on the visible and hidden pairs, including the
  symmetric call and another ``z``, exactly. Diagnosed: standard errors added instead of
  combined in quadrature, ``z`` ignored, the difference without its absolute value.
"""

from __future__ import annotations

import math

import numpy as np

from grader.hidden.cells import EXACT, Mistake, Property, cell_judge
from grader.hidden.spec import CellCheck, LabChecks
from grader.trusted.verdicts import Tolerance

STATS_TOL = Tolerance(1e-9, 1e-12)
# The hidden rows: encoding "a" at length 10 (1, 2, 4), "b" at 10 and "a" at 20 to be left out.
FAKE_ROWS = ("[{'encoding': e, 'eval_length': n, 'mean_loss': v, 'seed': s} "
             "for s, (e, n, v) in enumerate([('a', 10, 1.0), ('a', 10, 2.0), ('b', 10, 9.0), "
             "('a', 10, 4.0), ('a', 20, 7.0)])]")
FAKE_A10 = [1.0, 2.0, 4.0]


def statistics(values, mistake: str | None = None) -> np.ndarray:
    """[n, mean, std, se] of ``values``, or with one of the usual mistakes."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    std = float(values.std(ddof=0 if mistake == "population" else 1))
    se = {"se-over-n": std / n, "se-is-std": std}.get(mistake, std / math.sqrt(n))
    return np.array([n, values.mean(), std, se])


STATISTICS_DIAGNOSES = {
    "population": ("La desviación típica es la muestral, con n − 1 en el denominador "
                   "(np.std(..., ddof=1)): con pocas semillas, dividir por n la subestima.",
                   "The standard deviation is the sample one, with n − 1 in the denominator "
                   "(np.std(..., ddof=1)): with few seeds, dividing by n underestimates it."),
    "se-over-n": ("El error típico de la media es s/√n, no s/n.",
                  "The standard error of the mean is s/√n, not s/n."),
    "se-is-std": ("El error típico de la media es s/√n: la desviación típica s mide cuánto varía "
                  "una semilla, no cuánto varía la media.",
                  "The standard error of the mean is s/√n: the standard deviation s measures how "
                  "much one seed varies, not how much the mean does."),
}


def _statistics_mistake(name: str) -> Mistake:
    def values(get):
        found = {"fake": statistics(FAKE_A10, name)}
        own = get("values")
        if isinstance(own, np.ndarray) and own.size > 1:
            found["check"] = statistics(own, name)
        return found
    return Mistake(f"nb-{name}", values, *STATISTICS_DIAGNOSES[name], STATS_TOL)


STATISTICS_MISTAKES = (
    *(_statistics_mistake(name) for name in STATISTICS_DIAGNOSES),
    Mistake("nb-unfiltered", lambda get: {"fake": statistics([1.0, 2.0, 9.0, 4.0, 7.0])},
            "Cuentas filas de otras codificaciones o longitudes: solo entran las de encoding y "
            "length (row[\"eval_length\"]) pedidos.",
            "You count rows of other encodings or lengths: only those of the requested encoding "
            "and length (row[\"eval_length\"]) go in.", STATS_TOL),
    Mistake("nb-length-ignored", lambda get: {"fake": statistics([1.0, 2.0, 4.0, 7.0])},
            "Falta filtrar por longitud: una fila cuenta solo si row[\"eval_length\"] == length.",
            "The length filter is missing: a row counts only when row[\"eval_length\"] == "
            "length.", STATS_TOL),
)


def _own_statistics(check: np.ndarray, values: np.ndarray) -> bool:
    return check.shape == (4,) and values.size > 1 and bool(np.allclose(
        check, statistics(values), rtol=1e-6, atol=1e-9))


STATISTICS_PROPERTIES = (
    Property("nb-own-statistics", ("check", "values"), _own_statistics,
             "seed_statistics(rows, \"rope\", L0) no da n, la media, la desviación típica "
             "muestral y el error típico de las pérdidas de rope a L0.",
             "seed_statistics(rows, \"rope\", L0) does not give n, the mean, the sample standard "
             "deviation and the standard error of rope's losses at L0."),
)

# (a, b, z) of the test cell's calls, visible then hidden
SEPARATED_VISIBLE = [((2.0, 0.05), (2.10, 0.05), 2.0), ((2.0, 0.05), (2.20, 0.05), 2.0),
                     ((3.0, 0.0), (2.0, 0.05), 2.0), ((2.0, 0.05), (3.0, 0.0), 2.0)]
SEPARATED_HIDDEN = [((1.0, 0.3), (1.0, 0.0), 2.0), ((1.0, 0.03), (1.1, 0.04), 1.0),
                    ((1.0, 0.03), (1.1, 0.04), 3.0), ((1.1, 0.04), (1.0, 0.03), 1.0),
                    ((1.0, 0.03), (1.13, 0.04), 2.0)]  # apart by 2.6 se, not by 2 (0.03 + 0.04)


def _calls(cases) -> str:
    calls = ", ".join(f"clearly_different({{'mean': {a[0]}, 'se': {a[1]}}}, "
                      f"{{'mean': {b[0]}, 'se': {b[1]}}}, z={z})" for a, b, z in cases)
    return f"np.array([{calls}], dtype=np.float64)"


def separated(a, b, z, mistake: str | None = None) -> bool:
    difference = a[0] - b[0] if mistake == "no-abs" else abs(a[0] - b[0])
    spread = a[1] + b[1] if mistake == "se-added" else math.hypot(a[1], b[1])
    return difference > (2.0 if mistake == "z-ignored" else z) * spread


SEPARATED_DIAGNOSES = {
    "se-added": ("Los errores típicos no se suman: el de la diferencia es "
                 "√(se_a² + se_b²), más pequeño que se_a + se_b.",
                 "Standard errors do not add up: the one of the difference is "
                 "√(se_a² + se_b²), smaller than se_a + se_b."),
    "z-ignored": ("clearly_different no usa z: el umbral es z · √(se_a² + se_b²).",
                  "clearly_different ignores z: the threshold is z · √(se_a² + se_b²)."),
    "no-abs": ("Falta el valor absoluto: |media_a − media_b|, para que el resultado no dependa "
               "del orden de a y b.",
               "The absolute value is missing: |mean_a − mean_b|, so that the result does not "
               "depend on the order of a and b."),
}
SEPARATED_MISTAKES = tuple(
    Mistake(f"nb-{name}", lambda get, n=name: {
        "visible": np.array([separated(*c, mistake=n) for c in SEPARATED_VISIBLE], dtype=float),
        "hidden": np.array([separated(*c, mistake=n) for c in SEPARATED_HIDDEN], dtype=float)},
        es, en, EXACT)
    for name, (es, en) in SEPARATED_DIAGNOSES.items())

_ROPE_AT_L0 = "seed_statistics(rows, 'rope', L0)"

CELLS = (
    CellCheck("test-statistics", "Cuaderno: media, desviación y error típico entre semillas",
              "Notebook: mean, spread and standard error over seeds",
              {"n": f"{_ROPE_AT_L0}['n']",
               "check": "(lambda s: np.array([s['n'], s['mean'], s['std'], s['se']], "
                        f"dtype=np.float64))({_ROPE_AT_L0})",
               "values": "np.array([r['mean_loss'] for r in rows if r['encoding'] == 'rope' "
                         "and r['eval_length'] == L0], dtype=np.float64)",
               "fake": "(lambda s: np.array([s['n'], s['mean'], s['std'], s['se']], "
                       f"dtype=np.float64))(seed_statistics({FAKE_ROWS}, 'a', 10))"},
              cell_judge(tols={"n": EXACT, "fake": STATS_TOL},
                         properties=STATISTICS_PROPERTIES, mistakes=STATISTICS_MISTAKES),
              volatile=frozenset({"check", "values"})),
    CellCheck("test-separated", "Cuaderno: qué diferencias superan el ruido",
              "Notebook: which differences stand out from the noise",
              {"visible": _calls(SEPARATED_VISIBLE), "hidden": _calls(SEPARATED_HIDDEN)},
              cell_judge(tol=EXACT, mistakes=SEPARATED_MISTAKES)),
)

CHECKS = LabChecks(lab_id="19.02", cells=CELLS, questions=(
    ("qué codificaciones aguantan a 8x, con su dispersión",
     "which encodings hold at 8x, with their spread"),
    ("NoPE a 1x y el ruido entre semillas", "NoPE at 1x and the noise between seeds"),
    ("quién aprende a copiar y quién extrapola", "who learns to copy and who extrapolates"),
    ("qué muestra el laboratorio y qué no", "what the lab shows and what it cannot")))
