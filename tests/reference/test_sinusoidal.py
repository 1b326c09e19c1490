"""The reference sinusoidal encoding against its formula, its laws and bad input."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from minimodel.positional.sinusoidal import SinusoidalPositionalEncoding, sinusoidal_pe


def formula(T: int, d: int, base: float = 10000.0) -> np.ndarray:
    """PE[p, 2i] = sin(p / base^(2i/d)), PE[p, 2i+1] = cos(...), in float64."""
    p = np.arange(T, dtype=np.float64)[:, None]
    i = np.arange(d // 2, dtype=np.float64)[None, :]
    angles = p / base ** (2 * i / d)
    out = np.empty((T, d))
    out[:, 0::2], out[:, 1::2] = np.sin(angles), np.cos(angles)
    return out


@pytest.mark.parametrize(
    ("T", "d"), [(1, 2), (7, 4), (33, 10), (129, 64), (1000, 256), (4097, 512), (8191, 384)]
)
def test_matches_formula(T, d):
    table = sinusoidal_pe(T, d)
    assert table.shape == (T, d) and table.dtype == np.float32
    np.testing.assert_allclose(table, formula(T, d), atol=1e-6, rtol=0)


def test_reference_row_from_the_literature():
    # Research note B, section 1: p = 1, d = 4, interleaved.
    np.testing.assert_allclose(
        sinusoidal_pe(2, 4)[1], [0.841471, 0.540302, 0.010000, 0.999950], atol=1e-6
    )


def test_position_zero_alternates_zero_and_one():
    assert np.array_equal(sinusoidal_pe(1, 12)[0], np.tile([0.0, 1.0], 6).astype(np.float32))


@settings(max_examples=40, deadline=None)
@given(T=st.integers(1, 300), half=st.integers(1, 64), base=st.floats(2.0, 1e5))
def test_every_row_has_squared_norm_half_d(T, half, base):
    table = sinusoidal_pe(T, 2 * half, base).astype(np.float64)
    np.testing.assert_allclose((table**2).sum(axis=1), half, rtol=1e-5)


@settings(max_examples=40, deadline=None)
@given(half=st.integers(1, 32), delta=st.integers(0, 200), p=st.integers(0, 300))
def test_shift_is_a_rotation_of_each_pair(half, delta, p):
    d = 2 * half
    table = formula(p + delta + 1, d)
    omega = 10000.0 ** (-np.arange(0, d, 2) / d)
    c, s = np.cos(delta * omega), np.sin(delta * omega)
    sin_p, cos_p = table[p, 0::2], table[p, 1::2]
    shifted = sinusoidal_pe(p + delta + 1, d)[p + delta]
    np.testing.assert_allclose(shifted[0::2], c * sin_p + s * cos_p, atol=1e-6)
    np.testing.assert_allclose(shifted[1::2], -s * sin_p + c * cos_p, atol=1e-6)


@settings(max_examples=30, deadline=None)
@given(half=st.integers(1, 32), k=st.integers(0, 100), p=st.integers(0, 100))
def test_dot_product_depends_only_on_distance(half, k, p):
    table = sinusoidal_pe(p + k + 1, 2 * half).astype(np.float64)
    omega = 10000.0 ** (-np.arange(0, 2 * half, 2) / (2 * half))
    assert np.isclose(table[p] @ table[p + k], np.cos(k * omega).sum(), atol=1e-5)


@pytest.mark.parametrize(
    ("args", "error"),
    [((4, 7), ValueError), ((4, 0), ValueError), ((-1, 8), ValueError), ((4.0, 8), TypeError)],
)
def test_bad_arguments_give_bilingual_errors(args, error):
    with pytest.raises(error, match=r"(?s)\[es\].*\[en\]"):
        sinusoidal_pe(*args)


def test_module_adds_the_rows_at_the_offset_and_keeps_dtype():
    encoder = SinusoidalPositionalEncoding(16, max_len=64)
    table = torch.from_numpy(sinusoidal_pe(64, 16))
    x = torch.randn(2, 3, 5, 16)
    torch.testing.assert_close(encoder(x, offset=9), x + table[9:14])
    for dtype in (torch.float64, torch.bfloat16, torch.float16):
        assert encoder(x.to(dtype), offset=3).dtype == dtype


def test_module_chunks_equal_whole_sequence():
    encoder = SinusoidalPositionalEncoding(8, max_len=32)
    x = torch.randn(1, 12, 8)
    chunks = [encoder(x[:, :5]), encoder(x[:, 5:6], offset=5), encoder(x[:, 6:], offset=6)]
    torch.testing.assert_close(torch.cat(chunks, dim=1), encoder(x))


def test_module_on_meta_device_stays_there():
    # Catches tables created on the wrong device without needing a GPU.
    encoder = SinusoidalPositionalEncoding(8, max_len=32)
    out = encoder(torch.empty(2, 4, 8, device="meta"), offset=2)
    assert out.device.type == "meta" and out.shape == (2, 4, 8)


def test_module_table_is_not_saved_in_checkpoints():
    assert "pe" not in SinusoidalPositionalEncoding(8, max_len=32).state_dict()


@pytest.mark.parametrize(
    ("shape", "offset"), [((1, 4, 8), 13), ((4, 6), 0), ((8,), 0), ((1, 4, 8), -1)]
)
def test_module_rejects_bad_input_clearly(shape, offset):
    encoder = SinusoidalPositionalEncoding(8, max_len=16)
    with pytest.raises(ValueError, match=r"(?s)\[es\].*\[en\]"):
        encoder(torch.zeros(shape), offset=offset)
