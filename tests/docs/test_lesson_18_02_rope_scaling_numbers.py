"""Every number and formula of lesson 18.02 (RoPE scaling), checked against the reference.

The test reads the pages in both languages, so editing a number on a page breaks it:

- **Approximate values.** Every formula with ``\\approx`` must be listed in ``APPROX`` under its
  section and left-hand side; the number written after ``\\approx`` must equal the reference value
  up to half a unit in its last digit.
- **Exact values** the text states in math (``\\mathrm{lo} = 20``, ``29`` kept pairs, ...) are
  compared with the reference.
- **Tables**: the turns per pair and the worked example's ratios, cell by cell.
- **Formulas**: the page's formulas are looked up verbatim and each is evaluated against
  ``minimodel.positional.scaling``.
- **Code**: the blocks are run and their output compared with the ``text`` block that follows.
"""

from __future__ import annotations

import contextlib
import io
import math
import re

import numpy as np
import pytest
import torch
from docs_pages import LANGS, decimals, normalise_math, pages

from minimodel.positional.rope import rope_frequencies
from minimodel.positional.scaling import (
    SCALINGS,
    dynamic_ntk_scaling,
    llama3_scaling,
    longrope_scaling,
    ntk_scaling,
    yarn_correction_range,
    yarn_scaling,
)

LESSON = "18/02-rope-scaling.md"
R, BASE, L0, S = 32, 10000.0, 128, 4.0  # the lab's model and scale factor


def thetas(r: int = R, base: float = BASE) -> np.ndarray:
    """The reference frequencies, in float64."""
    return rope_frequencies(r, base).double().numpy()


def turns(i: int) -> float:
    """n_i = L0 theta_i / (2 pi) for the lab's model."""
    return L0 * thetas()[i] / (2 * math.pi)


def pair_index(r: int, base: float, l0: float, n: float) -> float:
    """i(n) = r ln(L0 / (2 pi n)) / (2 ln b), independently of the reference."""
    return r * math.log(l0 / (2 * math.pi * n)) / (2 * math.log(base))


def ratios(name: str, **options) -> np.ndarray:
    """rho_i = theta'_i / theta_i of a method on the lab's model (s = 4, L0 = 128)."""
    inv_freq, _ = SCALINGS[name](R, BASE, factor=S, original_max_len=L0, **options)
    return inv_freq.double().numpy() / thetas()


YARN_FACTOR = yarn_scaling(R, BASE, factor=S, original_max_len=L0)[1]
# Phi-3-mini-128k: heads of 96, L0 = 4096, s = 131072 / 4096 = 32
PHI3_FACTOR = longrope_scaling(96, BASE, factor=131072 / 4096, original_max_len=4096)[1]


def paper_ratio(r: int, base: float, l0: int, s: float, fast=32.0, slow=1.0) -> np.ndarray:
    """rho_i with the YaRN paper's ramp, linear in the turns n_i (not in the index i)."""
    n = l0 * thetas(r, base) / (2 * math.pi)
    keep = np.clip((n - slow) / (fast - slow), 0.0, 1.0)  # weight of the original frequency
    return keep + (1 - keep) / s


# (section anchor, left-hand side of the \approx) -> reference value.
APPROX = {
    ("ntk", "b'"): ntk_scaling(128, BASE, factor=4.0)[0][-1].item() ** (-128 / 126),
    ("ntk", "n_6"): turns(6),
    ("ntk", "\\rho_6"): ratios("ntk")[6],
    ("ntk", "c_6"): 4 * ratios("ntk")[6],
    ("dynamic-ntk", "b' = 10000 \\cdot (2 \\cdot 2 - 1)^{128/126}"): (
        dynamic_ntk_scaling(128, BASE, factor=2.0, original_max_len=4096, seq_len=8192)[0][
            -1
        ].item()
        ** (-128 / 126)
    ),
    ("yarn-ramp", "i(32)"): yarn_correction_range(128, BASE, 4096, 32.0, 1.0, truncate=False)[0],
    ("yarn-ramp", "i(1)"): yarn_correction_range(128, BASE, 4096, 32.0, 1.0, truncate=False)[1],
    (
        "yarn-ramp",
        "\\rho_{21} = 1 - \\frac{1}{26}\\left(1 - \\frac{1}{4}\\right)",
    ): yarn_scaling(128, BASE, factor=4.0, original_max_len=4096)[0][21].item()
    / rope_frequencies(128)[21].item(),
    ("yarn-ramp", "n_{33}"): 4096 * rope_frequencies(128)[33].item() / (2 * math.pi),
    ("yarn-ramp", "\\rho_{33}"): paper_ratio(128, BASE, 4096, 4.0)[33],
    ("yarn-temperature", "0.1 \\ln 4 + 1"): YARN_FACTOR,
    ("yarn-temperature", "1.138629^2"): YARN_FACTOR**2,
    ("yarn-temperature", "t = 1/1.138629^2"): 1 / YARN_FACTOR**2,  # the temperature, from the code
    ("worked-example", "i(32)"): pair_index(R, BASE, L0, 32.0),
    ("worked-example", "i(1)"): pair_index(R, BASE, L0, 1.0),
    ("worked-example", "n_0"): turns(0),
    ("worked-example", "b' = 10000 \\cdot 4^{32/30}"): (
        ntk_scaling(R, BASE, factor=S)[0][-1].item() ** (-R / (R - 2))
    ),
    ("worked-example", "0.1 \\ln 4 + 1"): YARN_FACTOR,
    ("longrope", "\\sqrt{17/12}"): PHI3_FACTOR,
    ("longrope", "17/12"): PHI3_FACTOR**2,
    ("longrope", "0.1 \\ln 32 + 1"): yarn_scaling(96, BASE, factor=32.0, original_max_len=4096)[1],
}

# Arithmetic the page writes out, evaluated here as the page writes it.
ARITHMETIC = {
    "b' = 10000 \\cdot (2 \\cdot 2 - 1)^{128/126}": 10000 * (2 * 2 - 1) ** (128 / 126),
    "\\rho_{21} = 1 - \\frac{1}{26}\\left(1 - \\frac{1}{4}\\right)": 1 - (1 / 26) * (1 - 1 / 4),
    "0.1 \\ln 4 + 1": 0.1 * math.log(4) + 1,
    "1.138629^2": 1.138629**2,
    "t = 1/1.138629^2": 1 / 1.138629**2,
    "b' = 10000 \\cdot 4^{32/30}": 10000 * 4 ** (32 / 30),
    "\\sqrt{17/12}": math.sqrt(17 / 12),
    "17/12": 17 / 12,
    "0.1 \\ln 32 + 1": 0.1 * math.log(32) + 1,
}

NUMBER = r"-?\d+(?:\\,\d{3})*(?:\.\d+)?"


@pytest.fixture(params=LANGS)
def page(request):
    return pages(LESSON)[request.param]


def statements(page, anchor: str) -> list[str]:
    """Formulas of one section (without its subsections), split at ``\\qquad``."""
    found = page.part(anchor, own=True).math
    return [p.strip() for m in found for p in re.split(r",?\s*\\qquad\s*", m) if p.strip()]


def close_to_written(value: float, written: str) -> bool:
    """``value`` rounds to the number as written (half a unit in its last digit)."""
    literal = written.replace("\\,", "")
    return abs(float(literal) - value) <= 0.5 * 10.0 ** -decimals(literal) + 1e-12


def test_every_approximation_is_listed_and_right(page):
    seen = set()
    for _, anchor, _ in page.headings:
        for statement in statements(page, anchor):
            if "\\approx" not in statement:
                continue
            left, right = (part.strip() for part in statement.rsplit("\\approx", 1))
            key = (anchor, left)
            assert key in APPROX, f"[{anchor}] `{statement}`: add its reference value to APPROX"
            written = re.fullmatch(rf"({NUMBER})", right.rstrip(",.")).group(1)
            assert close_to_written(APPROX[key], written), (
                f"[{anchor}] {left} is {APPROX[key]:.6f}, the page says {written}"
            )
            if left in ARITHMETIC:
                assert close_to_written(ARITHMETIC[left], written), f"{left} as written"
            seen.add(key)
    assert seen == set(APPROX), f"no longer on the page: {set(APPROX) - seen}"


def math_of(page, anchor: str) -> list[str]:
    return page.part(anchor).math


def test_exact_values_stated_in_the_text(page):
    yarn = math_of(page, "yarn-ramp")
    assert yarn_correction_range(128, BASE, 4096) == (20.0, 46.0)
    assert "\\mathrm{lo} = 20" in yarn and "\\mathrm{hi} = 46" in yarn
    assert "\\gamma_{21} = 1/26" in yarn and (21 - 20) / (46 - 20) == 1 / 26
    worked = math_of(page, "worked-example")
    assert yarn_correction_range(R, BASE, L0) == (0.0, 6.0)
    assert "\\mathrm{lo} = 0" in worked and "\\mathrm{hi} = 6" in worked
    assert "L_0/h = 32" in worked and "L_0/\\ell = 128" in worked and (L0 / 4, L0 / 1) == (32, 128)
    # "no pair makes 32 turns over 128 positions"
    assert turns(0) < 32
    # Llama 3.1: 29 pairs kept, 6 blended, 29 divided
    llama = math_of(page, "llama3")
    at = llama.index("r = 128")
    assert llama[at + 1 : at + 5] == ["29", "6", "29", "8"]
    rho = llama3_scaling(128, 500000.0, factor=8.0, original_max_len=8192)[0].double().numpy()
    rho = rho / thetas(128, 500000.0)
    kept, divided = np.isclose(rho, 1.0), np.isclose(rho, 1 / 8)
    assert (kept.sum(), (~kept & ~divided).sum(), divided.sum()) == (29, 6, 29)
    # YaRN's ramp: the code's (in i) and the paper's (in turns) agree outside the thresholds, far
    # apart in the middle (pair 33); the r - 1 clamp of hi would need L0 > 2 pi b^(2(r-1)/r).
    code = yarn_scaling(128, BASE, factor=4.0, original_max_len=4096)[0].double().numpy()
    code, paper = code / thetas(128), paper_ratio(128, BASE, 4096, 4.0)
    assert np.allclose(code[:21], 1.0) and np.allclose(paper[:21], 1.0)
    assert np.allclose(code[46:], 0.25) and np.allclose(paper[46:], 0.25)
    assert "\\rho_{33} = 0.625" in yarn and abs(code[33] - 0.625) < 1e-6
    assert (33 - 20) / (46 - 20) == 0.5 and code[33] - paper[33] > 0.25
    assert "(n_i - \\beta_{\\text{slow}})/(\\beta_{\\text{fast}} - \\beta_{\\text{slow}})" in yarn
    assert "2\\pi \\cdot 10000^{254/128} > 5 \\cdot 10^{8}" in yarn
    needed = 2 * math.pi * 1.0 * BASE ** (2 * 127 / 128)
    assert 5e8 < needed < 6e8
    assert yarn_correction_range(128, BASE, int(needed * 0.99), truncate=False)[1] < 127
    assert yarn_correction_range(128, BASE, int(needed * 1.01), truncate=False)[1] == 127, (
        "only then it acts"
    )
    for l0 in (128, 2048, 4096, 8192, 131072):  # any real length: the clamp never acts
        for r, base in ((32, BASE), (128, BASE), (128, 500000.0)):
            lo, hi = yarn_correction_range(r, base, l0, truncate=False)
            assert hi < r - 1
    temperature = math_of(page, "yarn-temperature")
    assert "t < 1" in temperature and "1/t" in temperature
    assert abs(1 / YARN_FACTOR**2 - 0.771) < 5e-4
    # Code Llama: a base change of an already trained model, 10^4 -> 10^6, fine-tuned at 16 384.
    not_covered = math_of(page, "not-covered")
    assert {"10^4", "10^6", "16\\,384"} <= set(not_covered)
    # PI: position 400 gets the angles of position 400/4 = 100
    assert "400/4 = 100" in math_of(page, "linear")


def test_longrope_values_stated_in_the_text(page):
    text = math_of(page, "longrope")
    # Phi-3-mini-128k: s = 131072 / 4096 = 32 and ln s / ln L0 = 5/12
    assert "s = 131072/4096 = 32" in text and 131072 / 4096 == 32
    assert "\\ln s / \\ln L_0 = 5/12" in text
    assert math.isclose(math.log(32) / math.log(4096), 5 / 12, rel_tol=1e-12)
    assert math.isclose(PHI3_FACTOR, math.sqrt(1 + math.log(32) / math.log(4096)), rel_tol=1e-12)
    # the factors PI and NTK divide each pair by, and the monotone constraint
    assert "\\kappa_i = \\theta_i / \\theta'_i = 1/\\rho_i" in text
    assert "s^{2i/(r-2)}" in text and "\\kappa_i \\le \\kappa_{i+1}" in text
    r = 96
    ntk = rope_frequencies(r).double().numpy() / ntk_scaling(r, factor=32.0)[0].double().numpy()
    assert np.allclose(ntk, 32.0 ** (2 * np.arange(r // 2) / (r - 2)), rtol=1e-5)
    for name in ("linear", "ntk", "yarn", "llama3"):  # every formula above is a rising curve
        kappa = 1 / ratios(name)
        assert np.all(np.diff(kappa) >= -1e-9), name
    # "8x" without fine-tuning and "2048K" tokens are the paper's; r/2 factors each
    assert "8\\times" in text and "2048" in text and "r/2" in text
    # the switch: short up to L0 included, long past it
    short, long = [1.0] * 8, [2.0] * 8
    at = longrope_scaling(16, factor=8.0, original_max_len=64, seq_len=64, short_factor=short,
                          long_factor=long)[0]
    past = longrope_scaling(16, factor=8.0, original_max_len=64, seq_len=65, short_factor=short,
                            long_factor=long)[0]
    assert torch.equal(at, rope_frequencies(16)) and torch.equal(past, rope_frequencies(16) / 2)
    # without factors: ones up to L0, YaRN's past it
    assert torch.equal(longrope_scaling(R, factor=S, original_max_len=L0, seq_len=L0 + 1)[0],
                       yarn_scaling(R, factor=S, original_max_len=L0)[0])


def test_turns_table(page):
    [table] = page.part("unseen-angles").tables
    header, *rows = table
    assert len(header) == 3
    theta = thetas()
    for row in rows:
        i = int(row[0])
        wavelength, n = 2 * math.pi / theta[i], L0 * theta[i] / (2 * math.pi)
        assert close_to_written(wavelength, row[1]), (i, wavelength, row[1])
        assert close_to_written(n, row[2]), (i, n, row[2])
    # "pairs 0 to 5 are fast, 6 to 15 slow"
    n = L0 * theta / (2 * math.pi)
    assert (n[:6] >= 1).all() and (n[6:] < 1).all()
    assert 4 * L0 == 512


def test_worked_example_table(page):
    [table] = page.part("worked-example").tables
    header, *rows = table
    names = [cell.strip("`") for cell in header[2:]]
    assert names == ["linear", "ntk", "yarn", "llama3"]
    expected = {name: ratios(name) for name in names}
    listed = []
    for row in rows:
        i = int(row[0])
        listed.append(i)
        assert close_to_written(turns(i), row[1]), (i, row[1])
        for name, cell in zip(names, row[2:], strict=True):
            assert close_to_written(expected[name][i], cell), (name, i, expected[name][i], cell)
    assert listed == [0, 1, 2, 3, 4, 5, 6, 7, 8, 15]
    # "pairs 9 to 14 follow the same pattern: 0.25 everywhere except ntk, geometric down to 0.25"
    for name in ("linear", "yarn", "llama3"):
        assert np.allclose(expected[name][9:15], 0.25, rtol=1e-6)
    ntk = expected["ntk"]
    assert np.all(np.diff(ntk) < 0) and np.allclose(ntk[1:] / ntk[:-1], ntk[1])
    # "dynamic NTK with s = 1 and L = 512 gives exactly the ntk column"
    dynamic, _ = dynamic_ntk_scaling(R, BASE, factor=1.0, original_max_len=L0, seq_len=512)
    assert np.allclose(dynamic.double().numpy() / thetas(), ntk, rtol=1e-6)
    # "slow pairs 6 to 14 stay above 0.25"
    assert (ntk[6:15] > 0.25).all()


FORMULAS = {
    "unseen-angles": [
        "\\theta_i = b^{-2i/r}",
        "n_i = \\frac{L_0}{\\lambda_i} = \\frac{L_0\\,\\theta_i}{2\\pi}",
    ],
    "common-frame": [
        "\\theta'_i = \\rho_i\\,\\theta_i",
        "\\frac{1}{s} \\le \\rho_i \\le 1",
        "c_i = \\frac{L\\,\\theta'_i}{L_0\\,\\theta_i} = \\frac{L}{L_0}\\,\\rho_i \\le 1",
    ],
    "linear": ["\\theta'_i = \\frac{\\theta_i}{s}", "p\\,\\theta'_i = \\frac{p}{s}\\,\\theta_i"],
    "ntk": [
        "b' = b\\, s^{r/(r-2)}",
        "\\theta'_i = b'^{-2i/r}",
        "b'^{-(r-2)/r} = \\frac{b^{-(r-2)/r}}{s}",
        "\\rho_i = s^{-2i/(r-2)}",
    ],
    "dynamic-ntk": [
        "b'(L) = b \\left( \\frac{s\\,L}{L_0} - (s - 1) \\right)^{r/(r-2)}",
        "b'(L) = b",
    ],
    "yarn-ramp": [
        "i(n) = \\frac{r \\ln\\big(L_0 / (2\\pi n)\\big)}{2 \\ln b}",
        "\\mathrm{lo} = \\lfloor i(\\beta_{\\text{fast}}) \\rfloor",
        "\\mathrm{hi} = \\lceil i(\\beta_{\\text{slow}}) \\rceil",
        "\\gamma_i = \\min\\left(1, \\max\\left(0, \\frac{i - \\mathrm{lo}}"
        "{\\mathrm{hi} - \\mathrm{lo}}\\right)\\right)",
        "\\theta'_i = (1 - \\gamma_i)\\,\\theta_i + \\gamma_i\\,\\frac{\\theta_i}{s}",
    ],
    "yarn-temperature": ["\\sqrt{1/t} = 0.1 \\ln s + 1"],
    "longrope": [
        "\\theta'_i = \\frac{\\theta_i}{\\kappa_i}",
        "\\sqrt{1 + \\frac{\\ln s}{\\ln L_0}}",
    ],
    "llama3": [
        "\\theta'_i = \\begin{cases} \\theta_i & \\lambda_i < L_0 / h \\\\ \\theta_i / s & "
        "\\lambda_i > L_0 / \\ell \\\\ (1 - w_i)\\,\\theta_i / s + w_i\\,\\theta_i & L_0 / h \\le "
        "\\lambda_i \\le L_0 / \\ell \\end{cases}",
        "w_i = \\frac{L_0 / \\lambda_i - \\ell}{h - \\ell}",
    ],
}


def test_formulas_on_the_page_are_the_ones_checked_here(page):
    for anchor, expected in FORMULAS.items():
        found = set(statements(page, anchor)) | {
            normalise_math(part) for s in statements(page, anchor) for part in s.split(", ")
        }
        for formula in expected:
            assert normalise_math(formula) in found, f"[{anchor}] not on the page: {formula}"


@pytest.mark.parametrize(("r", "base", "s"), [(32, 1e4, 4.0), (128, 1e4, 8.0), (64, 5e5, 2.5)])
def test_formulas_match_the_reference(r, base, s):
    i = np.arange(r // 2)
    theta = base ** (-2.0 * i / r)
    assert np.allclose(thetas(r, base), theta, rtol=1e-6)
    # interpolation: theta / s
    assert np.allclose(SCALINGS["linear"](r, base, factor=s)[0].double().numpy(), theta / s, 1e-6)
    # NTK: b' = b s^(r/(r-2)), rho_i = s^(-2i/(r-2)), and the slowest pair divided by s
    new_base = base * s ** (r / (r - 2))
    ntk = ntk_scaling(r, base, factor=s)[0].double().numpy()
    assert np.allclose(ntk, new_base ** (-2.0 * i / r), rtol=1e-5)
    assert np.allclose(ntk / theta, s ** (-2.0 * i / (r - 2)), rtol=1e-5)
    assert math.isclose(new_base ** (-(r - 2) / r), base ** (-(r - 2) / r) / s, rel_tol=1e-12)
    # dynamic NTK at L = 3 L0, and unchanged at L <= L0
    l0 = 256
    dynamic = dynamic_ntk_scaling(r, base, factor=s, original_max_len=l0, seq_len=3 * l0)[0]
    grown = base * (s * 3 * l0 / l0 - (s - 1)) ** (r / (r - 2))
    assert np.allclose(dynamic.double().numpy(), grown ** (-2.0 * i / r), rtol=1e-5)
    same = dynamic_ntk_scaling(r, base, factor=s, original_max_len=l0, seq_len=l0)[0]
    assert torch.equal(same, rope_frequencies(r, base))
    # YaRN: i(n), floor/ceil, clamped ramp, blend, and the attention factor
    lo_raw, hi_raw = pair_index(r, base, 4096, 32.0), pair_index(r, base, 4096, 1.0)
    assert yarn_correction_range(r, base, 4096, truncate=False) == pytest.approx(
        (max(lo_raw, 0.0), min(hi_raw, r - 1.0))
    )
    lo, hi = max(math.floor(lo_raw), 0), min(math.ceil(hi_raw), r - 1)
    gamma = np.clip((i - lo) / (hi - lo), 0, 1)
    inv_freq, factor = yarn_scaling(r, base, factor=s, original_max_len=4096)
    assert np.allclose(inv_freq.double().numpy(), (1 - gamma) * theta + gamma * theta / s, 1e-5)
    assert factor == pytest.approx(0.1 * math.log(s) + 1)
    # Llama 3: bands by wavelength, blend weight w
    wavelength = 2 * math.pi / theta
    h, ell, l0 = 4.0, 1.0, 8192
    w = (l0 / wavelength - ell) / (h - ell)
    want = np.where(
        wavelength < l0 / h,
        theta,
        np.where(wavelength > l0 / ell, theta / s, (1 - w) * theta / s + w * theta),
    )
    got = llama3_scaling(r, base, factor=s, original_max_len=l0)[0].double().numpy()
    assert np.allclose(got, want, rtol=1e-5)


def test_linear_interpolation_credits_both_sources(page):
    # kaiokendev published it with SuperHOT and Chen et al. studied it at the same time.
    opening = page.section("linear").split("$$")[0]
    assert "(#ref-kaiokendev-2023)" in opening and "SuperHOT" in opening
    assert "(#ref-chen-2023)" in opening


def test_summary_repeats_the_formulas(page):
    summary = page.part("summary").math
    for formula in (
        "b' = b\\, s^{r/(r-2)}",
        "\\sqrt{1/t} = 0.1 \\ln s + 1",
        "\\theta'_i = \\rho_i\\,\\theta_i",
        "\\beta_{\\text{fast}} = 32",
        "\\beta_{\\text{slow}} = 1",
    ):
        assert normalise_math(formula) in summary, formula


def test_code_blocks_run_and_print_what_the_page_shows(page):
    blocks = page.code
    ran = 0
    for index, (info, source) in enumerate(blocks):
        if info != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(source, f"{page.path.name}:code#{index}", "exec"), {})  # noqa: S102
        ran += 1
        following = blocks[index + 1] if index + 1 < len(blocks) else ("", "")
        assert following[0] == "text", f"code block #{index} shows its output"
        assert out.getvalue() == following[1], f"output of code block #{index}"
    assert ran == 2
