"""Visible checks for lab 17.01 (sinusoidal). Students may read these; the grader's differ."""

from __future__ import annotations

import numpy as np
import torch

from minimodel.selfcheck.compare import CheckList, StudentModule, expect_array, note
from minimodel.selfcheck.snapshots import Snapshots

checks = CheckList()
sinusoidal = StudentModule("sinusoidal")


# The long table: the grader's longest hidden length and its tolerance against float64. Angles
# computed in float32 are accepted there (about 1e-4 off) and both say so in a note.
LONG_T, LONG_D, LONG_ATOL, FLOAT64_ANGLES_ERROR = 1000, 64, 2e-4, 1e-6
LONG_STEP = 27
# As in the grader, the table's values are judged apart from its kind and dtype (their own check).
VALUES_ONLY = {"check_dtype": False, "check_kind": False}
snap = Snapshots("17.01")


@checks.add("sinusoidal_pe", "forma (T, d) y dtype float32", "shape (T, d) and dtype float32")
def table_shape_and_dtype() -> None:
    snap.expect(sinusoidal.sinusoidal_pe(10, 8), "sinusoidal_pe(10, 8)", values=False)


@checks.add("sinusoidal_pe", "PE(0) = [0, 1, 0, 1, ...]", "PE(0) = [0, 1, 0, 1, ...]")
def position_zero() -> None:
    row = sinusoidal.sinusoidal_pe(1, 6)
    expect_array(row, np.array([[0, 1, 0, 1, 0, 1]], np.float32), name="sinusoidal_pe(1, 6)",
                 **VALUES_ONLY)


@checks.add("sinusoidal_pe", "valores de la fórmula", "values of the formula")
def table_values() -> None:
    snap.expect(sinusoidal.sinusoidal_pe(50, 16), "sinusoidal_pe(50, 16)", **VALUES_ONLY)


@checks.add("sinusoidal_pe", f"tabla larga (T = {LONG_T}) frente a float64",
            f"long table (T = {LONG_T}) against float64")
def long_table() -> None:
    table = sinusoidal.sinusoidal_pe(LONG_T, LONG_D)
    if isinstance(table, (np.ndarray, torch.Tensor)) and tuple(table.shape) == (LONG_T, LONG_D):
        table = table[::LONG_STEP]  # every 27th row, the last one (999) included
    name = f"sinusoidal_pe({LONG_T}, {LONG_D})[::{LONG_STEP}]"
    exact = snap.expect(table, name, atol=LONG_ATOL, rtol=0.0, **VALUES_ONLY)
    error = float(np.abs(np.asarray(table, dtype=np.float64) - exact.astype(np.float64)).max())
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
    table = sinusoidal.sinusoidal_pe(12, 4, base=100.0)
    snap.expect(table, "sinusoidal_pe(12, 4, base=100.0)", **VALUES_ONLY)


@checks.add("SinusoidalPositionalEncoding.forward", "suma las filas 0..T-1 de la tabla",
            "adds rows 0..T-1 of the table")
def module_adds_rows() -> None:
    encoder = sinusoidal.SinusoidalPositionalEncoding(8, max_len=32)
    snap.expect(encoder(torch.ones(2, 5, 8)), "encoder(ones(2, 5, 8))")


@checks.add("SinusoidalPositionalEncoding.forward", "respeta el offset (caché KV)",
            "honours the offset (KV cache)")
def module_offset() -> None:
    encoder = sinusoidal.SinusoidalPositionalEncoding(8, max_len=32)
    snap.expect(encoder(torch.zeros(1, 3, 8), offset=7), "encoder(zeros(1, 3, 8), offset=7)")


@checks.add("SinusoidalPositionalEncoding.forward", "conserva el dtype de x",
            "keeps the dtype of x")
def module_dtype() -> None:
    encoder = sinusoidal.SinusoidalPositionalEncoding(8, max_len=32)
    x = torch.zeros(4, 8, dtype=torch.bfloat16)
    snap.expect(encoder(x), "encoder(zeros(4, 8, bfloat16))", atol=1e-2,
                keeps="SinusoidalPositionalEncoding.forward")
