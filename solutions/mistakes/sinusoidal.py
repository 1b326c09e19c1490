"""Classic mistakes in sinusoidal.py (lesson 17.01): what a student who makes each one writes.

Each function is a wrong ``sinusoidal_pe`` (the module's ``SinusoidalPositionalEncoding`` builds its
table with it, and inherits the mistake) or a wrong ``SinusoidalPositionalEncoding.forward``. See
``grader/build/mistakes.py``.
"""

import numpy as np
import torch

from grader.build.mistakes import ignoring, mistake
from minimodel.positional.sinusoidal import SinusoidalPositionalEncoding
from minimodel.positional.sinusoidal import sinusoidal_pe as right


def _table(T: int, d: int, base: float, *, exponent: float = 2.0, start: int = 0) -> np.ndarray:
    """An interleaved table with frequencies base^(-exponent i / d), positions from ``start``."""
    pairs = np.arange(d // 2)
    angles = np.arange(start, start + T, dtype=np.float64)[:, None] * base ** (-exponent * pairs
                                                                                / d)
    table = np.empty((T, 2 * (d // 2)))
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    return table.astype(np.float32)


@mistake("sinusoidal_pe", "concatenated",
         es="Tu tabla pone todos los senos en la primera mitad de las columnas y todos los cosenos "
            "en la segunda (disposición concatenada, [sin | cos]). Este curso usa la intercalada: "
            "la columna 2i lleva sin(p·ω_i) y la 2i+1 lleva cos(p·ω_i).",
         en="Your table puts all the sines in the first half of the columns and all the cosines "
            "in the second (concatenated layout, [sin | cos]). This course uses the interleaved "
            "layout: column 2i holds sin(p·ω_i) and column 2i+1 holds cos(p·ω_i).")
def concatenated(T: int, d: int, base: float = 10000.0) -> np.ndarray:
    table = right(T, d, base)
    return np.concatenate([table[:, 0::2], table[:, 1::2]], axis=1)


@mistake("sinusoidal_pe", "exponent",
         es="Las frecuencias usan el exponente i/d en lugar de 2i/d: debe ser ω_i = base^(−2i/d), "
            "con i = 0 … d/2 − 1 numerando las parejas de columnas. Con i/d las frecuencias bajan "
            "solo hasta base^(−1/2) y la tabla no llega a las longitudes de onda largas.",
         en="The frequencies use the exponent i/d instead of 2i/d: it must be ω_i = base^(−2i/d), "
            "with i = 0 … d/2 − 1 counting the pairs of columns. With i/d the frequencies only go "
            "down to base^(−1/2) and the table never reaches the long wavelengths.")
def exponent(T: int, d: int, base: float = 10000.0) -> np.ndarray:
    return _table(T, d, base, exponent=1.0)


@mistake("sinusoidal_pe", "swapped",
         es="Seno y coseno están intercambiados: la columna par (2i) lleva el seno y la impar "
            "(2i+1) el coseno, de modo que PE(0) = [0, 1, 0, 1, …].",
         en="Sine and cosine are swapped: the even column (2i) holds the sine and the odd one "
            "(2i+1) the cosine, so that PE(0) = [0, 1, 0, 1, …].")
def swapped(T: int, d: int, base: float = 10000.0) -> np.ndarray:
    table = right(T, d, base)
    out = np.empty_like(table)
    out[:, 0::2], out[:, 1::2] = table[:, 1::2], table[:, 0::2]
    return out


@mistake("sinusoidal_pe", "from-one",
         es="Las posiciones empiezan en 1; deben empezar en 0 (la primera fila es PE(0)).",
         en="Positions start at 1; they must start at 0 (the first row is PE(0)).")
def from_one(T: int, d: int, base: float = 10000.0) -> np.ndarray:
    return _table(T, d, base, start=1)


@mistake("sinusoidal_pe", "float16",
         es="Tu tabla se calcula en float16: con 11 bits de precisión, los ángulos entre 32 y 64 "
            "radianes van de 1/32 en 1/32, y senos y cosenos salen con errores de milésimas. "
            "Calcula los ángulos en float64 y guarda la tabla en float32.",
         en="Your table is computed in float16: with 11 bits of precision, angles between 32 and "
            "64 radians go in steps of 1/32, and sines and cosines come out wrong in the third "
            "decimal. Compute the angles in float64 and store the table in float32.")
def float16(T: int, d: int, base: float = 10000.0) -> np.ndarray:
    inv_freq = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angles = np.arange(T, dtype=np.float16)[:, None] * inv_freq.astype(np.float16)[None, :]
    table = np.empty((T, d), dtype=np.float32)
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    return table


base_ignored = mistake(
    "sinusoidal_pe", "base-ignored",
    es="Tu función no usa el argumento base: con otra base sigue calculando la tabla de "
       "10000.",
    en="Your function ignores the base argument: with another base it still builds the table "
       "for 10000.")(ignoring(right, "base"))


offset_ignored = mistake(
    "SinusoidalPositionalEncoding.forward", "offset-ignored",
    es="forward ignora offset: suma las filas 0 … T−1 en lugar de offset … offset+T−1. Al "
       "generar con caché KV, cada trozo nuevo debe continuar en la posición donde acabó el "
       "anterior.",
    en="forward ignores offset: it adds rows 0 … T−1 instead of offset … offset+T−1. When "
       "generating with a KV cache, each new chunk must continue at the position where the "
       "previous one ended.")(ignoring(SinusoidalPositionalEncoding.forward, "offset"))


@mistake("SinusoidalPositionalEncoding.forward", "offset-off-by-one",
         es="forward usa offset desplazado en una posición: las filas sumadas deben ser "
            "exactamente offset … offset+T−1.",
         en="forward is off by one with offset: the rows added must be exactly "
            "offset … offset+T−1.")
def offset_off_by_one(self: SinusoidalPositionalEncoding, x: torch.Tensor,
                      offset: int = 0) -> torch.Tensor:
    rows = self.pe[offset + 1 : offset + 1 + x.shape[-2]]
    return x + rows.to(device=x.device, dtype=x.dtype)
