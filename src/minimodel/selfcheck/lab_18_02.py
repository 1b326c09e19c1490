"""Visible checks for lab 18.02 (RoPE scaling). Students may read these; the grader's differ.

The expected frequencies are written here straight from the lesson's formulas, in float64, one
pair at a time; they do not come from the reference solution.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from minimodel.selfcheck.compare import CheckFailure, CheckList, expect_array

checks = CheckList()


def _student():
    from minimodel.positional import scaling

    return scaling


def plain(r: int, base: float) -> np.ndarray:
    """theta_i = base^(-2i/r), float64."""
    return np.array([base ** (-2 * i / r) for i in range(r // 2)])


def as_tensor(values: np.ndarray) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32)


def expect_pair(result: object, name: str) -> tuple[torch.Tensor, float]:
    """The student's ``(inv_freq, attention_factor)``, or a clear failure."""
    if not (isinstance(result, tuple) and len(result) == 2):
        raise CheckFailure(
            f"{name} debe devolver una tupla (inv_freq, attention_factor); devolvió "
            f"{type(result).__name__}.",
            f"{name} must return a tuple (inv_freq, attention_factor); it returned "
            f"{type(result).__name__}.",
        )
    inv_freq, factor = result
    if isinstance(factor, torch.Tensor) or not isinstance(factor, (int, float)):
        raise CheckFailure(
            f"{name}: attention_factor debe ser un número de Python (float); es "
            f"{type(factor).__name__}.",
            f"{name}: attention_factor must be a Python number (float); it is "
            f"{type(factor).__name__}.",
        )
    return inv_freq, float(factor)


def expect_factor(actual: float, expected: float, name: str, mistakes: dict | None = None) -> None:
    if math.isclose(actual, expected, rel_tol=1e-6):
        return
    es = f"{name}: attention_factor = {actual:.6g}, se esperaba {expected:.6g}."
    en = f"{name}: attention_factor = {actual:.6g}, expected {expected:.6g}."
    for wrong, why_es, why_en in (mistakes or {}).values():
        if math.isclose(actual, wrong, rel_tol=1e-6):
            es, en = f"{es} {why_es}", f"{en} {why_en}"
            break
    raise CheckFailure(es, en)


# --- linear -------------------------------------------------------------------------------------


@checks.add("linear_scaling", "divide cada frecuencia por s", "divides every frequency by s")
def linear_values() -> None:
    inv_freq, factor = expect_pair(_student().linear_scaling(16, 10000.0, factor=4.0), "linear")
    expect_array(
        inv_freq,
        as_tensor(plain(16, 10000.0) / 4),
        name="linear_scaling(16, factor=4)[0]",
        mistakes={
            "times": (
                plain(16, 10000.0) * 4,
                "Las frecuencias deben bajar: divide por s, no multipliques.",
                "The frequencies must go down: divide by s, do not multiply.",
            )
        },
    )
    expect_factor(factor, 1.0, "linear_scaling")


# --- NTK ----------------------------------------------------------------------------------------


def ntk_expected(r: int, base: float, s: float) -> np.ndarray:
    return plain(r, base * s ** (r / (r - 2)))


@checks.add("ntk_scaling", "base b·s^(r/(r-2))", "base b·s^(r/(r-2))")
def ntk_values() -> None:
    r, base, s = 32, 10000.0, 4.0
    inv_freq, factor = expect_pair(_student().ntk_scaling(r, base, factor=s), "ntk")
    expect_array(
        inv_freq,
        as_tensor(ntk_expected(r, base, s)),
        name="ntk_scaling(32, factor=4)[0]",
        rtol=1e-5,
        mistakes={
            "no_exponent": (
                plain(r, base * s),
                "Parece que usaste la base b·s; la nueva base es b·s^(r/(r-2)), para que la pareja "
                "más lenta se divida exactamente por s.",
                "It looks like you used the base b·s; the new base is b·s^(r/(r-2)), so that the "
                "slowest pair is divided by exactly s.",
            ),
            "linear": (
                plain(r, base) / s,
                "Eso es la interpolación lineal: NTK no divide las frecuencias, cambia la base.",
                "That is linear interpolation: NTK does not divide the frequencies, it changes "
                "the base.",
            ),
        },
    )
    expect_factor(factor, 1.0, "ntk_scaling")


# --- dynamic NTK --------------------------------------------------------------------------------


@checks.add(
    "dynamic_ntk_scaling", "RoPE sin cambios hasta L0", "plain RoPE up to the original length"
)
def dynamic_below_original() -> None:
    for seq_len in (None, 1, 100, 128):
        inv_freq, factor = expect_pair(
            _student().dynamic_ntk_scaling(
                32, 10000.0, factor=2.0, original_max_len=128, seq_len=seq_len
            ),
            "dynamic_ntk",
        )
        expect_array(
            inv_freq,
            as_tensor(plain(32, 10000.0)),
            name=f"dynamic_ntk_scaling(..., seq_len={seq_len})[0]",
            mistakes={
                "shrunk": (
                    plain(32, 10000.0 * (2.0 * 100 / 128 - 1.0) ** (32 / 30))
                    if seq_len == 100
                    else np.zeros(16),
                    "Por debajo de original_max_len la base no cambia: usa L = max(seq_len, L0).",
                    "Below original_max_len the base does not change: use L = max(seq_len, L0).",
                )
            },
        )
        expect_factor(factor, 1.0, "dynamic_ntk_scaling")


@checks.add(
    "dynamic_ntk_scaling",
    "base b·(s·L/L0 - (s-1))^(r/(r-2)) más allá de L0",
    "base b·(s·L/L0 - (s-1))^(r/(r-2)) beyond L0",
)
def dynamic_beyond_original() -> None:
    r, base, s, l0, length = 128, 10000.0, 2.0, 4096, 8192
    inv_freq, _ = expect_pair(
        _student().dynamic_ntk_scaling(r, base, factor=s, original_max_len=l0, seq_len=length),
        "dynamic_ntk",
    )
    new_base = base * (s * length / l0 - (s - 1)) ** (r / (r - 2))  # 30527.74
    expect_array(
        inv_freq,
        as_tensor(plain(r, new_base)),
        name="dynamic_ntk_scaling(128, factor=2, original_max_len=4096, seq_len=8192)[0]",
        rtol=1e-5,
        mistakes={
            "ratio_only": (
                plain(r, base * (length / l0) ** (r / (r - 2))),
                "Falta el factor: la escala es s·L/L0 - (s-1), no L/L0.",
                "The factor is missing: the scale is s·L/L0 - (s-1), not L/L0.",
            ),
            "static": (
                plain(r, base * s ** (r / (r - 2))),
                "Eso es NTK estático con factor s: la escala depende de seq_len.",
                "That is static NTK with factor s: the scale depends on seq_len.",
            ),
        },
    )


# --- YaRN ---------------------------------------------------------------------------------------


@checks.add(
    "yarn_correction_range",
    "r=128, b=1e4, L0=4096 da (20, 46)",
    "r=128, b=1e4, L0=4096 gives (20, 46)",
)
def yarn_range_worked_case() -> None:
    got = _student().yarn_correction_range(128, 10000.0, 4096)
    if not (isinstance(got, tuple) and len(got) == 2):
        raise CheckFailure(
            "yarn_correction_range debe devolver una tupla (lo, hi).",
            "yarn_correction_range must return a tuple (lo, hi).",
        )
    lo, hi = (float(v) for v in got)
    if (lo, hi) == (20.0, 46.0):
        return
    es = f"yarn_correction_range(128, 10000, 4096) = ({lo:g}, {hi:g}); se esperaba (20, 46)."
    en = f"yarn_correction_range(128, 10000, 4096) = ({lo:g}, {hi:g}); expected (20, 46)."
    if math.isclose(lo, 20.944, abs_tol=1e-2) and math.isclose(hi, 45.027, abs_tol=1e-2):
        es += " Con truncate=True, redondea hacia fuera: floor(lo) y ceil(hi)."
        en += " With truncate=True, round outwards: floor(lo) and ceil(hi)."
    elif (lo, hi) == (46.0, 20.0) or (lo, hi) == (45.0, 21.0):
        es += " lo es la pareja que da beta_fast = 32 vueltas; hi, la que da beta_slow = 1."
        en += (
            " lo is the pair that makes beta_fast = 32 turns; hi, the one that makes beta_slow = 1."
        )
    raise CheckFailure(es, en)


@checks.add(
    "yarn_correction_range",
    "sin redondear, y recortada a [0, r-1]",
    "unrounded, and clamped to [0, r-1]",
)
def yarn_range_raw_and_clamped() -> None:
    scaling = _student()
    raw = tuple(float(v) for v in scaling.yarn_correction_range(64, 500.0, 1024, truncate=False))
    want = tuple(64 * math.log(1024 / (2 * math.pi * n)) / (2 * math.log(500.0)) for n in (32, 1))
    if not np.allclose(raw, want, rtol=1e-9):
        raise CheckFailure(
            f"yarn_correction_range(64, 500, 1024, truncate=False) = {raw}; se esperaba {want}: "
            "i(n) = r·ln(L0 / (2π·n)) / (2·ln b).",
            f"yarn_correction_range(64, 500, 1024, truncate=False) = {raw}; expected {want}: "
            "i(n) = r·ln(L0 / (2π·n)) / (2·ln b).",
        )
    small = tuple(float(v) for v in scaling.yarn_correction_range(32, 10000.0, 128))
    if small != (0.0, 6.0):
        raise CheckFailure(
            f"yarn_correction_range(32, 10000, 128) = {small}; se esperaba (0, 6): i(32) es "
            "negativo y lo se recorta a 0.",
            f"yarn_correction_range(32, 10000, 128) = {small}; expected (0, 6): i(32) is "
            "negative and lo is clamped to 0.",
        )


def yarn_expected(r: int, base: float, l0: int, s: float) -> np.ndarray:
    raw = [r * math.log(l0 / (2 * math.pi * n)) / (2 * math.log(base)) for n in (32.0, 1.0)]
    lo, hi = max(math.floor(raw[0]), 0), min(math.ceil(raw[1]), r - 1)
    ramp = np.clip((np.arange(r // 2) - lo) / (hi - lo), 0, 1)
    theta = plain(r, base)
    return theta * (1 - ramp) + theta / s * ramp


@checks.add("yarn_scaling", "la rampa entre θ y θ/s", "the ramp between θ and θ/s")
def yarn_frequencies() -> None:
    r, base, l0, s = 128, 10000.0, 4096, 4.0
    inv_freq, _ = expect_pair(
        _student().yarn_scaling(r, base, factor=s, original_max_len=l0), "yarn"
    )
    theta = plain(r, base)
    ramp = np.clip((np.arange(r // 2) - 20) / 26, 0, 1)
    expect_array(
        inv_freq,
        as_tensor(yarn_expected(r, base, l0, s)),
        name="yarn_scaling(128, factor=4, original_max_len=4096)[0]",
        rtol=1e-5,
        mistakes={
            "reversed": (
                theta / s * (1 - ramp) + theta * ramp,
                "La rampa va al revés: las parejas rápidas (i <= lo) se conservan y las lentas "
                "(i >= hi) se dividen por s.",
                "The ramp is reversed: fast pairs (i <= lo) are kept and slow ones (i >= hi) are "
                "divided by s.",
            ),
            "all_divided": (
                theta / s,
                "Todas las parejas están divididas por s: eso es la interpolación lineal.",
                "Every pair is divided by s: that is linear interpolation.",
            ),
        },
    )


@checks.add(
    "yarn_scaling",
    "factor de atención 0.1·ln(s) + 1",
    "attention factor 0.1·ln(s) + 1",
)
def yarn_attention_factor() -> None:
    scaling = _student()
    for s in (4.0, 16.0, 1.0):
        _, factor = expect_pair(scaling.yarn_scaling(32, factor=s, original_max_len=128), "yarn")
        want = 0.1 * math.log(s) + 1 if s > 1 else 1.0
        expect_factor(
            factor,
            want,
            f"yarn_scaling(..., factor={s:g})",
            mistakes={
                "squared": (
                    want**2,
                    "Ese es el cuadrado: el factor multiplica cos y sin, y los logits quedan "
                    "multiplicados por su cuadrado. Devuelve 0.1·ln(s) + 1.",
                    "That is the square: the factor multiplies cos and sin, and the logits end up "
                    "multiplied by its square. Return 0.1·ln(s) + 1.",
                ),
                "sqrt": (
                    math.sqrt(want),
                    "Sobra la raíz: sqrt(1/t) = 0.1·ln(s) + 1 ya es el factor de cos y sin.",
                    "Drop the square root: sqrt(1/t) = 0.1·ln(s) + 1 already is the factor of "
                    "cos and sin.",
                ),
            },
        )
    _, given = expect_pair(
        scaling.yarn_scaling(32, factor=4.0, original_max_len=128, attention_factor=1.5), "yarn"
    )
    expect_factor(given, 1.5, "yarn_scaling(..., attention_factor=1.5)")


# --- Llama 3 ------------------------------------------------------------------------------------


def llama3_expected(r, base, s, l0, low=1.0, high=4.0) -> np.ndarray:
    out = []
    for theta in plain(r, base):
        wavelength = 2 * math.pi / theta
        if wavelength < l0 / high:
            out.append(theta)
        elif wavelength > l0 / low:
            out.append(theta / s)
        else:
            w = (l0 / wavelength - low) / (high - low)
            out.append((1 - w) * theta / s + w * theta)
    return np.array(out)


@checks.add(
    "llama3_scaling",
    "29 parejas intactas, 6 mezcladas, 29 divididas (Llama 3.1)",
    "29 pairs kept, 6 blended, 29 divided (Llama 3.1)",
)
def llama3_worked_case() -> None:
    r, base, s, l0 = 128, 500000.0, 8.0, 8192
    inv_freq, factor = expect_pair(
        _student().llama3_scaling(r, base, factor=s, original_max_len=l0), "llama3"
    )
    theta = plain(r, base)
    wavelength = 2 * math.pi / theta
    w = (l0 / wavelength - 1) / 3
    swapped = np.where(
        wavelength < l0 / 4,
        theta,
        np.where(wavelength > l0, theta / s, w * theta / s + (1 - w) * theta),
    )
    expect_array(
        inv_freq,
        as_tensor(llama3_expected(r, base, s, l0)),
        name="llama3_scaling(128, 5e5, factor=8, original_max_len=8192)[0]",
        rtol=1e-5,
        mistakes={
            "swapped": (
                swapped,
                "En la banda intermedia los pesos están cambiados: w vale 1 en λ = L0/h (se "
                "conserva θ) y 0 en λ = L0/l (θ/s), para que no haya saltos.",
                "In the middle band the weights are swapped: w is 1 at λ = L0/h (θ is kept) and "
                "0 at λ = L0/l (θ/s), so that there are no jumps.",
            ),
        },
    )
    expect_factor(factor, 1.0, "llama3_scaling")


@checks.add(
    "llama3_scaling",
    "low_freq_factor y high_freq_factor",
    "low_freq_factor and high_freq_factor",
)
def llama3_options() -> None:
    r, base, s, l0 = 32, 10000.0, 4.0, 256
    inv_freq, _ = expect_pair(
        _student().llama3_scaling(
            r, base, factor=s, original_max_len=l0, low_freq_factor=2.0, high_freq_factor=8.0
        ),
        "llama3",
    )
    expect_array(
        inv_freq,
        as_tensor(llama3_expected(r, base, s, l0, 2.0, 8.0)),
        name="llama3_scaling(32, factor=4, original_max_len=256, low=2, high=8)[0]",
        rtol=1e-5,
    )
