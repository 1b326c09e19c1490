"""The reference 2-D encodings: sinusoidal grid (vs MAE), grid interpolation, axial RoPE."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from minimodel.positional.rope import apply_rope, apply_rotary, rope_cos_sin, rope_frequencies
from minimodel.positional.sinusoidal import sinusoidal_pe
from minimodel.positional.two_d import (
    apply_rope_2d,
    grid_positions,
    interpolate_grid,
    sinusoidal_2d,
)

BILINGUAL = r"(?s)\[es\].*\[en\]"


def mae_2d_sincos(embed_dim: int, grid_size: int) -> np.ndarray:
    """MAE's get_2d_sincos_pos_embed (util/pos_embed.py), rewritten in float64, no CLS row."""

    def one_axis(dim, pos):
        omega = 1.0 / 10000 ** (np.arange(dim // 2, dtype=np.float64) / (dim / 2.0))
        out = np.einsum("m,d->md", pos.reshape(-1), omega)
        return np.concatenate([np.sin(out), np.cos(out)], axis=1)

    grid_h = np.arange(grid_size, dtype=np.float64)
    grid_w = np.arange(grid_size, dtype=np.float64)
    grid = np.stack(np.meshgrid(grid_w, grid_h), axis=0)  # w first: grid[0] is the column
    return np.concatenate([one_axis(embed_dim // 2, grid[0]), one_axis(embed_dim // 2, grid[1])], 1)


# ------------------------------------------------------------------------ 2-D sinusoidal


def test_shape_dtype_and_halves():
    pe = sinusoidal_2d(3, 5, 16)
    assert pe.shape == (15, 16) and pe.dtype == torch.float32
    grid = pe.view(3, 5, 16)
    rows, cols = torch.from_numpy(sinusoidal_pe(3, 8)), torch.from_numpy(sinusoidal_pe(5, 8))
    for r in range(3):
        for c in range(5):
            torch.testing.assert_close(grid[r, c, :8], rows[r])  # first half: the row
            torch.testing.assert_close(grid[r, c, 8:], cols[c])  # second half: the column


def test_reference_token_from_the_research_note():
    # MAE, G = 2, D = 8, token (r=0, c=1): [.8415, .01, .5403, 1, 0, 0, 1, 1]
    mae = mae_2d_sincos(8, 2)
    np.testing.assert_allclose(mae[1], [0.8415, 0.01, 0.5403, 1, 0, 0, 1, 1], atol=1e-4)
    ours = sinusoidal_2d(2, 2, 8)[1]  # row 0 = [0, 1, 0, 1], column 1 = [sin 1, cos 1, ...]
    want = torch.tensor([0, 1, 0, 1, 0.8415, 0.5403, 0.01, 1.0])
    torch.testing.assert_close(ours, want, atol=1e-4, rtol=0)


@pytest.mark.parametrize(("G", "D"), [(2, 8), (4, 16), (14, 64), (16, 768)])
def test_same_numbers_as_mae_in_another_column_order(G, D):
    # MAE: [column | row], each half [sin... | cos...]. Ours: [row | column], each interleaved.
    q = D // 4
    interleaved_to_concat = np.concatenate([np.arange(0, 2 * q, 2), np.arange(1, 2 * q, 2)])
    order = np.concatenate([D // 2 + interleaved_to_concat, interleaved_to_concat])
    ours = sinusoidal_2d(G, G, D).numpy()
    np.testing.assert_allclose(ours[:, order], mae_2d_sincos(D, G), atol=1e-6)


@settings(max_examples=25, deadline=None)
@given(
    r1=st.integers(0, 20),
    c1=st.integers(0, 20),
    r2=st.integers(0, 20),
    c2=st.integers(0, 20),
    dr=st.integers(0, 10),
    dc=st.integers(0, 10),
)
def test_dot_product_depends_only_on_the_2d_offset(r1, c1, r2, c2, dr, dc):
    pe = sinusoidal_2d(31, 31, 32).double().view(31, 31, 32)
    a = pe[r1, c1] @ pe[r2, c2]
    b = pe[r1 + dr, c1 + dc] @ pe[r2 + dr, c2 + dc]
    assert a.item() == pytest.approx(b.item(), abs=1e-5)


def test_grid_positions_are_row_major():
    rows, cols = grid_positions(2, 3)
    assert rows.tolist() == [0, 0, 0, 1, 1, 1] and cols.tolist() == [0, 1, 2, 0, 1, 2]
    assert rows.dtype == torch.long
    assert sinusoidal_2d(2, 2, 8, device="meta").device.type == "meta"


# ----------------------------------------------------------------------- grid interpolation


def test_bilinear_by_hand_with_pixel_centres():
    # 2x2 -> 4x4, align_corners=False: source columns -0.25, 0.25, 0.75, 1.25, clamped to the edge.
    table = torch.tensor([[0.0], [1.0], [0.0], [1.0]])  # value = column
    got = interpolate_grid(table, (4, 4), mode="bilinear").view(4, 4)
    torch.testing.assert_close(got, torch.tensor([0.0, 0.25, 0.75, 1.0]).expand(4, 4))


@pytest.mark.parametrize("mode", ["bicubic", "bilinear"])
def test_matches_the_timm_style_resampling_and_keeps_the_cls_row(mode):
    torch.manual_seed(0)
    table = torch.randn(1 + 14 * 14, 12)  # CLS + 14 x 14 grid
    got = interpolate_grid(table, (20, 10), num_prefix_tokens=1, mode=mode)
    assert got.shape == (1 + 200, 12) and got.dtype == table.dtype
    assert torch.equal(got[0], table[0])
    grid = table[1:].reshape(1, 14, 14, 12).permute(0, 3, 1, 2)
    want = F.interpolate(grid, size=(20, 10), mode=mode, align_corners=False)
    torch.testing.assert_close(got[1:], want.permute(0, 2, 3, 1).reshape(200, 12))


def test_same_size_is_identity_and_constants_stay_constant():
    table = torch.randn(6 * 4, 5, dtype=torch.float64)
    same = interpolate_grid(table, (6, 4), old_hw=(6, 4))
    torch.testing.assert_close(same, table)
    const = torch.full((9, 3), 2.5)
    torch.testing.assert_close(interpolate_grid(const, (7, 5)), torch.full((35, 3), 2.5))


def test_a_table_that_varies_by_row_only_still_does_after_resizing():
    rows = torch.randn(4, 1, 6).expand(4, 4, 6).reshape(16, 6)
    got = interpolate_grid(rows, (8, 8)).view(8, 8, 6)
    torch.testing.assert_close(got, got[:, :1].expand(8, 8, 6))


def test_interpolation_dtype_and_device():
    table = torch.randn(17, 4)
    low = interpolate_grid(table.to(torch.bfloat16), (5, 5), num_prefix_tokens=1)
    assert low.dtype == torch.bfloat16
    assert interpolate_grid(table.to("meta"), (3, 2), num_prefix_tokens=1).device.type == "meta"


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"table": torch.randn(15, 4), "new_hw": (4, 4)}, ValueError),  # not square
        ({"table": torch.randn(15, 4), "new_hw": (4, 4), "old_hw": (4, 4)}, ValueError),
        ({"table": torch.randn(17, 4), "new_hw": (4, 4)}, ValueError),  # forgot the CLS row
        ({"table": torch.randn(16, 4), "new_hw": (4, 0)}, ValueError),
        ({"table": torch.randn(16, 4), "new_hw": 4}, ValueError),
        ({"table": torch.randn(16, 4), "new_hw": (4, 4), "mode": "nearest"}, ValueError),
        ({"table": torch.randn(16), "new_hw": (4, 4)}, ValueError),
    ],
)
def test_interpolation_rejects_bad_input(kwargs, error):
    with pytest.raises(error, match=BILINGUAL):
        interpolate_grid(**kwargs)


# ------------------------------------------------------------------------------ axial RoPE


def test_interleaved_axial_rope_is_one_rope_with_row_then_column_angles():
    torch.manual_seed(1)
    x = torch.randn(2, 3, 12, 16)
    rows, cols = grid_positions(3, 4)
    inv = rope_frequencies(8, base=100.0)  # F = 4: 16 rotated dimensions
    cos_r, sin_r = rope_cos_sin(rows, inv)
    cos_c, sin_c = rope_cos_sin(cols, inv)
    want = apply_rotary(x, torch.cat((cos_r, cos_c), -1), torch.cat((sin_r, sin_c), -1))
    torch.testing.assert_close(apply_rope_2d(x, rows, cols, inv), want)


@pytest.mark.parametrize("convention", ["interleaved", "half"])
def test_each_block_is_a_1d_rope_on_its_coordinate(convention):
    torch.manual_seed(2)
    x = torch.randn(1, 2, 6, 20)  # 4F = 16 < 20: the last 4 dimensions pass through
    rows, cols = grid_positions(2, 3)
    inv = rope_frequencies(8)
    zero = torch.zeros_like(rows)
    out = apply_rope_2d(x, rows, cols, inv, convention=convention)
    assert torch.equal(out[..., 16:], x[..., 16:])
    by_row = apply_rope(x[..., :8], rows, inv, convention=convention)
    by_col = apply_rope(x[..., 8:16], cols, inv, convention=convention)
    torch.testing.assert_close(out[..., :8], by_row)
    torch.testing.assert_close(out[..., 8:16], by_col)
    only_rows = apply_rope_2d(x, rows, zero, inv, convention=convention)
    torch.testing.assert_close(only_rows, apply_rope(x, rows, inv, convention=convention))
    torch.testing.assert_close(out.norm(dim=-1), x.norm(dim=-1))


@settings(max_examples=30, deadline=None)
@given(
    a=st.tuples(st.integers(0, 30), st.integers(0, 30)),
    b=st.tuples(st.integers(0, 30), st.integers(0, 30)),
    shift=st.tuples(st.integers(-20, 20), st.integers(-20, 20)),
    seed=st.integers(0, 2**16),
)
def test_scores_depend_only_on_the_2d_offset(a, b, shift, seed):
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, 1, 1, 1, 16, generator=g, dtype=torch.float64)
    inv = rope_frequencies(8, base=100.0)

    def score(pq, pk):
        rq = apply_rope_2d(q, torch.tensor([pq[0]]), torch.tensor([pq[1]]), inv)
        rk = apply_rope_2d(k, torch.tensor([pk[0]]), torch.tensor([pk[1]]), inv)
        return (rq * rk).sum().item()

    moved = [(a[0] + shift[0], a[1] + shift[1]), (b[0] + shift[0], b[1] + shift[1])]
    assert score(a, b) == pytest.approx(score(*moved), abs=1e-4)


def test_axial_rope_dtypes_batches_and_device():
    x = torch.randn(2, 1, 4, 8)
    rows, cols = grid_positions(2, 2)
    inv = rope_frequencies(4)
    assert apply_rope_2d(x.to(torch.bfloat16), rows, cols, inv).dtype == torch.bfloat16
    batched = apply_rope_2d(x, torch.stack((rows, cols)), torch.stack((cols, rows)), inv)
    torch.testing.assert_close(batched[1:], apply_rope_2d(x[1:], cols, rows, inv))
    meta = torch.empty(2, 1, 4, 8, device="meta")
    assert apply_rope_2d(meta, rows, cols, inv).device.type == "meta"


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((torch.randn(1, 1, 4, 8), torch.arange(4), torch.arange(4), rope_frequencies(6)), {}),
        ((torch.randn(1, 1, 4, 8), torch.arange(4.0), torch.arange(4), rope_frequencies(4)), {}),
        ((torch.randn(1, 1, 4, 8), torch.arange(4), torch.arange(3), rope_frequencies(4)), {}),
        ((torch.randn(1, 4, 8), torch.arange(4), torch.arange(4), rope_frequencies(4)), {}),
        (
            (torch.randn(1, 1, 4, 8), torch.arange(4), torch.arange(4), rope_frequencies(4)),
            {"convention": "axial"},
        ),
    ],
)
def test_axial_rope_rejects_bad_input(args, kwargs):
    with pytest.raises(ValueError, match=BILINGUAL):
        apply_rope_2d(*args, **kwargs)


@pytest.mark.parametrize(("h", "w", "d"), [(2, 2, 6), (0, 2, 8), (2, 2, 0)])
def test_sinusoidal_2d_rejects_bad_sizes(h, w, d):
    with pytest.raises(ValueError, match=BILINGUAL):
        sinusoidal_2d(h, w, d)
