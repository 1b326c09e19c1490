"""Classic mistakes in sinusoidal.py (lesson 17.01): what a student who makes each one writes.

Each function is a wrong ``sinusoidal_pe``; the module's ``SinusoidalPositionalEncoding``, which
builds its table with ``sinusoidal_pe``, inherits the mistake. See ``grader/mistakes.py``.
"""

import numpy as np

from grader.mistakes import mistake
from minimodel.positional.sinusoidal import sinusoidal_pe as right


def _angles(T: int, d: int, base: float, exponent: float) -> np.ndarray:
    pairs = np.arange(d // 2)
    return np.arange(T, dtype=np.float64)[:, None] * base ** (-exponent * pairs / d)


@mistake("sinusoidal_pe", "concatenated",
         es="Parece la disposición concatenada [sin | cos]; aquí va intercalada: columnas pares "
            "= sin, impares = cos.",
         en="It looks like the concatenated layout [sin | cos]; this course interleaves: even "
            "columns = sin, odd columns = cos.")
def concatenated(T: int, d: int, base: float = 10000.0) -> np.ndarray:
    table = right(T, d, base)
    return np.concatenate([table[:, 0::2], table[:, 1::2]], axis=1)


@mistake("sinusoidal_pe", "exponent",
         es="Parece que usaste el exponente i/d; la frecuencia del par i es base^(-2i/d).",
         en="It looks like you used the exponent i/d; pair i has frequency base^(-2i/d).")
def exponent(T: int, d: int, base: float = 10000.0) -> np.ndarray:
    angles = _angles(T, d, base, exponent=1.0)
    return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(T, d).astype(np.float32)


@mistake("sinusoidal_pe", "swapped",
         es="Parece que seno y coseno están intercambiados: la columna 2i es el seno.",
         en="Sine and cosine look swapped: column 2i holds the sine.")
def swapped(T: int, d: int, base: float = 10000.0) -> np.ndarray:
    table = right(T, d, base)
    out = np.empty_like(table)
    out[:, 0::2], out[:, 1::2] = table[:, 1::2], table[:, 0::2]
    return out
