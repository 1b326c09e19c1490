"""Classic mistakes in rope.py (lesson 17.03): what a student who makes each one writes.

The module's other functions call the one a mistake replaces (``apply_rope`` and
``RotaryEmbedding`` build on ``rope_frequencies``, ``rope_cos_sin`` and ``apply_rotary``), so
they inherit it. See ``grader/build/mistakes.py``.
"""

import torch

from grader.build.mistakes import ignoring, mistake
from minimodel.positional.rope import RotaryEmbedding
from minimodel.positional.rope import apply_rotary as right_rotary
from minimodel.positional.rope import rope_cos_sin as right_cos_sin
from minimodel.positional.rope import rope_frequencies as right_frequencies

OTHER = {"interleaved": "half", "half": "interleaved"}


def _rotated(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
             convention: str) -> torch.Tensor:
    """The right rotation, half-precision ``x`` rotated in float32 and rounded once (so that a
    wrong ``apply_rotary`` is not called again by the right one)."""
    if x.dtype in (torch.float32, torch.float64):
        return right_rotary(x, cos, sin, convention=convention)
    return right_rotary(x.float(), cos, sin, convention=convention).to(x.dtype)


@mistake("rope_frequencies", "exponent",
         es="Las frecuencias usan el exponente i/r en lugar de 2i/r: θ_i = base^(−2i/r) con "
            "i = 0 … r/2 − 1.",
         en="The frequencies use the exponent i/r instead of 2i/r: θ_i = base^(−2i/r) with "
            "i = 0 … r/2 − 1.")
def exponent(rotary_dim: int, base: float = 10000.0, *, device=None) -> torch.Tensor:
    return 1.0 / base ** (torch.arange(rotary_dim // 2, device=device).float() / rotary_dim)


@mistake("rope_frequencies", "positive-exponent",
         es="Falta el signo menos del exponente: θ_i = base^(−2i/r) baja de 1 hacia 0; "
            "base^(2i/r) crece.",
         en="The exponent lacks its minus sign: θ_i = base^(−2i/r) goes down from 1 towards 0; "
            "base^(2i/r) grows.")
def positive_exponent(rotary_dim: int, base: float = 10000.0, *, device=None) -> torch.Tensor:
    return base ** (torch.arange(0, rotary_dim, 2, device=device).float() / rotary_dim)


base_ignored = mistake(
    "rope_frequencies", "base-ignored",
    es="rope_frequencies no usa el argumento base: con otra base (500000 en Llama 3, por "
       "ejemplo) sigue dando las frecuencias de 10000.",
    en="rope_frequencies ignores the base argument: with another base (500000 in Llama 3, for "
       "instance) it still gives the frequencies of 10000.")(ignoring(right_frequencies, "base"))


@mistake("rope_cos_sin", "sign",
         es="El seno de tu tabla tiene el signo cambiado: rope_cos_sin devuelve cos(p·θ) y "
            "sin(p·θ); con −sin, cada pareja gira en sentido contrario.",
         en="The sine of your table has the wrong sign: rope_cos_sin returns cos(p·θ) and "
            "sin(p·θ); with −sin, every pair rotates the other way.")
def sign(positions: torch.Tensor, inv_freq: torch.Tensor, *,
         attention_factor: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    cos, sin = right_cos_sin(positions, inv_freq, attention_factor=attention_factor)
    return cos, -sin


@mistake("rope_cos_sin", "bf16-angles",
         es="Tus ángulos se calculan en bfloat16: con 8 bits de mantisa, la posición 4097 ya vale "
            "4096 y a partir de unos miles el ángulo se equivoca en radianes enteros. Pasa "
            "posiciones e inv_freq a float32 antes de multiplicar.",
         en="Your angles are computed in bfloat16: with 8 bits of mantissa, position 4097 is "
            "already 4096 and past a few thousand the angle is off by whole radians. Cast "
            "positions and inv_freq to float32 before multiplying.")
def bf16_angles(positions: torch.Tensor, inv_freq: torch.Tensor, *,
                attention_factor: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    inv_freq = inv_freq.to(device=positions.device, dtype=torch.bfloat16)
    angles = (positions.to(torch.bfloat16)[..., None] * inv_freq).float()
    return angles.cos() * attention_factor, angles.sin() * attention_factor


factor_ignored = mistake(
    "rope_cos_sin", "factor-ignored",
    es="rope_cos_sin ignora attention_factor: multiplica cos y sin por él.",
    en="rope_cos_sin ignores attention_factor: multiply cos and sin by it."
)(ignoring(right_cos_sin, "attention_factor"))


@mistake("apply_rotary", "direction",
         es="La rotación va en sentido contrario: cada pareja (a, b) debe pasar a "
            "(a·cos − b·sin, a·sin + b·cos); tu código usa el signo opuesto del seno.",
         en="The rotation goes the wrong way: each pair (a, b) must become "
            "(a·cos − b·sin, a·sin + b·cos); your code uses the opposite sign of the sine.")
def direction(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, *,
              convention: str = "interleaved") -> torch.Tensor:
    return _rotated(x, cos, -sin, convention)


@mistake("apply_rotary", "convention-swapped",
         es="Las convenciones están cambiadas: «interleaved» empareja (2i, 2i+1) y «half» "
            "empareja (i, i + F); tu código empareja como la otra.",
         en="The conventions are swapped: 'interleaved' pairs (2i, 2i+1) and 'half' pairs "
            "(i, i + F); your code pairs like the other one.")
def convention_swapped(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, *,
                       convention: str = "interleaved") -> torch.Tensor:
    return _rotated(x, cos, sin, OTHER[convention])


@mistake("apply_rotary", "tail",
         es="Rotación parcial: las dimensiones 2F … D−1 deben pasar sin cambios; tu código las "
            "modifica (o las pierde).",
         en="Partial rotation: dimensions 2F … D−1 must pass through unchanged; your code "
            "changes them (or drops them).")
def tail(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, *,
         convention: str = "interleaved") -> torch.Tensor:
    out = _rotated(x, cos, sin, convention)
    out[..., 2 * cos.shape[-1]:] = 0.0
    return out


offset_ignored = mistake(
    "RotaryEmbedding.forward", "offset-ignored",
    es="RotaryEmbedding ignora offset: las filas deben girar con las posiciones "
       "offset … offset+T−1, las de los tokens ya guardados en la caché KV.",
    en="RotaryEmbedding ignores offset: the rows must rotate with positions "
       "offset … offset+T−1, those after the tokens already in the KV cache."
)(ignoring(RotaryEmbedding.forward, "offset"))
