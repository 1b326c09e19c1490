"""Self-check of lab 17.01 (sinusoidal): a student's copy with a typical mistake gets its
explanation, and the long table is judged as the lesson and the grader say (reference and stubs:
``test_selfcheck_every_lab.py``)."""

import numpy as np
import pytest
from selfcheck_copies import diagnose, statuses

from minimodel.positional.sinusoidal import sinusoidal_pe
from minimodel.selfcheck.lab_17_01 import FLOAT64_ANGLES_ERROR, LONG_ATOL, LONG_D, LONG_T


def test_concatenated_layout_is_diagnosed(tmp_path):
    results = diagnose(tmp_path, "17.01", "sinusoidal", (
        "pe[:, 0::2] = np.sin(angles)\n    pe[:, 1::2] = np.cos(angles)",
        "pe[:, : d // 2] = np.sin(angles)\n    pe[:, d // 2 :] = np.cos(angles)",
    ))
    assert results["table_values"].status == "fail"
    assert "concatenada" in results["table_values"].detail_es
    assert "concatenated" in results["table_values"].detail_en
    assert results["module_offset"].status == "fail"


def test_a_values_error_is_not_reported_under_shape_and_dtype(tmp_path):
    results = diagnose(
        tmp_path, "17.01", "sinusoidal", ("pe[:, 1::2] = np.cos(angles)", "pe[:, 1::2] = 0.0")
    )
    assert results["table_shape_and_dtype"].status == "pass"
    assert results["table_values"].status == "fail"


def test_the_long_table_check_matches_the_lesson_and_the_grader(tmp_path):
    hidden = pytest.importorskip("grader.hidden.lab_17_01")  # the course repository only
    PE_CASES, TABLE_TOL = hidden.PE_CASES, hidden.TABLE_TOL
    assert TABLE_TOL.atol == LONG_ATOL and max(T for T, _, _ in PE_CASES) == LONG_T
    # the reference (float64 angles, stored in float32) is within FLOAT64_ANGLES_ERROR of an
    # independent float64 table; float32 angles are not, but pass
    def table(dtype):
        angles = np.arange(LONG_T, dtype=dtype)[:, None] * (
            10000.0 ** (-np.arange(0, LONG_D, 2) / LONG_D)
        ).astype(dtype)
        out = np.empty((LONG_T, LONG_D))
        out[:, 0::2], out[:, 1::2] = np.sin(angles), np.cos(angles)
        return out

    exact = table(np.float64)
    reference = sinusoidal_pe(LONG_T, LONG_D)  # tests run the reference (conftest.py)
    assert np.abs(reference.astype(np.float64) - exact).max() < FLOAT64_ANGLES_ERROR
    # the lesson: float32 angles are "a few 1e-5" off at the long length, within the tolerance
    assert 1e-5 < np.abs(table(np.float32) - exact).max() < 1e-4 < LONG_ATOL
    float32 = (
        "angles = np.arange(T, dtype=np.float64)[:, None] * inv_freq[None, :]",
        "angles = np.arange(T, dtype=np.float32)[:, None] * inv_freq[None, :].astype(np.float32)",
    )
    results = diagnose(tmp_path, "17.01", "sinusoidal", float32)
    assert set(statuses(results.values()).values()) == {"pass"}
    assert "float32" in results["long_table"].detail_es
    assert "float32" in results["long_table"].detail_en


def test_a_float64_table_fails_only_the_dtype_check(tmp_path):
    """As in the grader, where the table's values and its dtype are two items."""
    results = diagnose(tmp_path, "17.01", "sinusoidal", (
        "pe = np.empty((T, d), dtype=np.float32)", "pe = np.empty((T, d), dtype=np.float64)"))
    assert results["table_shape_and_dtype"].status == "fail"
    assert ".astype(np.float32)" in results["table_shape_and_dtype"].detail_en
    assert {r.status for name, r in results.items() if name != "table_shape_and_dtype"} == {
        "pass"}
