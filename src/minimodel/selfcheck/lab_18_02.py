"""Visible checks for lab 18.02 (RoPE scaling). Students may read these; the grader's differ.

The expected frequencies and attention factors are the reference solution's, stored for these
inputs only (``minimodel.selfcheck.snapshots``); the worked cases' numbers are the lesson's.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from minimodel.selfcheck.compare import CheckFailure, CheckList, StudentModule, closest_mistake
from minimodel.selfcheck.contracts import broken
from minimodel.selfcheck.snapshots import Snapshots

checks = CheckList()
scaling = StudentModule("scaling")
snap = Snapshots("18.02")


def scaled(method: str, *args, **kwargs) -> tuple[torch.Tensor, float]:
    """The student's ``(inv_freq, attention_factor)`` from ``scaling.<method>(*args, **kwargs)``,
    or a clear failure."""
    result = getattr(scaling, method)(*args, **kwargs)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise CheckFailure(*broken("scaling", "not-a-pair", method, type(result).__name__))
    inv_freq, factor = result
    if isinstance(factor, torch.Tensor) or not isinstance(factor, (int, float)):
        returned = f"(inv_freq, {type(factor).__name__})"
        raise CheckFailure(*broken("scaling", "factor-type", method, returned))
    return inv_freq, float(factor)


def expect_factor(actual: float, expected: float, name: str, mistakes: dict | None = None) -> None:
    """Fail unless ``actual`` is ``expected`` (relative 1e-6); name a mistake whose stored value
    it matches."""
    if math.isclose(actual, expected, rel_tol=1e-6):
        return
    es = f"{name}: attention_factor = {actual:.6g}, se esperaba {expected:.6g}."
    en = f"{name}: attention_factor = {actual:.6g}, expected {expected:.6g}."
    if why := closest_mistake(np.array(actual), mistakes):
        es, en = f"{es} {why[0]}", f"{en} {why[1]}"
    raise CheckFailure(es, en)


def expect_stored_factor(actual: float, name: str) -> None:
    """``expect_factor`` against the stored attention factor ``name``."""
    expected, mistakes = snap.answer(np.array(actual, dtype=np.float64), name)
    expect_factor(actual, float(expected), name, mistakes)


# --- linear -------------------------------------------------------------------------------------


@checks.add("linear_scaling", "divide cada frecuencia por s", "divides every frequency by s")
def linear_values() -> None:
    inv_freq, factor = scaled("linear_scaling", 16, 10000.0, factor=4.0)
    snap.expect(inv_freq, "linear_scaling(16, factor=4)[0]")
    expect_factor(factor, 1.0, "linear_scaling")


# --- NTK ----------------------------------------------------------------------------------------


@checks.add("ntk_scaling", "base b·s^(r/(r-2))", "base b·s^(r/(r-2))")
def ntk_values() -> None:
    inv_freq, factor = scaled("ntk_scaling", 32, 10000.0, factor=4.0)
    snap.expect(inv_freq, "ntk_scaling(32, factor=4)[0]", rtol=1e-5)
    expect_factor(factor, 1.0, "ntk_scaling")


# --- dynamic NTK --------------------------------------------------------------------------------


@checks.add("dynamic_ntk_scaling", "RoPE sin cambios hasta L0",
            "plain RoPE up to the original length")
def dynamic_below_original() -> None:
    for seq_len in (None, 100, 128, 1):
        inv_freq, factor = scaled("dynamic_ntk_scaling", 12, 10000.0, factor=2.0,
                                  original_max_len=128, seq_len=seq_len)
        name = f"dynamic_ntk_scaling(12, factor=2, original_max_len=128, seq_len={seq_len})[0]"
        snap.expect(inv_freq, name)
        expect_factor(factor, 1.0, "dynamic_ntk_scaling")


@checks.add("dynamic_ntk_scaling", "base b·(s·L/L0 - (s-1))^(r/(r-2)) más allá de L0",
            "base b·(s·L/L0 - (s-1))^(r/(r-2)) beyond L0")
def dynamic_beyond_original() -> None:
    inv_freq, _ = scaled("dynamic_ntk_scaling", 128, 10000.0, factor=2.0,
                         original_max_len=4096, seq_len=8192)
    snap.expect(  # the new base is 30527.74
        inv_freq,
        "dynamic_ntk_scaling(128, factor=2, original_max_len=4096, seq_len=8192)[0]",
        rtol=1e-5,
    )


# --- YaRN ---------------------------------------------------------------------------------------


def expect_range(got: object, name: str, hint: tuple[str, str] = ("", "")) -> None:
    """Fail unless the student's ``(lo, hi)`` is the stored one; name a mistake whose stored
    ends it has (else add ``hint``)."""
    if not (isinstance(got, tuple) and len(got) == 2):
        raise CheckFailure(f"{name} debe devolver una tupla (lo, hi).",
                           f"{name} must return a tuple (lo, hi).")
    lo, hi = (float(v) for v in got)
    expected, mistakes = snap.answer(np.array([lo, hi]), name)
    if np.allclose([lo, hi], expected, rtol=1e-9, atol=0):
        return
    want = ", ".join(f"{float(v):g}" for v in expected)
    es = f"{name} = ({lo:g}, {hi:g}); se esperaba ({want})."
    en = f"{name} = ({lo:g}, {hi:g}); expected ({want})."
    why = closest_mistake(np.array([lo, hi]), mistakes) or hint
    raise CheckFailure(f"{es} {why[0]}".strip(), f"{en} {why[1]}".strip())


@checks.add("yarn_correction_range", "r=128, b=1e4, L0=4096 da (20, 46)",
            "r=128, b=1e4, L0=4096 gives (20, 46)")
def yarn_range_worked_case() -> None:
    expect_range(scaling.yarn_correction_range(128, 10000.0, 4096),
                 "yarn_correction_range(128, 10000, 4096)")


@checks.add("yarn_correction_range", "sin redondear, y recortada a [0, r-1]",
            "unrounded, and clamped to [0, r-1]")
def yarn_range_raw_and_clamped() -> None:
    expect_range(scaling.yarn_correction_range(64, 500.0, 1024, truncate=False),
                 "yarn_correction_range(64, 500, 1024, truncate=False)",
                 ("i(n) = r·ln(L0 / (2π·n)) / (2·ln b).", "i(n) = r·ln(L0 / (2π·n)) / (2·ln b)."))
    # i(32) is negative here: lo is clamped to 0
    expect_range(scaling.yarn_correction_range(32, 10000.0, 128),
                 "yarn_correction_range(32, 10000, 128)")


@checks.add("yarn_scaling", "la rampa entre θ y θ/s", "the ramp between θ and θ/s")
def yarn_frequencies() -> None:
    inv_freq, _ = scaled("yarn_scaling", 128, 10000.0, factor=4.0, original_max_len=4096)
    snap.expect(inv_freq, "yarn_scaling(128, factor=4, original_max_len=4096)[0]", rtol=1e-5)
    unrounded, _ = scaled("yarn_scaling", 64, 500.0, factor=4.0, original_max_len=1024,
                          truncate=False)
    snap.expect(unrounded,
                "yarn_scaling(64, 500, factor=4, original_max_len=1024, truncate=False)[0]",
                rtol=1e-5)


@checks.add("yarn_scaling", "factor de atención 0.1·ln(s) + 1", "attention factor 0.1·ln(s) + 1")
def yarn_attention_factor() -> None:
    for s in (4.0, 16.0, 1.0):
        _, factor = scaled("yarn_scaling", 32, factor=s, original_max_len=128)
        expect_stored_factor(factor, f"yarn_scaling(32, factor={s:g}, original_max_len=128)[1]")
    _, given = scaled("yarn_scaling", 32, factor=4.0, original_max_len=128,
                      attention_factor=1.5)
    expect_stored_factor(given, "yarn_scaling(32, factor=4, original_max_len=128, "
                         "attention_factor=1.5)[1]")


# --- Llama 3 ------------------------------------------------------------------------------------


@checks.add("llama3_scaling", "29 parejas intactas, 6 mezcladas, 29 divididas (Llama 3.1)",
            "29 pairs kept, 6 blended, 29 divided (Llama 3.1)")
def llama3_worked_case() -> None:
    inv_freq, factor = scaled("llama3_scaling", 128, 500000.0, factor=8.0,
                              original_max_len=8192)
    snap.expect(inv_freq, "llama3_scaling(128, 5e5, factor=8, original_max_len=8192)[0]", rtol=1e-5)
    expect_factor(factor, 1.0, "llama3_scaling")


@checks.add("llama3_scaling", "low_freq_factor y high_freq_factor",
            "low_freq_factor and high_freq_factor")
def llama3_options() -> None:
    inv_freq, _ = scaled("llama3_scaling", 32, 10000.0, factor=4.0, original_max_len=256,
                         low_freq_factor=2.0, high_freq_factor=8.0)
    snap.expect(inv_freq, "llama3_scaling(32, factor=4, original_max_len=256, low=2, high=8)[0]",
                rtol=1e-5)


# --- LongRoPE -----------------------------------------------------------------------------------

# 8 pairs (r = 16), L0 = 64, s = 8: short factors near 1, long ones rising to 10
SHORT = [1.0, 1.0, 1.05, 1.1, 1.2, 1.3, 1.4, 1.5]
LONG = [1.0, 1.1, 1.3, 1.8, 3.0, 5.0, 8.0, 10.0]


@checks.add("longrope_scaling", "factores cortos hasta L0, largos después",
            "short factors up to L0, long ones past it")
def longrope_switch() -> None:
    for seq_len in (None, 64, 65, 600):
        inv_freq, _ = scaled("longrope_scaling", 16, 10000.0, factor=8.0, original_max_len=64,
                             seq_len=seq_len, short_factor=SHORT, long_factor=LONG)
        snap.expect(inv_freq, f"longrope_scaling(16, factor=8, original_max_len=64, "
                              f"seq_len={seq_len}, short, long)[0]", rtol=1e-5)


@checks.add("longrope_scaling", "sin factores: RoPE hasta L0, YaRN después",
            "no factors: plain RoPE up to L0, YaRN past it")
def longrope_defaults() -> None:
    for seq_len in (48, 49):
        inv_freq, _ = scaled("longrope_scaling", 12, 500.0, factor=6.0, original_max_len=48,
                             seq_len=seq_len)
        snap.expect(inv_freq, f"longrope_scaling(12, base=500, factor=6, original_max_len=48, "
                              f"seq_len={seq_len})[0]", rtol=1e-5)


@checks.add("longrope_scaling", "factor de atención sqrt(1 + ln(s)/ln(L0))",
            "attention factor sqrt(1 + ln(s)/ln(L0))")
def longrope_attention_factor() -> None:
    for s in (8.0, 32.0, 1.0):
        _, factor = scaled("longrope_scaling", 16, factor=s, original_max_len=64,
                           short_factor=SHORT, long_factor=LONG)
        expect_stored_factor(factor, f"longrope_scaling(16, factor={s:g}, original_max_len=64)[1]")
    _, given = scaled("longrope_scaling", 16, factor=8.0, original_max_len=64,
                      attention_factor=1.5)
    expect_stored_factor(given, "longrope_scaling(16, factor=8, original_max_len=64, "
                         "attention_factor=1.5)[1]")
