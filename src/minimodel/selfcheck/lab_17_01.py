"""Visible checks for lab 17.01 (sinusoidal). Students may read these; the grader's differ."""

from __future__ import annotations

import numpy as np
import torch

from minimodel.selfcheck.compare import CheckList, expect_array, note

checks = CheckList()


def _student():
    from minimodel.positional import sinusoidal

    return sinusoidal


# The long table: the grader's longest hidden length and its tolerance against float64. Angles
# computed in float32 are accepted there (about 1e-4 off) and both say so in a note.
LONG_T, LONG_D, LONG_ATOL, FLOAT64_ANGLES_ERROR = 1000, 64, 2e-4, 1e-6


def formula(T: int, d: int, base: float = 10000.0, dtype=np.float32) -> np.ndarray:
    """The table written straight from the lesson's formula, one entry at a time, in float64
    and then cast to ``dtype``."""
    table = np.zeros((T, d), dtype=np.float64)
    for p in range(T):
        for i in range(d // 2):
            angle = p / base ** (2 * i / d)
            table[p, 2 * i], table[p, 2 * i + 1] = np.sin(angle), np.cos(angle)
    return table.astype(dtype)


def known_mistakes(T: int, d: int, base: float = 10000.0) -> dict:
    """What the usual mistakes produce, with an explanation of each in both languages."""
    right = formula(T, d, base)
    half = np.arange(d // 2)
    wrong_exponent = np.arange(T)[:, None] * base ** (-half / d)
    swapped = np.empty_like(right)
    swapped[:, 0::2], swapped[:, 1::2] = right[:, 1::2], right[:, 0::2]
    return {
        "concatenated": (
            np.concatenate([right[:, 0::2], right[:, 1::2]], axis=1),
            "Parece la disposición concatenada [sin | cos]; aquí va intercalada: "
            "columnas pares = sin, impares = cos.",
            "It looks like the concatenated layout [sin | cos]; this course interleaves: "
            "even columns = sin, odd columns = cos.",
        ),
        "exponent": (
            np.stack([np.sin(wrong_exponent), np.cos(wrong_exponent)], axis=-1).reshape(T, d),
            "Parece que usaste el exponente i/d; la frecuencia del par i es base^(-2i/d).",
            "It looks like you used the exponent i/d; pair i has frequency base^(-2i/d).",
        ),
        "swapped": (
            swapped,
            "Parece que seno y coseno están intercambiados: la columna 2i es el seno.",
            "Sine and cosine look swapped: column 2i holds the sine.",
        ),
    }


@checks.add("sinusoidal_pe", "forma (T, d) y dtype float32", "shape (T, d) and dtype float32")
def table_shape_and_dtype() -> None:
    table = _student().sinusoidal_pe(10, 8)
    expect_array(table, formula(10, 8), name="sinusoidal_pe(10, 8)", values=False)


@checks.add("sinusoidal_pe", "PE(0) = [0, 1, 0, 1, ...]", "PE(0) = [0, 1, 0, 1, ...]")
def position_zero() -> None:
    row = _student().sinusoidal_pe(1, 6)
    expect_array(row, np.array([[0, 1, 0, 1, 0, 1]], np.float32), name="sinusoidal_pe(1, 6)")


@checks.add("sinusoidal_pe", "valores de la fórmula", "values of the formula")
def table_values() -> None:
    table = _student().sinusoidal_pe(50, 16)
    expect_array(
        table, formula(50, 16), name="sinusoidal_pe(50, 16)", mistakes=known_mistakes(50, 16)
    )


@checks.add(
    "sinusoidal_pe",
    f"tabla larga (T = {LONG_T}) frente a float64",
    f"long table (T = {LONG_T}) against float64",
)
def long_table() -> None:
    table = _student().sinusoidal_pe(LONG_T, LONG_D)
    exact = formula(LONG_T, LONG_D, dtype=np.float64)
    name = f"sinusoidal_pe({LONG_T}, {LONG_D})"
    expect_array(table, exact.astype(np.float32), name=name, atol=LONG_ATOL, rtol=0.0)
    error = float(np.abs(table.astype(np.float64) - exact).max())
    if error > FLOAT64_ANGLES_ERROR:
        note(
            f"Nota: tu tabla se desvía hasta {error:.1e} de la referencia en float64; los ángulos "
            f"parecen calculados en float32. Se acepta (tolerancia {LONG_ATOL:g}), pero en float64 "
            f"el error queda por debajo de {FLOAT64_ANGLES_ERROR:g}.",
            f"Note: your table is up to {error:.1e} off the float64 reference; the angles look "
            f"computed in float32. That is accepted (tolerance {LONG_ATOL:g}), but in float64 the "
            f"error stays below {FLOAT64_ANGLES_ERROR:g}.",
        )


@checks.add("sinusoidal_pe", "el argumento base", "the base argument")
def table_base() -> None:
    table = _student().sinusoidal_pe(12, 4, base=100.0)
    expect_array(table, formula(12, 4, 100.0), name="sinusoidal_pe(12, 4, base=100.0)")


@checks.add(
    "SinusoidalPositionalEncoding.forward",
    "suma las filas 0..T-1 de la tabla",
    "adds rows 0..T-1 of the table",
)
def module_adds_rows() -> None:
    encoder = _student().SinusoidalPositionalEncoding(8, max_len=32)
    x = torch.ones(2, 5, 8)
    expect_array(encoder(x), x + torch.from_numpy(formula(5, 8)), name="encoder(x)")


@checks.add(
    "SinusoidalPositionalEncoding.forward",
    "respeta el offset (caché KV)",
    "honours the offset (KV cache)",
)
def module_offset() -> None:
    encoder = _student().SinusoidalPositionalEncoding(8, max_len=32)
    x = torch.zeros(1, 3, 8)
    expected = torch.from_numpy(formula(10, 8)[7:10]).unsqueeze(0)
    expect_array(encoder(x, offset=7), expected, name="encoder(x, offset=7)")


@checks.add(
    "SinusoidalPositionalEncoding.forward",
    "conserva el dtype de x",
    "keeps the dtype of x",
)
def module_dtype() -> None:
    encoder = _student().SinusoidalPositionalEncoding(8, max_len=32)
    x = torch.zeros(4, 8, dtype=torch.bfloat16)
    expected = torch.from_numpy(formula(4, 8)).to(torch.bfloat16)
    expect_array(encoder(x), expected, name="encoder(x_bf16)", atol=1e-2)
