"""Every number and checkable equation of lesson 17.06 (2-D positions), against the reference.

Numeric formulas are evaluated; the 2-D table, its frequencies and dot products, MAE's order, the
sampling positions of the interpolation, the axial RoPE identities and the time axis are compared
with ``sinusoidal_2d``, ``interpolate_grid``, ``apply_rope_2d`` and the 1-D references; the code
blocks are run.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
from docs_pages import LANGS, decimals, pages
from page_numbers import check_all_statements, run_code_blocks, statements

from minimodel.positional.rope import apply_rope, rope_frequencies
from minimodel.positional.sinusoidal import sinusoidal_pe
from minimodel.positional.two_d import (
    apply_rope_2d,
    grid_positions,
    interpolate_grid,
    sinusoidal_2d,
)

LESSON = "17/06-two-d-and-vision.md"
MAE = (
    "[\\sin 1,\\ \\sin 0.01,\\ \\cos 1,\\ \\cos 0.01,\\ \\sin 0,\\ \\sin 0,\\ \\cos 0,\\ \\cos 0] "
    "\\approx [0.84147,\\ 0.01000,\\ 0.54030,\\ 0.99995,\\ 0,\\ 0,\\ 1,\\ 1]"
)
ROTATION = (
    "(\\cos 1,\\ \\sin 1,\\ \\cos 2,\\ \\sin 2) \\approx (0.5403,\\ 0.8415,\\ -0.4161,\\ 0.9093)"
)


@pytest.fixture(params=LANGS)
def page(request):
    return pages(LESSON)[request.param]


def numbers_in(tex: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+\.\d+|-?\d+", tex)]


# Checked apart: the vectors below and the sampling positions (test_vit_sizes_and_interpolation).
SAMPLES = {
    "s_0 \\approx -0.2083",
    "s_{12} \\approx 6.7917",
    "s_{23} \\approx 13.2083",
}


def test_numeric_formulas(page):
    assert check_all_statements(page.math, {MAE, ROTATION} | SAMPLES) >= 12


def test_raster_order_and_its_offsets(page):
    assert "n = r\\,W + c" in page.math
    assert "\\Delta n = W\\,\\Delta r + \\Delta c" in page.math
    for width in (3, 14, 24):
        rows, cols = grid_positions(5, width)
        assert torch.equal(rows * width + cols, torch.arange(5 * width))
        # (0, 1) and (1, -(W - 1)) have the same 1-D offset.
        assert width * 0 + 1 == width * 1 - (width - 1)


def test_two_d_table_is_two_halves(page):
    halves = "\\big[\\,\\mathrm{PE}_{d/2}(r)\\ \\big|\\ \\mathrm{PE}_{d/2}(c)\\,\\big]"
    assert f"\\mathrm{{PE}}(r, c) = {halves}" in page.math
    assert "\\omega_i = b^{-2i/(d/2)} = b^{-4i/d}" in statements(page.math)
    for height, width, d in ((3, 5, 8), (4, 4, 16), (2, 7, 32)):
        table = sinusoidal_2d(height, width, d).double()
        rows, cols = grid_positions(height, width)
        first = torch.from_numpy(sinusoidal_pe(height, d // 2)).double()[rows]
        second = torch.from_numpy(sinusoidal_pe(width, d // 2)).double()[cols]
        assert torch.allclose(table, torch.cat((first, second), dim=1), atol=1e-6)
        omega = 10000.0 ** (-4 * torch.arange(d // 4, dtype=torch.float64) / d)
        row1 = torch.from_numpy(sinusoidal_pe(2, d // 2)).double()[1]
        assert torch.allclose(row1[0::2], torch.sin(omega), atol=1e-6), "w_i = b^(-4i/d)"
        half_d = torch.full((height * width,), d / 2.0, dtype=torch.float64)
        assert torch.allclose((table**2).sum(1), half_d, atol=1e-5), "||PE(r, c)||^2 = d/2"


def test_dot_product_depends_on_the_offset_only(page):
    [formula] = [
        m for m in page.math if m.startswith("\\mathrm{PE}(r, c) \\cdot \\mathrm{PE}(r', c') =")
    ]
    assert "\\cos\\big((r - r')\\,\\omega_i\\big)" in formula
    assert "\\cos\\big((c - c')\\,\\omega_i\\big)" in formula
    d, height, width = 16, 6, 7
    table = sinusoidal_2d(height, width, d).double()
    rows, cols = grid_positions(height, width)
    omega = 10000.0 ** (-4 * torch.arange(d // 4, dtype=torch.float64) / d)
    for a, b in ((0, 41), (8, 20), (13, 13), (40, 2)):
        dr, dc = float(rows[a] - rows[b]), float(cols[a] - cols[b])
        expected = torch.cos(dr * omega).sum() + torch.cos(dc * omega).sum()
        assert torch.isclose(table[a] @ table[b], expected, atol=1e-5)
    # (dr, dc) and (dr, -dc) give the same product: cosine is even.
    r, c = 2, 3
    centre = table[r * width + c]
    assert torch.isclose(
        centre @ table[(r + 1) * width + c + 1], centre @ table[(r + 1) * width + c - 1]
    )


def test_concatenate_not_add(page):
    d = 8
    full = sinusoidal_pe(4, d).astype(np.float64)
    assert np.allclose(full[0] + full[1], full[1] + full[0]), "PE(r) + PE(c) = PE(c) + PE(r)"
    table = sinusoidal_2d(2, 2, d)
    assert not torch.allclose(table[1], table[2]), "PE(0, 1) != PE(1, 0)"


def test_worked_table(page):
    [table] = page.part("worked-example").tables
    header, *rows = table
    assert len(header) == 10
    expected = sinusoidal_2d(2, 2, 8).double()
    exact = torch.cat(
        (
            torch.from_numpy(np.array([[0.0], [0.0], [1.0], [1.0]])),
            torch.from_numpy(np.array([[0.0], [1.0], [0.0], [1.0]])),
        ),
        dim=1,
    )
    for n, row in enumerate(rows):
        assert int(row[0]) == n
        assert row[1] == f"({int(exact[n, 0])}, {int(exact[n, 1])})"
        for column, cell in enumerate(row[2:]):
            places = decimals(cell)
            assert places == 5
            r, c = exact[n].tolist()
            angle = (r, r * 0.01, c, c * 0.01)[column // 2]
            value = math.sin(angle) if column % 2 == 0 else math.cos(angle)
            assert abs(float(cell) - value) <= 0.5e-5, (n, column, cell)
            assert abs(float(cell) - expected[n, column].item()) <= 0.5e-5 + 1e-7


def test_worked_dot_products(page):
    table = sinusoidal_2d(2, 2, 8).double()
    diagonal, anti, horizontal = table[0] @ table[3], table[1] @ table[2], table[0] @ table[1]
    assert abs(diagonal - 3.0805) < 5e-5 and abs(anti - 3.0805) < 5e-5
    assert abs(horizontal - 3.5403) < 5e-5
    assert "3.0805" in page.part("worked-example").math
    assert torch.allclose((table**2).sum(1), torch.full((4,), 4.0, dtype=torch.float64), atol=1e-6)


def test_mae_order(page):
    assert MAE in statements(page.math)
    stated = numbers_in(MAE.split("\\approx")[1])
    ours = sinusoidal_2d(2, 2, 8).double()[1]
    half = 4
    order = torch.cat((torch.arange(half, 8, 2), torch.arange(half + 1, 8, 2)))
    order = torch.cat((order, torch.arange(0, half, 2), torch.arange(1, half, 2)))
    mae = ours[order]
    for value, cell in zip(mae.tolist(), stated, strict=True):
        assert abs(value - cell) <= 0.5e-5 + 1e-7
    exact = [math.sin(1), math.sin(0.01), math.cos(1), math.cos(0.01), 0, 0, 1, 1]
    assert np.allclose(stated, exact, atol=0.5e-5)


def test_vit_sizes_and_interpolation(page):
    table = torch.randn(1 + 14 * 14, 768)
    resized = interpolate_grid(table, (24, 24), num_prefix_tokens=1)
    assert resized.shape == (577, 768) and torch.equal(resized[0], table[0])
    assert table.numel() == 151_296
    math_text = page.part("vit-interpolation").math
    formula = "s_i = \\Big(i + \\frac{1}{2}\\Big)\\frac{h}{h'} - \\frac{1}{2}"
    assert formula in math_text
    samples = {0: "s_0 \\approx -0.2083", 1: "s_1 = 0.375", 12: "s_{12} \\approx 6.7917"}
    samples[23] = "s_{23} \\approx 13.2083"
    for i, written in samples.items():
        assert written in math_text
        value = (i + 0.5) * 14 / 24 - 0.5
        stated = numbers_in(written.split("=")[-1].split("\\approx")[-1])[-1]
        assert abs(value - stated) <= 0.5 * 10 ** -decimals(str(stated)) + 1e-9
    # The reference samples exactly there: bilinear interpolation of a linear ramp (value = row)
    # returns s_i inside the grid and the edge value outside it.
    ramp = torch.arange(14, dtype=torch.float64)[:, None, None].expand(14, 14, 1).reshape(196, 1)
    out = interpolate_grid(ramp, (24, 24), mode="bilinear").reshape(24, 24)[:, 5]
    s = (torch.arange(24, dtype=torch.float64) + 0.5) * 14 / 24 - 0.5
    assert torch.allclose(out, s.clamp(0, 13), atol=1e-9)
    # Bicubic does not clamp: it keeps s_0 < 0 and repeats the edge cell for the missing taps, so
    # its first cell is past the edge (about -0.098 on the ramp), neither 0 nor s_0.
    cubic = interpolate_grid(ramp, (24, 24), mode="bicubic").reshape(24, 24)[:, 5]
    text = " ".join(page.section("vit-interpolation").split())
    assert "$-0.098$" in text
    assert abs(cubic[0].item() - (-0.098)) <= 5e-4 and abs(cubic[-1].item() - (13 + 0.098)) <= 5e-4
    assert cubic[0] < 0 and cubic[0] > s[0], "past the edge, but not the linear s_0"

    def keys(x: float, a: float = -0.75) -> float:  # PyTorch's cubic convolution kernel
        x = abs(x)
        if x <= 1:
            return (a + 2) * x**3 - (a + 3) * x**2 + 1
        return a * x**3 - 5 * a * x**2 + 8 * a * x - 4 * a if x < 2 else 0.0

    for i, s_i in enumerate(s.tolist()):  # s_i as is, four taps, missing ones = the edge cell
        taps = [math.floor(s_i) + offset for offset in (-1, 0, 1, 2)]
        value = sum(keys(s_i - tap) * min(max(tap, 0), 13) for tap in taps)
        assert abs(cubic[i].item() - value) < 1e-9, i
    assert "`scipy.ndimage.zoom` with `order=1`" in text or (
        "`scipy.ndimage.zoom` con `order=1`" in text
    )
    # ViT's linear zoom aligns the corners: the new grid's first and last cells are the old ones.
    corners = torch.nn.functional.interpolate(
        ramp.reshape(1, 1, 14, 14),
        size=(24, 24),
        mode="bilinear",
        align_corners=True,
    )[0, 0, :, 5]
    assert torch.allclose(corners, torch.arange(24, dtype=torch.float64) * 13 / 23, atol=1e-9)


def test_axial_rope(page):
    math_text = page.part("rope-2d").math
    assert "R_F(a)^\\top R_F(b) = R_F(b - a)" in " ".join(math_text)
    inner = "\\big\\langle R(r, c)\\,q,\\ R(r', c')\\,k \\big\\rangle"
    assert f"{inner} = q^\\top R(r' - r,\\ c' - c)\\, k" in math_text
    D = 16
    inv_freq = rope_frequencies(D // 2, base=100.0)
    assert inv_freq.shape == (D // 4,), "F = D/4: inv_freq = rope_frequencies(D // 2, base)"
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(D, generator=g), torch.randn(D, generator=g)

    def rotated(v, r, c):
        x = v.reshape(1, 1, 1, D)
        return apply_rope_2d(x, torch.tensor([r]), torch.tensor([c]), inv_freq)[0, 0, 0]

    base = rotated(q, 2, 3) @ rotated(k, 5, 1)
    assert torch.isclose(base, rotated(q, 0, 0) @ rotated(k, 3, -2), atol=1e-5)
    assert torch.isclose(base, rotated(q, 7, 9) @ rotated(k, 10, 7), atol=1e-5)
    # Each block is the 1-D RoPE of lesson 17.03 driven by one coordinate.
    x = torch.randn(1, 1, 1, D, generator=g)
    by_row = apply_rope(x[..., : D // 2], torch.tensor([4]), inv_freq)
    by_col = apply_rope(x[..., D // 2 :], torch.tensor([6]), inv_freq)
    both = apply_rope_2d(x, torch.tensor([4]), torch.tensor([6]), inv_freq)
    assert torch.allclose(both, torch.cat((by_row, by_col), dim=-1), atol=1e-6)
    stated = numbers_in(ROTATION.split("\\approx")[1])
    expected = [math.cos(1), math.sin(1), math.cos(2), math.sin(2)]
    assert np.allclose(stated, expected, atol=0.5e-4)


def test_time_axis(page):
    time = page.part("time")
    assert "1500" in time.math and 30 / 0.020 == 1500
    assert "p = s \\cdot t" in time.math
    # Positions in seconds (scale 100 per second): 10 ms steps visit 0, 1, 2, ...; 20 ms steps
    # visit 0, 2, 4, ...: the same encoding at the shared instants.
    table = sinusoidal_pe(100, 16)
    t10, t20 = np.arange(100) * 0.010, np.arange(50) * 0.020
    p10, p20 = np.rint(100 * t10).astype(int), np.rint(100 * t20).astype(int)
    assert np.array_equal(table[p10][::2], table[p20])


def test_code_blocks_run_and_print_what_the_page_shows():
    # Both languages have the same code (test_docs_parity); run it once.
    found = pages(LESSON)
    assert found["es"].code == found["en"].code
    assert run_code_blocks(found["en"]) == 1
