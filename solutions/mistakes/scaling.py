"""Classic mistakes in scaling.py (lesson 18.02): what a student who makes each one writes.

Each function is a wrong version of one scaling, with that scaling's call. See
``grader/build/mistakes.py``.
"""

import math

import torch

from grader.build.mistakes import ignoring, mistake
from minimodel.positional.rope import rope_frequencies
from minimodel.positional.scaling import linear_scaling as right_linear
from minimodel.positional.scaling import longrope_scaling as right_longrope
from minimodel.positional.scaling import ntk_scaling as right_ntk
from minimodel.positional.scaling import yarn_correction_range as right_range
from minimodel.positional.scaling import yarn_scaling as right_yarn


@mistake("linear_scaling", "multiplied",
         es="La interpolación lineal divide cada frecuencia entre s (las posiciones se "
            "comprimen): tu código las multiplica.",
         en="Linear interpolation divides every frequency by s (positions are squeezed "
            "together): your code multiplies them.")
def multiplied(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None):
    return rope_frequencies(rotary_dim, base) * factor, 1.0


# --- NTK ----------------------------------------------------------------------------------------

@mistake("ntk_scaling", "no-exponent",
         es="La nueva base es b·s^(r/(r−2)), no b·s: con ese exponente la pareja más lenta, "
            "θ = b^(−(r−2)/r), queda dividida exactamente por s.",
         en="The new base is b·s^(r/(r−2)), not b·s: with that exponent the slowest pair, "
            "θ = b^(−(r−2)/r), is divided by exactly s.")
def no_exponent(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None):
    return rope_frequencies(rotary_dim, base * factor), 1.0


@mistake("ntk_scaling", "inverted-exponent",
         es="El exponente de s es r/(r−2) (mayor que 1), no (r−2)/r.",
         en="The exponent of s is r/(r−2) (above 1), not (r−2)/r.")
def inverted_exponent(rotary_dim, base=10000.0, *, factor, original_max_len=None,
                      seq_len=None):
    return rope_frequencies(rotary_dim, base * factor ** ((rotary_dim - 2) / rotary_dim)), 1.0


divided = mistake(
    "ntk_scaling", "divided",
    es="NTK no divide las frecuencias entre s (eso es la interpolación lineal): cambia la "
       "base y deja intacta la pareja 0.",
    en="NTK does not divide the frequencies by s (that is linear interpolation): it changes "
       "the base and leaves pair 0 untouched.")(right_linear)


# --- dynamic NTK --------------------------------------------------------------------------------

def _dynamic(rotary_dim: int, base: float, scale: float,
             exponent: bool = True) -> tuple[torch.Tensor, float]:
    power = rotary_dim / (rotary_dim - 2) if exponent else 1.0
    return rope_frequencies(rotary_dim, base * scale ** power), 1.0


@mistake("dynamic_ntk_scaling", "below-original",
         es="Hasta original_max_len (y con seq_len=None) la base no cambia: usa "
            "L = max(seq_len, L0) y devuelve RoPE sin cambios.",
         en="Up to original_max_len (and with seq_len=None) the base does not change: use "
            "L = max(seq_len, L0) and return plain RoPE.")
def below_original(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None):
    length = original_max_len if seq_len is None else seq_len
    return _dynamic(rotary_dim, base, factor * length / original_max_len - (factor - 1))


@mistake("dynamic_ntk_scaling", "ratio-only",
         es="Falta el factor en la escala: base' = b·(s·L/L0 − (s − 1))^(r/(r−2)); con L/L0 a "
            "secas la base crece a otro ritmo.",
         en="The factor is missing from the scale: base' = b·(s·L/L0 − (s − 1))^(r/(r−2)); with "
            "plain L/L0 the base grows at another rate.")
def ratio_only(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None):
    if seq_len is None or seq_len <= original_max_len:
        return rope_frequencies(rotary_dim, base), 1.0
    return _dynamic(rotary_dim, base, seq_len / original_max_len)


static = mistake(
    "dynamic_ntk_scaling", "static",
    es="Eso es NTK estático: en el dinámico la escala depende de la longitud actual "
       "seq_len, y hasta L0 no cambia nada.",
    en="That is static NTK: in the dynamic one the scale depends on the current length "
       "seq_len, and up to L0 nothing changes.")(right_ntk)


@mistake("dynamic_ntk_scaling", "dynamic-no-exponent",
         es="Falta el exponente r/(r−2) sobre la escala: base' = b·escala^(r/(r−2)).",
         en="The exponent r/(r−2) over the scale is missing: base' = b·scale^(r/(r−2)).")
def dynamic_no_exponent(rotary_dim, base=10000.0, *, factor, original_max_len=None,
                        seq_len=None):
    if seq_len is None or seq_len <= original_max_len:
        return rope_frequencies(rotary_dim, base), 1.0
    return _dynamic(rotary_dim, base, factor * seq_len / original_max_len - (factor - 1),
                    exponent=False)


# --- YaRN's range -------------------------------------------------------------------------------

def _range(*, rounding=(math.floor, math.ceil), swap=False, clamp=True, two_pi=True):
    """``yarn_correction_range`` doing the reference's steps, one of them done wrong."""
    def yarn_correction_range(rotary_dim, base, original_max_len, beta_fast=32.0, beta_slow=1.0,
                              *, truncate=True) -> tuple[float, float]:
        def pair_turning(turns: float) -> float:
            wavelength = original_max_len / turns
            return rotary_dim * math.log(wavelength / (2 * math.pi if two_pi else 1.0)) / (
                2 * math.log(base))

        lo, hi = pair_turning(beta_fast), pair_turning(beta_slow)
        if swap:
            lo, hi = hi, lo
        if truncate:
            lo, hi = rounding[0](lo), rounding[1](hi)
        if clamp:
            lo, hi = max(float(lo), 0.0), min(float(hi), float(rotary_dim - 1))
        if lo == hi:
            hi += 0.001
        return float(lo), float(hi)

    return yarn_correction_range


@mistake("yarn_correction_range", "not-rounded",
         es="Con truncate=True los extremos se redondean hacia fuera: lo = floor(lo) y "
            "hi = ceil(hi) (y con truncate=False se dejan sin redondear).",
         en="With truncate=True the ends are rounded outwards: lo = floor(lo) and hi = ceil(hi) "
            "(and with truncate=False they are left unrounded).")
def not_rounded(rotary_dim, base, original_max_len, beta_fast=32.0, beta_slow=1.0, *,
                truncate=True):
    return right_range(rotary_dim, base, original_max_len, beta_fast, beta_slow, truncate=False)


rounded_in = mistake(
    "yarn_correction_range", "rounded-in",
    es="El redondeo es hacia fuera, floor(lo) y ceil(hi), para que la rampa no se "
       "estreche; tu código redondea hacia dentro.",
    en="The rounding is outwards, floor(lo) and ceil(hi), so that the ramp does not get "
       "narrower; your code rounds inwards.")(_range(rounding=(math.ceil, math.floor)))


always_rounded = mistake(
    "yarn_correction_range", "always-rounded",
    es="Con truncate=False los extremos quedan sin redondear.",
    en="With truncate=False the ends stay unrounded.")(ignoring(right_range, "truncate"))


SWAPPED = ("lo es la pareja que da beta_fast vueltas en L0 (las rápidas, que se conservan) y hi "
           "la que da beta_slow; tu código los intercambia.",
           "lo is the pair that makes beta_fast turns over L0 (the fast ones, which are kept) "
           "and hi the one that makes beta_slow; your code swaps them.")


swapped = mistake(
    "yarn_correction_range", "swapped", es=SWAPPED[0], en=SWAPPED[1])(_range(swap=True))


@mistake("yarn_correction_range", "returned-swapped", es=SWAPPED[0], en=SWAPPED[1])
def returned_swapped(rotary_dim, base, original_max_len, beta_fast=32.0, beta_slow=1.0, *,
                     truncate=True):
    lo, hi = right_range(rotary_dim, base, original_max_len, beta_fast, beta_slow,
                         truncate=truncate)
    return hi, lo


not_clamped = mistake(
    "yarn_correction_range", "not-clamped",
    es="Los extremos se recortan a [0, r − 1]: lo = max(lo, 0), hi = min(hi, r − 1), y si "
       "coinciden, hi + 0.001.",
    en="The ends are clamped to [0, r − 1]: lo = max(lo, 0), hi = min(hi, r − 1), and if "
       "they meet, hi + 0.001.")(_range(clamp=False))


no_two_pi = mistake(
    "yarn_correction_range", "no-two-pi",
    es="Una pareja de longitud de onda λ da L0/λ vueltas, y λ = 2π/θ: "
       "i(n) = r·ln(L0/(2π·n)) / (2·ln b); falta el 2π.",
    en="A pair of wavelength λ makes L0/λ turns, and λ = 2π/θ: "
       "i(n) = r·ln(L0/(2π·n)) / (2·ln b); the 2π is missing.")(_range(two_pi=False))


# --- YaRN's frequencies -------------------------------------------------------------------------

def _blend(rotary_dim, base, factor, lo, hi, *, reversed_ramp=False) -> torch.Tensor:
    theta = rope_frequencies(rotary_dim, base)
    ramp = ((torch.arange(rotary_dim // 2, dtype=torch.float32) - lo) / (hi - lo)).clamp(0, 1)
    if reversed_ramp:
        ramp = 1 - ramp
    return theta * (1 - ramp) + theta / factor * ramp


def _yarn_factor(rotary_dim, base, factor, original_max_len, attention_factor) -> float:
    return right_yarn(rotary_dim, base, factor=factor, original_max_len=original_max_len,
                      attention_factor=attention_factor)[1]


@mistake("yarn_scaling", "ramp-reversed",
         es="La rampa va al revés: las parejas rápidas (i ≤ lo) conservan θ_i y las lentas "
            "(i ≥ hi) pasan a θ_i/s.",
         en="The ramp is reversed: fast pairs (i ≤ lo) keep θ_i and slow ones (i ≥ hi) become "
            "θ_i/s.")
def ramp_reversed(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None,
                  beta_fast=32.0, beta_slow=1.0, truncate=True, attention_factor=None):
    lo, hi = right_range(rotary_dim, base, original_max_len, beta_fast, beta_slow,
                         truncate=truncate)
    return (_blend(rotary_dim, base, factor, lo, hi, reversed_ramp=True),
            _yarn_factor(rotary_dim, base, factor, original_max_len, attention_factor))


@mistake("yarn_scaling", "all-divided",
         es="Todas las parejas están divididas entre s: eso es la interpolación lineal. YaRN "
            "solo divide las lentas y mezcla las de en medio.",
         en="Every pair is divided by s: that is linear interpolation. YaRN divides only the "
            "slow ones and blends those in between.")
def all_divided(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None,
                beta_fast=32.0, beta_slow=1.0, truncate=True, attention_factor=None):
    scale = _yarn_factor(rotary_dim, base, factor, original_max_len, attention_factor)
    return rope_frequencies(rotary_dim, base) / factor, scale


@mistake("yarn_scaling", "extended-length",
         es="La rampa se mide con la longitud de entrenamiento L0 (original_max_len), no con la "
            "ampliada s·L0.",
         en="The ramp is measured on the training length L0 (original_max_len), not on the "
            "extended one, s·L0.")
def extended_length(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None,
                    beta_fast=32.0, beta_slow=1.0, truncate=True, attention_factor=None):
    lo, hi = _range()(rotary_dim, base, factor * original_max_len, beta_fast, beta_slow,
                      truncate=truncate)
    scale = _yarn_factor(rotary_dim, base, factor, original_max_len, attention_factor)
    return _blend(rotary_dim, base, factor, lo, hi), scale


truncate_ignored = mistake(
    "yarn_scaling", "truncate-ignored",
    es="yarn_scaling debe pasar truncate (y beta_fast, beta_slow) a yarn_correction_range.",
    en="yarn_scaling must pass truncate (and beta_fast, beta_slow) on to "
       "yarn_correction_range.")(ignoring(right_yarn, "truncate"))


# --- YaRN's attention factor --------------------------------------------------------------------

def _with_factor(wrong):
    """``yarn_scaling`` with the right frequencies and the attention factor
    ``wrong(0.1·ln s + 1, s)`` (a given ``attention_factor`` is still returned as it is)."""
    def yarn_scaling(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None,
                     beta_fast=32.0, beta_slow=1.0, truncate=True,
                     attention_factor=None) -> tuple[torch.Tensor, float]:
        inv_freq, scale = right_yarn(rotary_dim, base, factor=factor,
                                     original_max_len=original_max_len, beta_fast=beta_fast,
                                     beta_slow=beta_slow, truncate=truncate)
        return inv_freq, (wrong(scale, factor) if attention_factor is None
                          else float(attention_factor))

    return yarn_scaling


squared = mistake(
    "yarn_scaling", "squared",
    es="Ese es el cuadrado: el factor multiplica cos y sin, y los logits quedan "
       "multiplicados por su cuadrado. Devuelve 0.1·ln(s) + 1, no (0.1·ln(s) + 1)².",
    en="That is the square: the factor multiplies cos and sin, and the logits end up "
       "multiplied by its square. Return 0.1·ln(s) + 1, not (0.1·ln(s) + 1)²."
)(_with_factor(lambda scale, s: scale**2))


sqrt = mistake(
    "yarn_scaling", "sqrt",
    es="Sobra la raíz: sqrt(1/t) = 0.1·ln(s) + 1 ya es el factor de cos y sin.",
    en="Drop the square root: sqrt(1/t) = 0.1·ln(s) + 1 already is the factor of cos and "
       "sin.")(_with_factor(lambda scale, s: math.sqrt(scale)))


log10 = mistake(
    "yarn_scaling", "log10",
    es="El logaritmo es el natural: 0.1·ln(s) + 1 (math.log), no log10.",
    en="The logarithm is the natural one: 0.1·ln(s) + 1 (math.log), not log10."
)(_with_factor(lambda scale, s: 0.1 * math.log10(s) + 1.0 if s > 1 else 1.0))


given_ignored = mistake(
    "yarn_scaling", "given-ignored",
    es="Si se pasa attention_factor, ese es el factor que se devuelve.",
    en="When attention_factor is given, that is the factor returned."
)(ignoring(right_yarn, "attention_factor"))


# --- Llama 3 ------------------------------------------------------------------------------------

def _llama3(*, bands_swapped=False, weights_swapped=False):
    """``llama3_scaling`` doing the reference's steps, one of them done wrong."""
    def llama3_scaling(rotary_dim, base=10000.0, *, factor, original_max_len=None, seq_len=None,
                       low_freq_factor=1.0, high_freq_factor=4.0) -> tuple[torch.Tensor, float]:
        low, high = low_freq_factor, high_freq_factor
        theta = rope_frequencies(rotary_dim, base)
        wavelength = 2 * math.pi / theta
        w = (original_max_len / wavelength - low) / (high - low)
        if weights_swapped:
            w = 1 - w
        blended = (1 - w) * theta / factor + w * theta
        short, long = (theta / factor, theta) if bands_swapped else (theta, theta / factor)
        scaled = torch.where(wavelength > original_max_len / low, long, blended)
        return torch.where(wavelength < original_max_len / high, short, scaled), 1.0

    return llama3_scaling


bands_swapped = mistake(
    "llama3_scaling", "bands-swapped",
    es="Las bandas están al revés: se conservan las longitudes de onda CORTAS "
       "(λ < L0/high_freq_factor, frecuencias altas) y se dividen entre s las LARGAS "
       "(λ > L0/low_freq_factor).",
    en="The bands are swapped: the SHORT wavelengths (λ < L0/high_freq_factor, high "
       "frequencies) are kept and the LONG ones (λ > L0/low_freq_factor) are divided by s."
)(_llama3(bands_swapped=True))


weights_swapped = mistake(
    "llama3_scaling", "weights-swapped",
    es="En la banda intermedia los pesos están cambiados: w vale 1 en λ = L0/high (se "
       "conserva θ) y 0 en λ = L0/low (θ/s), para que no haya saltos.",
    en="In the middle band the weights are swapped: w is 1 at λ = L0/high (θ is kept) and "
       "0 at λ = L0/low (θ/s), so that there are no jumps.")(_llama3(weights_swapped=True))


# --- LongRoPE -----------------------------------------------------------------------------------

def _longrope(*, switch=lambda seq_len, original, factor: seq_len > original,
              multiplied=False, wrong_factor=None):
    """``longrope_scaling`` doing the reference's steps, one of them done wrong: ``switch`` says
    when the long factors are used, ``multiplied`` multiplies θ_i by λ_i, ``wrong_factor(s, L0)``
    is the attention factor when none is given."""
    def longrope_scaling(rotary_dim, base=10000.0, *, factor, original_max_len=None,
                         seq_len=None, short_factor=None, long_factor=None,
                         attention_factor=None) -> tuple[torch.Tensor, float]:
        theta = rope_frequencies(rotary_dim, base)
        long = seq_len is not None and switch(seq_len, original_max_len, factor)
        chosen = long_factor if long else short_factor
        if long and long_factor is None:
            inv_freq = right_yarn(rotary_dim, base, factor=factor,
                                  original_max_len=original_max_len)[0]
        elif chosen is None:
            inv_freq = theta
        else:
            lam = torch.as_tensor(chosen, dtype=torch.float32)
            inv_freq = theta * lam if multiplied else theta / lam
        _, scale = right_longrope(rotary_dim, base, factor=factor,
                                  original_max_len=original_max_len,
                                  attention_factor=attention_factor)
        if attention_factor is None and wrong_factor is not None:
            scale = wrong_factor(factor, original_max_len)
        return inv_freq, scale

    return longrope_scaling


switch_extended = mistake(
    "longrope_scaling", "switch-extended",
    es="El cambio a long_factor se hace en cuanto seq_len pasa de L0 (original_max_len), la "
       "longitud de entrenamiento, no al llegar a la longitud ampliada s·L0: entre L0 y s·L0 ya "
       "se usan los factores largos.",
    en="The switch to long_factor happens as soon as seq_len exceeds L0 (original_max_len), "
       "the training length, not at the extended length s·L0: between L0 and s·L0 the long "
       "factors are already in use.")(
    _longrope(switch=lambda seq_len, original, factor: seq_len > factor * original))


switch_at_original = mistake(
    "longrope_scaling", "switch-at-original",
    es="Con seq_len = L0 exactamente se usan todavía los factores cortos: la condición es "
       "seq_len > original_max_len, no >=.",
    en="At seq_len = L0 exactly the short factors are still used: the condition is "
       "seq_len > original_max_len, not >=.")(
    _longrope(switch=lambda seq_len, original, factor: seq_len >= original))


factor_multiplied = mistake(
    "longrope_scaling", "factor-multiplied",
    es="Cada factor divide la frecuencia de su pareja, θ_i/λ_i = 1/(λ_i·b^(2i/r)): un λ_i mayor "
       "que 1 hace girar la pareja más despacio. Tu código multiplica θ_i por λ_i.",
    en="Each factor divides its pair's frequency, θ_i/λ_i = 1/(λ_i·b^(2i/r)): a λ_i above 1 "
       "makes the pair turn more slowly. Your code multiplies θ_i by λ_i.")(
    _longrope(multiplied=True))


factor_forgotten = mistake(
    "longrope_scaling", "attention-factor-forgotten",
    es="Falta el factor de atención de LongRoPE: sqrt(1 + ln(s)/ln(L0)) (1 si s ≤ 1), que "
       "multiplica cos y sin a cualquier longitud; tu código devuelve 1.",
    en="LongRoPE's attention factor is missing: sqrt(1 + ln(s)/ln(L0)) (1 if s ≤ 1), which "
       "multiplies cos and sin at every length; your code returns 1.")(
    _longrope(wrong_factor=lambda s, original: 1.0))


factor_of_yarn = mistake(
    "longrope_scaling", "attention-factor-yarn",
    es="Ese es el factor de YaRN, 0.1·ln(s) + 1. El de LongRoPE depende también de L0: "
       "sqrt(1 + ln(s)/ln(L0)).",
    en="That is YaRN's factor, 0.1·ln(s) + 1. LongRoPE's also depends on L0: "
       "sqrt(1 + ln(s)/ln(L0)).")(
    _longrope(wrong_factor=lambda s, original: 0.1 * math.log(s) + 1.0 if s > 1 else 1.0))
