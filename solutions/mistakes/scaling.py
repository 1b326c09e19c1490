"""Classic mistakes in scaling.py (lesson 18.02): what a student who makes each one writes.

Each function is a wrong version of one scaling, with that scaling's call. See
``grader/mistakes.py``.
"""

import math

import torch

from grader.mistakes import mistake
from minimodel.positional.rope import rope_frequencies
from minimodel.positional.scaling import linear_scaling as right_linear
from minimodel.positional.scaling import ntk_scaling as right_ntk
from minimodel.positional.scaling import yarn_correction_range as right_range
from minimodel.positional.scaling import yarn_scaling as right_yarn


@mistake("linear_scaling", "times",
         es="Las frecuencias deben bajar: divide por s, no multipliques.",
         en="The frequencies must go down: divide by s, do not multiply.")
def times(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None):
    return rope_frequencies(rotary_dim, base) * factor, 1.0


@mistake("ntk_scaling", "ntk_base_times_s",
         es="Parece que usaste la base b·s; la nueva base es b·s^(r/(r-2)), para que la pareja "
            "más lenta se divida exactamente por s.",
         en="It looks like you used the base b·s; the new base is b·s^(r/(r-2)), so that the "
            "slowest pair is divided by exactly s.")
def ntk_base_times_s(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None):
    return rope_frequencies(rotary_dim, base * factor), 1.0


@mistake("ntk_scaling", "ntk_divides",
         es="Eso es la interpolación lineal: NTK no divide las frecuencias, cambia la base.",
         en="That is linear interpolation: NTK does not divide the frequencies, it changes "
            "the base.")
def ntk_divides(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None):
    return right_linear(rotary_dim, base, factor=factor)


def _dynamic(rotary_dim: int, base: float, scale: float) -> tuple[torch.Tensor, float]:
    return rope_frequencies(rotary_dim, base * scale ** (rotary_dim / (rotary_dim - 2))), 1.0


@mistake("dynamic_ntk_scaling", "dynamic_shrunk",
         es="Por debajo de original_max_len la base no cambia: usa L = max(seq_len, L0).",
         en="Below original_max_len the base does not change: use L = max(seq_len, L0).")
def dynamic_shrunk(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None):
    length = original_max_len if seq_len is None else seq_len
    return _dynamic(rotary_dim, base, factor * length / original_max_len - (factor - 1))


@mistake("dynamic_ntk_scaling", "dynamic_ratio_only",
         es="Falta el factor: la escala es s·L/L0 - (s-1), no L/L0.",
         en="The factor is missing: the scale is s·L/L0 - (s-1), not L/L0.")
def dynamic_ratio_only(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None):
    if seq_len is None or seq_len <= original_max_len:
        return rope_frequencies(rotary_dim, base), 1.0
    return _dynamic(rotary_dim, base, seq_len / original_max_len)


@mistake("dynamic_ntk_scaling", "dynamic_static",
         es="Eso es NTK estático con factor s: la escala depende de seq_len.",
         en="That is static NTK with factor s: the scale depends on seq_len.")
def dynamic_static(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None):
    return right_ntk(rotary_dim, base, factor=factor)


@mistake("yarn_correction_range", "range_not_rounded",
         es="Con truncate=True, redondea hacia fuera: floor(lo) y ceil(hi).",
         en="With truncate=True, round outwards: floor(lo) and ceil(hi).")
def range_not_rounded(rotary_dim, base, original_max_len, beta_fast=32.0, beta_slow=1.0, *,
                      truncate=True):
    return right_range(rotary_dim, base, original_max_len, beta_fast, beta_slow, truncate=False)


@mistake("yarn_correction_range", "range_swapped",
         es="lo es la pareja que da beta_fast = 32 vueltas; hi, la que da beta_slow = 1.",
         en="lo is the pair that makes beta_fast = 32 turns; hi, the one that makes beta_slow = 1.")
def range_swapped(rotary_dim, base, original_max_len, beta_fast=32.0, beta_slow=1.0, *,
                  truncate=True):
    lo, hi = right_range(rotary_dim, base, original_max_len, beta_fast, beta_slow,
                         truncate=truncate)
    return hi, lo


@mistake("yarn_correction_range", "range_swapped_before_rounding",
         es="lo es la pareja que da beta_fast = 32 vueltas; hi, la que da beta_slow = 1.",
         en="lo is the pair that makes beta_fast = 32 turns; hi, the one that makes beta_slow = 1.")
def range_swapped_before_rounding(rotary_dim, base, original_max_len, beta_fast=32.0,
                                  beta_slow=1.0, *, truncate=True):
    def pair_turning(turns: float) -> float:
        wavelength = original_max_len / turns
        return rotary_dim * math.log(wavelength / (2 * math.pi)) / (2 * math.log(base))

    lo, hi = pair_turning(beta_slow), pair_turning(beta_fast)
    if truncate:
        lo, hi = math.floor(lo), math.ceil(hi)
    return max(float(lo), 0.0), min(float(hi), float(rotary_dim - 1))


def _ramp(rotary_dim, base, original_max_len, beta_fast, beta_slow, truncate) -> torch.Tensor:
    lo, hi = right_range(rotary_dim, base, original_max_len, beta_fast, beta_slow,
                         truncate=truncate)
    return ((torch.arange(rotary_dim // 2, dtype=torch.float32) - lo) / (hi - lo)).clamp(0, 1)


@mistake("yarn_scaling", "yarn_reversed",
         es="La rampa va al revés: las parejas rápidas (i <= lo) se conservan y las lentas "
            "(i >= hi) se dividen por s.",
         en="The ramp is reversed: fast pairs (i <= lo) are kept and slow ones (i >= hi) are "
            "divided by s.")
def yarn_reversed(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None,
                  beta_fast=32.0, beta_slow=1.0, truncate=True, attention_factor=None):
    theta = rope_frequencies(rotary_dim, base)
    ramp = _ramp(rotary_dim, base, original_max_len, beta_fast, beta_slow, truncate)
    _, scale = right_yarn(rotary_dim, base, factor=factor, original_max_len=original_max_len,
                          attention_factor=attention_factor)
    return theta / factor * (1 - ramp) + theta * ramp, scale


@mistake("yarn_scaling", "yarn_all_divided",
         es="Todas las parejas están divididas por s: eso es la interpolación lineal.",
         en="Every pair is divided by s: that is linear interpolation.")
def yarn_all_divided(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None,
                     beta_fast=32.0, beta_slow=1.0, truncate=True, attention_factor=None):
    _, scale = right_yarn(rotary_dim, base, factor=factor, original_max_len=original_max_len,
                          attention_factor=attention_factor)
    return rope_frequencies(rotary_dim, base) / factor, scale


@mistake("yarn_scaling", "yarn_factor_squared",
         es="Ese es el cuadrado: el factor multiplica cos y sin, y los logits quedan "
            "multiplicados por su cuadrado. Devuelve 0.1·ln(s) + 1.",
         en="That is the square: the factor multiplies cos and sin, and the logits end up "
            "multiplied by its square. Return 0.1·ln(s) + 1.")
def yarn_factor_squared(rotary_dim, base=10000.0, *, factor, original_max_len=None,
                        seq_len=None, beta_fast=32.0, beta_slow=1.0, truncate=True,
                        attention_factor=None):
    inv_freq, scale = right_yarn(rotary_dim, base, factor=factor,
                                 original_max_len=original_max_len, beta_fast=beta_fast,
                                 beta_slow=beta_slow, truncate=truncate)
    return inv_freq, scale**2 if attention_factor is None else float(attention_factor)


@mistake("yarn_scaling", "yarn_factor_sqrt",
         es="Sobra la raíz: sqrt(1/t) = 0.1·ln(s) + 1 ya es el factor de cos y sin.",
         en="Drop the square root: sqrt(1/t) = 0.1·ln(s) + 1 already is the factor of "
            "cos and sin.")
def yarn_factor_sqrt(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None,
                     beta_fast=32.0, beta_slow=1.0, truncate=True, attention_factor=None):
    inv_freq, scale = right_yarn(rotary_dim, base, factor=factor,
                                 original_max_len=original_max_len, beta_fast=beta_fast,
                                 beta_slow=beta_slow, truncate=truncate)
    return inv_freq, math.sqrt(scale) if attention_factor is None else float(attention_factor)


@mistake("llama3_scaling", "llama3_weights_swapped",
         es="En la banda intermedia los pesos están cambiados: w vale 1 en λ = L0/h (se "
            "conserva θ) y 0 en λ = L0/l (θ/s), para que no haya saltos.",
         en="In the middle band the weights are swapped: w is 1 at λ = L0/h (θ is kept) and "
            "0 at λ = L0/l (θ/s), so that there are no jumps.")
def llama3_weights_swapped(rotary_dim, base=10000.0, *, factor, original_max_len=None,
                           seq_len=None, low_freq_factor=1.0, high_freq_factor=4.0):
    theta = rope_frequencies(rotary_dim, base)
    wavelength = 2 * math.pi / theta
    w = (original_max_len / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
    blended = w * theta / factor + (1 - w) * theta
    scaled = torch.where(wavelength > original_max_len / low_freq_factor, theta / factor, blended)
    return torch.where(wavelength < original_max_len / high_freq_factor, theta, scaled), 1.0
