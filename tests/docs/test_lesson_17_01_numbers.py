"""Every number and checkable equation of lesson 17.01, checked against the reference.

The test reads the pages, so editing a number on a page breaks it. Three kinds of check:

- **Approximate equalities.** Every formula with ``\\approx`` (and every ``=`` between numbers)
  is evaluated: numbers, ``\\pi``, ``\\sin``/``\\cos`` of numbers, ``\\frac``, powers, and the
  symbols a section defines (``\\omega_{255}``, ``\\lambda_2``, ...), whose values come from
  ``sinusoidal_pe``. A rounded number may be off by half a unit in its last digit. A formula with
  ``\\approx`` that cannot be evaluated fails the test, unless it is listed in ``NOT_NUMERIC``.
- **Tables**: the worked example, the dot products and the three layouts, cell by cell.
- **Symbolic formulas** (the shift matrix, the dot product, the norm): read from the page and
  checked numerically on the reference table.

The code blocks are run and their output compared with the ``text`` block that follows them.
"""

from __future__ import annotations

import contextlib
import io
import math
import re

import numpy as np
import pytest
from docs_pages import LANGS, LESSON, decimals, normalise_math, numbers, pages

from minimodel.positional.sinusoidal import sinusoidal_pe

BASE = 10000.0
NUMBER = r"-?\d+(?:\\,\d{3})*(?:\.\d+)?"


def frequencies(d: int) -> np.ndarray:
    """The frequencies as the reference table has them: the angle of each pair at p = 1."""
    row = sinusoidal_pe(2, d).astype(np.float64)[1]
    return np.arctan2(row[0::2], row[1::2])


# Symbols each section gives a value to. Values come from the reference where they can.
def section_symbols() -> dict[str, dict[str, float]]:
    w8, w512 = frequencies(8), frequencies(512)
    arithmetic = np.linspace(1.0, 1.0 / BASE, 32)  # d = 64: 32 evenly spaced speeds
    pe8 = sinusoidal_pe(2, 8).astype(np.float64)
    return {
        "geometric-frequencies": {"b": BASE, "d": 512, "\\omega_{30}": arithmetic[30]},
        "base": {"b": BASE, "\\lambda_0": 2 * np.pi / w512[0], "\\omega_{255}": w512[255]},
        "worked-example": {
            **{f"\\omega_{i}": w8[i] for i in range(4)},
            **{f"\\lambda_{i}": 2 * np.pi / w8[i] for i in range(4)},
            "\\lVert \\mathrm{PE}(1) \\rVert^2": float(pe8[1] @ pe8[1]),
            "\\mathrm{PE}(0) \\cdot \\mathrm{PE}(1)": float(pe8[0] @ pe8[1]),
        },
    }


# Formulas with \approx that are not numeric claims.
NOT_NUMERIC = {
    "\\sin(0.001\\,p) \\approx 0.001\\,p",  # small-angle approximation
}

RELATION = re.compile(r"\\approx|=|<|\\iff|\\gg")


# ----------------------------------------------------------------------------------------------
# A small evaluator for the numeric formulas of the page.


def _python(tex: str, symbols: dict[str, float]) -> str | None:
    """Python expression for a numeric LaTeX expression, or None if it is not numeric."""
    s = tex.strip().rstrip(",.;")
    for name in sorted(symbols, key=len, reverse=True):
        if len(name) == 1:
            s = re.sub(rf"(?<![\\A-Za-z]){name}(?![A-Za-z])", f"({float(symbols[name])!r})", s)
        else:
            s = s.replace(name, f"({float(symbols[name])!r})")
    s = re.sub(r"(\d)\\,(\d{3})", r"\1\2", s)  # thousands: 47\,117
    s = s.replace("\\,", " ").replace("\\cdot", "*").replace("\\pi", " pi ")
    s = re.sub(r"\\log_\{10\}\s*(\([^()]*\)|[\d.]+)", r"log10(\1)", s)
    s = re.sub(r"\\(sin|cos)\s*([\d.]+)", r"\1(\2)", s)
    while True:  # innermost braces first
        new = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"((\1)/(\2))", s)
        new = re.sub(r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)", new)
        new = re.sub(r"\^\{([^{}]*)\}", r"**(\1)", new)
        if new == s:
            break
        s = new
    s = re.sub(r"\^(\d)", r"**\1", s)
    s = re.sub(r"((?<![A-Za-z\d])[\d.]+|\))\s*(pi|sqrt|log10|sin|cos|\()", r"\1*\2", s)
    s = re.sub(r"(\d|\))\s+(\d)", r"\1*\2", s)
    allowed = r"(?:\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|pi|sqrt|log10|sin|cos|[\s+\-*/()])*"
    return s if re.fullmatch(allowed, s) else None


_NAMES = {"pi": math.pi, "sqrt": math.sqrt, "log10": math.log10, "sin": math.sin, "cos": math.cos}


def _evaluate(expression: str) -> float:
    return float(eval(expression, {"__builtins__": {}}, dict(_NAMES)))  # noqa: S307 (own pages)


def value_and_tolerance(tex: str, symbols: dict[str, float], rounded: bool) -> tuple | None:
    """``(value, tolerance)`` of a numeric expression; None when it is not numeric.

    With ``rounded`` (the side of an ``\\approx``), a side made only of written numbers may be off
    by their rounding: half a unit in the last digit of each decimal, added up through the
    expression (integers are exact). A side with ``\\pi``, a function or a symbol is exact.
    """
    expression = _python(tex, symbols)
    if expression is None or not expression.strip():
        return None
    value = _evaluate(expression)
    plain = _python(tex, {})
    if not rounded or plain is None or re.search(r"[a-z]", plain):
        return value, 0.0
    bare = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*", plain)
    if bare:
        return value, 0.5 * 10.0 ** -decimals(bare.group(1))
    tolerance = 0.0
    for literal in re.finditer(r"(?<![\w.])\d+\.\d+", plain):
        half = 0.5 * 10.0 ** -decimals(literal.group())
        bumped = plain[: literal.start()] + f"({literal.group()}+{half!r})" + plain[literal.end() :]
        tolerance += abs(_evaluate(bumped) - value)
    return value, tolerance


def check_chain(tex: str, symbols: dict[str, float]) -> int:
    """Check every relation between two numeric sides of ``tex``; return how many were checked."""
    parts = RELATION.split(tex)
    relations = RELATION.findall(tex)
    checked = 0
    for (left, right), relation in zip(zip(parts, parts[1:], strict=False), relations, strict=True):
        if relation not in ("=", "\\approx") or re.fullmatch(r"\s*[A-Za-z]\s*", left):
            continue  # "d = 64" in the text fixes a value; it does not claim one
        rounded = relation == "\\approx"
        a = value_and_tolerance(left, symbols, rounded)
        b = value_and_tolerance(right, symbols, rounded)
        if a is None or b is None:
            continue
        # Relative 1e-6: symbol values are read from the float32 table.
        slack = a[1] + b[1] + 1e-6 * max(abs(a[0]), abs(b[0])) + 1e-12
        claim = f"{left.strip()} {relation} {right.strip()}"
        assert abs(a[0] - b[0]) <= slack, f"{claim}: {a[0]:.6g} vs {b[0]:.6g} (± {slack:.2g})"
        checked += 1
    return checked


def flatten(tex: str) -> str:
    """One line from an ``aligned``/``gathered`` block: drop alignment marks and line breaks."""
    if "pmatrix" in tex:
        return tex
    tex = re.sub(r"\\(?:begin|end)\{(?:aligned|gathered)\}", " ", tex)
    tex = re.sub(r"\\\\(?:\[[^\]]*\])?|&|\\quad", " ", tex)
    return normalise_math(tex)


def section_math(page, anchor: str, own: bool = False) -> list[str]:
    """Formulas of one section, split at ``\\qquad`` into separate statements."""
    found = [flatten(m) for m in page.part(anchor, own).math]
    return [part.strip() for m in found for part in re.split(r",?\s*\\qquad\s*", m) if part.strip()]


# ----------------------------------------------------------------------------------------------


@pytest.fixture(params=LANGS)
def page(request):
    return pages(LESSON)[request.param]


def test_evaluator_reads_rounded_numbers():
    assert check_chain("2\\pi \\cdot 10000 \\approx 62\\,832", {}) == 1
    with pytest.raises(AssertionError):
        check_chain("2\\pi \\cdot 10000 \\approx 62\\,830", {})
    assert check_chain("\\sqrt{256} = 16", {}) == 1
    with pytest.raises(AssertionError):
        check_chain("\\frac{512}{8} = 63", {})
    assert check_chain("\\lambda_{d/2-1} \\gg T_{\\max}", {}) == 0


def test_every_approximate_formula_is_checked(page):
    symbols = section_symbols()
    anchors = [anchor for _, anchor, _ in page.headings]
    total = 0
    for anchor in anchors:
        if anchor is None or anchor == page.headings[0][1]:
            continue
        for statement in section_math(page, anchor, own=True):
            if "pmatrix" in statement or statement in NOT_NUMERIC:
                continue  # matrices: test_rotation_example
            checked = check_chain(statement, symbols.get(anchor, {}))
            if "\\approx" in statement:
                assert checked, f"[{anchor}] cannot check `{statement}`: give its symbols a value"
            total += checked
    assert total >= 25, f"only {total} numeric relations checked; did the parser stop finding them?"


def test_worked_example_table(page):
    [table] = page.part("worked-example").tables
    header, *rows = table
    for column, cell in enumerate(header[1:]):
        function, pair = re.fullmatch(r"\$\\(sin|cos)\(p\\,\\omega_(\d)\)\$", cell).groups()
        assert (function, int(pair)) == (("sin", "cos")[column % 2], column // 2), cell
    expected = sinusoidal_pe(4, 8)
    assert [int(row[0]) for row in rows] == [0, 1, 2, 3]
    for p, row in enumerate(rows):
        for column, cell in enumerate(row[1:]):
            places = decimals(cell)
            assert places >= 2, f"{cell}: write at least two decimals"
            assert abs(float(cell) - expected[p, column]) <= 0.5 * 10**-places + 1e-7, (
                f"PE({p})[{column}] is {expected[p, column]:.6f}, the page says {cell}"
            )


def test_norm_and_dot_product_by_hand_use_the_table(page):
    [table] = page.part("worked-example").tables
    rows = [[float(c) for c in row[1:]] for row in table[1:]]
    statements = section_math(page, "worked-example")
    [norm] = [s for s in statements if s.startswith("\\lVert \\mathrm{PE}(1) \\rVert^2")]
    squared = [float(x) for x in re.findall(rf"({NUMBER})\^2", norm)]
    assert squared == [abs(x) for x in rows[1]], "the norm adds the squares of row 1"
    [dot] = [s for s in statements if s.startswith("\\mathrm{PE}(0) \\cdot \\mathrm{PE}(1)")]
    cosines = [float(x) for x in re.findall(rf"\\cos ({NUMBER})", dot)]
    assert cosines == list(frequencies(8).round(6)), "PE(0)·PE(1) = sum of cos(w_i)"
    terms = numbers(dot.split("\\approx")[1].split("=")[0])
    assert terms == rows[1][1::2], "the terms are the cosine columns of row 1"


def test_rotation_example(page):
    [statement] = [s for s in section_math(page, "worked-example") if "0.5403" in s]
    values = numbers(statement.split("\\approx", 1)[1])
    m, v, result = np.array(values[:4]).reshape(2, 2), np.array(values[4:6]), np.array(values[6:])
    exact = np.array([[np.cos(1), np.sin(1)], [-np.sin(1), np.cos(1)]])
    assert np.allclose(m, exact, atol=5e-5), "R_0(1) with four decimals"
    assert np.allclose(v, [np.sin(2), np.cos(2)], atol=5e-5), "(sin 2, cos 2)"
    table = sinusoidal_pe(4, 8)
    assert np.allclose(result, table[3, :2], atol=5e-5), "(sin 3, cos 3) is pair 0 of row 3"
    assert np.allclose(m @ v, result, atol=1e-4), "the product of the numbers shown"


def _rotation_from_page(page):
    """R_i(Δ) as written on the page, as a function of the angle Δ·ω_i."""
    [statement] = [
        s for s in section_math(page, "sin-cos-pairs") if "R_i(\\Delta) = \\begin{pmatrix}" in s
    ]
    body = statement.split("R_i(\\Delta) = \\begin{pmatrix}")[1].split("\\end{pmatrix}")[0]
    cells = [cell.strip() for row in body.split("\\\\") for cell in row.split("&")]
    entries = []
    for cell in cells:
        sign, function = re.fullmatch(r"(-?)\\(sin|cos)\(\\Delta\\,\\omega_i\)", cell).groups()
        entries.append((-1.0 if sign else 1.0, np.sin if function == "sin" else np.cos))
    return lambda angle: np.array([s * f(angle) for s, f in entries]).reshape(2, 2)


def test_shift_is_the_rotation_written_on_the_page(page):
    rotation = _rotation_from_page(page)
    d, delta = 16, 7
    table = sinusoidal_pe(64, d).astype(np.float64)
    omega = frequencies(d)
    blocks = [rotation(delta * w) for w in omega]
    shift = np.zeros((d, d))
    for i, block in enumerate(blocks):
        shift[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = block
    assert np.allclose(table[delta:], table[:-delta] @ shift.T, atol=1e-6), "PE(p+Δ) = M(Δ) PE(p)"
    assert np.allclose(shift.T @ shift, np.eye(d)), "M(Δ) is orthogonal"
    assert all(np.isclose(np.linalg.det(b), 1.0) for b in blocks), "det R_i = 1"


def test_symbolic_formulas_hold_for_the_reference(page):
    expected = {
        "\\mathrm{PE}(0) = [0, 1, 0, 1, \\dots, 0, 1]",
        "\\mathrm{PE}(0) = [0, 1, 0, 1, 0, 1, 0, 1]",
        "\\frac{\\omega_{i+1}}{\\omega_i} = b^{-2/d}",
        "\\lVert \\mathrm{PE}(p) \\rVert^2 = \\sum_{i=0}^{d/2-1} \\big[\\sin^2(p\\,\\omega_i) "
        "+ \\cos^2(p\\,\\omega_i)\\big] = \\frac{d}{2}",
        "\\mathrm{PE}(0) \\cdot \\mathrm{PE}(k) = \\sum_{i=0}^{d/2-1} \\cos(k\\,\\omega_i)",
    }
    statements = set(page.math) | {
        part for m in page.math for part in re.split(r",?\s*\\qquad\s*", m)
    }
    missing = expected - statements
    assert not missing, f"formulas checked below are no longer on the page: {missing}"
    assert any("= \\sum_{i=0}^{d/2-1} \\cos\\big((p-q)\\,\\omega_i\\big)" in m for m in page.math)

    for d in (2, 8, 64, 512):
        table = sinusoidal_pe(300, d).astype(np.float64)
        omega = frequencies(d)
        assert np.array_equal(table[0], np.tile([0.0, 1.0], d // 2)), "PE(0) = [0, 1, ...]"
        assert np.allclose((table**2).sum(axis=1), d / 2, atol=1e-5), "||PE(p)||^2 = d/2"
        assert np.allclose(omega[1:] / omega[:-1], BASE ** (-2 / d)), "geometric frequencies"
        for p, q in ((0, 5), (17, 3), (120, 299)):
            assert np.isclose(table[p] @ table[q], np.cos((p - q) * omega).sum(), atol=1e-5)


def test_dot_product_table(page):
    [table] = page.part("dot-product").tables
    rows = table[1:]
    ks = [int(k) for k, _ in rows]
    pe = sinusoidal_pe(max(ks) + 1, 64).astype(np.float64)
    for k, cell in rows:
        exact = pe[0] @ pe[int(k)]
        assert abs(exact - float(cell)) <= 0.5 * 10 ** -decimals(cell) + 1e-6, f"k={k}: {exact:.4f}"
    by_k = {int(k): float(v) for k, v in rows}
    assert by_k[0] == 32, "d/2"
    # The page points out two bumps: the decay is not monotonic.
    assert by_k[100] > by_k[50] and by_k[1000] > by_k[500]


def t2t_row(p: int, d: int) -> np.ndarray:
    """tensor2tensor / fairseq: [sin | cos] with frequencies b^(-i / (d/2 - 1))."""
    omega = BASE ** (-np.arange(d // 2) / (d // 2 - 1))
    return np.concatenate([np.sin(p * omega), np.cos(p * omega)])


def test_layouts_table(page):
    [table] = page.part("concatenated-layout").tables
    interleaved, marian, t2t = ([float(x) for x in row[1:]] for row in table[1:])
    row = sinusoidal_pe(2, 4).astype(np.float64)[1]
    perm = np.concatenate([np.arange(0, 4, 2), np.arange(1, 4, 2)])
    assert np.allclose(interleaved, row, atol=5e-7)
    assert np.allclose(marian, row[perm], atol=5e-7)
    assert np.allclose(t2t, t2t_row(1, 4), atol=5e-7)
    for d in (4, 8, 64, 512):
        i = np.arange(1, d // 2)
        assert np.all(BASE ** (-i / (d // 2 - 1)) < BASE ** (-2 * i / d)), "only w_0 is shared"


def test_float32_angle_note(page):
    note = normalise_math(page.section("float64-angles"))
    assert "2^{-12} \\approx 2.4 \\cdot 10^{-4}" in note
    assert np.spacing(np.float32(4000.0)) == 2.0**-12
    # float32 angles at p = 4000 (d = 512) are off by about 1e-4 rad ...
    k = np.arange(0, 512, 2, dtype=np.float32)
    omega32 = (np.float32(1.0) / np.float32(BASE) ** (k / np.float32(512))).astype(np.float32)
    error = np.abs(np.float32(4000) * omega32 - 4000 * BASE ** (-np.arange(0, 512, 2) / 512))
    assert 5e-5 < error.max() < 1e-3
    # ... while the reference, with float64 angles, only rounds the final value (< 1e-7).
    table = sinusoidal_pe(4096, 512).astype(np.float64)
    angles = np.arange(4096)[:, None] * BASE ** (-np.arange(0, 512, 2) / 512)
    assert np.abs(table[:, 0::2] - np.sin(angles)).max() < 1e-7
    assert np.abs(table[:, 1::2] - np.cos(angles)).max() < 1e-7


def test_code_blocks_run_and_print_what_the_page_shows():
    # One language is enough: the parity test makes both pages' code identical.
    page = pages(LESSON)["es"]
    blocks = page.code
    ran = 0
    for index, (info, source) in enumerate(blocks):
        if info != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out), np.printoptions():
            exec(compile(source, f"{page.path.name}:code#{index}", "exec"), {})  # noqa: S102
        ran += 1
        following = blocks[index + 1] if index + 1 < len(blocks) else ("", "")
        if following[0] == "text":
            assert out.getvalue() == following[1], f"output of code block #{index}"
    assert ran == 3
