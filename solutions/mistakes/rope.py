"""Classic mistakes in rope.py (lesson 17.03): what a student who makes each one writes.

The module's other functions call the one a mistake replaces (``apply_rope`` and
``RotaryEmbedding`` build on ``rope_frequencies``, ``rope_cos_sin`` and ``apply_rotary``), so
they inherit it. See ``grader/mistakes.py``.
"""

import torch

from grader.mistakes import mistake
from minimodel.positional.rope import apply_rotary as right_rotary
from minimodel.positional.rope import rope_cos_sin as right_cos_sin


@mistake("rope_frequencies", "exponent",
         es="Parece que usaste el exponente i/r; la pareja i tiene base^(-2i/r).",
         en="It looks like you used the exponent i/r; pair i has base^(-2i/r).")
def exponent(rotary_dim: int, base: float = 10000.0, *, device=None) -> torch.Tensor:
    return 1.0 / base ** (torch.arange(rotary_dim // 2, device=device).float() / rotary_dim)


@mistake("rope_frequencies", "inverse",
         es="Son las frecuencias invertidas: se pide 1 / base^(2i/r), de 1 hacia abajo.",
         en="These are inverted: the function returns 1 / base^(2i/r), from 1 downwards.")
def inverse(rotary_dim: int, base: float = 10000.0, *, device=None) -> torch.Tensor:
    return base ** (torch.arange(0, rotary_dim, 2, device=device).float() / rotary_dim)


@mistake("rope_cos_sin", "sign",
         es="Parece que giras en sentido contrario: la pareja (a, b) pasa a "
            "(a cos - b sin, a sin + b cos).",
         en="It looks like you rotate the other way: pair (a, b) becomes "
            "(a cos - b sin, a sin + b cos).")
def sign(positions: torch.Tensor, inv_freq: torch.Tensor, *,
         attention_factor: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    cos, sin = right_cos_sin(positions, inv_freq, attention_factor=attention_factor)
    return cos, -sin


@mistake("apply_rotary", "half_for_interleaved",
         es="Parece la convención 'half': en 'interleaved' la pareja i es (2i, 2i+1).",
         en="It looks like the 'half' convention: in 'interleaved' pair i is (2i, 2i+1).")
def half_for_interleaved(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, *,
                         convention: str = "interleaved") -> torch.Tensor:
    return right_rotary(x, cos, sin, convention="half")


@mistake("apply_rotary", "interleaved_for_half",
         es="Parece la convención 'interleaved': en 'half' la pareja i es (i, i + r/2).",
         en="It looks like the 'interleaved' convention: in 'half' pair i is (i, i + r/2).")
def interleaved_for_half(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, *,
                         convention: str = "interleaved") -> torch.Tensor:
    return right_rotary(x, cos, sin, convention="interleaved")
