"""Every number and checkable equation of lesson 17.03 (RoPE), checked against the reference.

The test reads the pages, so editing a number or a formula on a page breaks it:

- numeric formulas are evaluated (``\\sin``/``\\cos`` of numbers and the symbol ``\\theta_{63}``
  are given their values first); a rounded number may be off by half a unit in its last digit;
- the rotation written on the page, the coordinate formula of ``q^T R(alpha) k``, the pairwise
  sum for ``<R_m q, R_n k>`` and the half convention are implemented from their text and compared
  with ``apply_rope``; the permutation identity and the checkpoint conversion are checked;
- the worked example (both matrices, the table of both conventions, the relative table) and the
  float32/bfloat16 error table are recomputed;
- the code blocks are run and their output compared with the page.

Quoted from models and papers, not computed: Llama 3's base 500000 (its consequence is computed),
Pythia's quarter and GPT-J's 64 rotated dimensions.
"""

from __future__ import annotations

import math
import re

import pytest
import torch
from docs_pages import LANGS, normalise_math, pages
from page_numbers import (
    cell_number,
    check_all_statements,
    evaluate,
    run_code_blocks,
    statements,
    to_python,
)

from minimodel.positional.rope import (
    RotaryEmbedding,
    apply_rope,
    rope_frequencies,
    rope_permutation,
)

LESSON = "17/03-rope.md"
NOT_NUMERIC = {
    "p \\approx 4096",  # a position, in the summary
    # the two rotations of pair 0 and the two vectors of the relative example: test_worked_*
    "R(2)\\,q = (\\cos 2, \\sin 2) \\approx (-0.4161, 0.9093)",
    "R(5)\\,k = (-\\sin 5, \\cos 5) \\approx (0.9589, 0.2837)",
}
ROTATION = (
    "R(\\alpha) = \\begin{pmatrix} \\cos\\alpha & -\\sin\\alpha \\\\ \\sin\\alpha & "
    "\\cos\\alpha \\end{pmatrix}"
)
COORDINATES = (
    "q^\\top R(\\alpha)\\, k = \\cos\\alpha\\, (q_0 k_0 + q_1 k_1) + \\sin\\alpha\\, "
    "(q_1 k_0 - q_0 k_1)"
)
DERIVATION = (
    "\\langle R(m\\theta)\\, q,\\ R(n\\theta)\\, k \\rangle = q^\\top R(m\\theta)^\\top R(n\\theta)"
    "\\, k = q^\\top R(-m\\theta)\\, R(n\\theta)\\, k = q^\\top R\\big((n - m)\\,\\theta\\big)\\, k"
)


@pytest.fixture(params=LANGS)
def page(request):
    return pages(LESSON)[request.param]


def theta(d: int, base: float = 10000.0) -> torch.Tensor:
    return base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)


def rotation(angle: float) -> torch.Tensor:
    """R(alpha) as the page writes it."""
    c, s = math.cos(angle), math.sin(angle)
    return torch.tensor([[c, -s], [s, c]], dtype=torch.float64)


def rope_1d(x, p, convention="interleaved", base=10000.0):
    """apply_rope on one vector at one position, in float64."""
    x = torch.as_tensor(x, dtype=torch.float64).reshape(1, 1, 1, -1)
    f = rope_frequencies(x.shape[-1], base)
    return apply_rope(x, torch.tensor([p]), f, convention=convention).flatten()


def _numeric(statement: str) -> str:
    """Give sin/cos of numbers and theta_63 their values, so page_numbers can evaluate them."""
    out = re.sub(
        r"\\(sin|cos)\s+(\d+(?:\.\d+)?)",
        lambda m: repr(getattr(math, m.group(1))(float(m.group(2)))),
        statement,
    )
    out = out.replace("\\theta_{63}", repr(float(theta(128)[63])))
    return re.sub(r"(?<=\d)\\,(?=\d{3})", "", out)  # 2\,559\,196 -> 2559196


def test_numeric_formulas(page):
    formulas = [_numeric(s) for s in statements(page.math) if "pmatrix" not in s]
    not_numeric = {_numeric(s) for s in NOT_NUMERIC}
    # "\\approx 54410": rounded to an integer, so it may be off by half a unit.
    to_integer = [s for s in formulas if re.search(r"\\approx\s*\d+$", s) and s not in not_numeric]
    for statement in to_integer:
        left, right = statement.rsplit("\\approx", 1)
        value = evaluate(to_python(left.split("=")[-1]))
        assert abs(value - int(right)) <= 0.5, f"{statement}: {value:.6g}"
    assert len(to_integer) >= 2
    assert check_all_statements(formulas, not_numeric | set(to_integer)) >= 18


def test_frequencies_and_wavelengths(page):
    f = rope_frequencies(128)
    assert torch.allclose(f.double(), theta(128), rtol=1e-6)
    assert abs(2 * math.pi / float(theta(128)[63]) - 54410) < 0.5
    assert abs(2 * math.pi / float(theta(128, 500000.0)[63]) - 2559196) < 0.5
    assert torch.allclose(rope_frequencies(4), torch.tensor([1.0, 0.01]))


def test_rotation_and_derivation_hold(page):
    found = set(statements(page.math)) | set(page.math)
    for formula in (ROTATION, COORDINATES, DERIVATION):
        assert normalise_math(formula) in found, f"no longer on the page: {formula}"
    torch.manual_seed(0)
    q, k = torch.randn(2, dtype=torch.float64), torch.randn(2, dtype=torch.float64)
    th = 0.37
    for m, n in ((0, 0), (2, 5), (5, 2), (11, 40)):
        left = (rotation(m * th) @ q) @ (rotation(n * th) @ k)
        alpha = (n - m) * th
        assert torch.isclose(left, q @ rotation(alpha) @ k)
        coords = math.cos(alpha) * (q[0] * k[0] + q[1] * k[1]) + math.sin(alpha) * (
            q[1] * k[0] - q[0] * k[1]
        )
        assert abs(left.item() - coords.item()) < 1e-12
        # complex form: Re(q~ conj(k~) e^{i(m-n) theta})
        qc, kc = complex(q[0], q[1]), complex(k[0], k[1])
        assert (
            abs(
                left.item()
                - (qc * kc.conjugate() * complex(math.cos(-alpha), math.sin(-alpha))).real
            )
            < 1e-12
        )
    # The wrong sign is a different number.
    assert not torch.isclose(q @ rotation(3 * th) @ k, q @ rotation(-3 * th) @ k)
    # The page's rotation is the reference's interleaved pair, turned by p * theta.
    x = torch.tensor([0.3, -1.2], dtype=torch.float64)
    assert torch.allclose(rope_1d(x, 7), rotation(7.0) @ x)


def test_pairwise_sum_is_the_reference(page):
    torch.manual_seed(1)
    d = 16
    q, k = torch.randn(d, dtype=torch.float64), torch.randn(d, dtype=torch.float64)
    th = theta(d)
    for m, n in ((3, 5), (10, 12), (100, 102), (5, 3), (0, 77)):
        rotated = (rope_1d(q, m) * rope_1d(k, n)).sum()
        a = (n - m) * th
        pairwise = (
            a.cos() * (q[0::2] * k[0::2] + q[1::2] * k[1::2])
            + a.sin() * (q[1::2] * k[0::2] - q[0::2] * k[1::2])
        ).sum()
        assert abs(rotated - pairwise) < 1e-5  # apply_rope's angles are float32
        assert abs(rope_1d(q, m).norm() - q.norm()) < 1e-6
    assert torch.allclose(rope_1d(q, 0), q)


def test_half_convention_and_rotate_half(page):
    torch.manual_seed(2)
    d, p = 8, 13
    x = torch.randn(d, dtype=torch.float64)
    th = theta(d)
    c, s = (p * th).cos(), (p * th).sin()
    half = torch.cat([x[:4] * c - x[4:] * s, x[4:] * c + x[:4] * s])  # the page's formula
    assert torch.allclose(rope_1d(x, p, "half"), half)
    angles = torch.cat([p * th, p * th])
    rotate_half = torch.cat([-x[4:], x[:4]])
    assert torch.allclose(rope_1d(x, p, "half"), x * angles.cos() + rotate_half * angles.sin())


def test_permutation_and_checkpoint_conversion(page):
    assert "\\mathrm{half}(x_\\pi) = \\mathrm{interleaved}(x)_\\pi" in page.math
    assert rope_permutation(8).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert rope_permutation(4).tolist() == [0, 2, 1, 3]
    torch.manual_seed(3)
    D, C, T, H = 8, 12, 5, 2
    pos = torch.arange(T)
    f = rope_frequencies(D)
    perm = rope_permutation(D)
    x = torch.randn(1, 1, T, D)
    assert torch.allclose(
        apply_rope(x[..., perm], pos, f, convention="half"), apply_rope(x, pos, f)[..., perm]
    )
    w_q, w_k, h = torch.randn(H * D, C), torch.randn(H * D, C), torch.randn(1, T, C)

    def logits(wq, wk, convention):
        q = (h @ wq.T).reshape(1, T, H, D).transpose(1, 2)
        k = (h @ wk.T).reshape(1, T, H, D).transpose(1, 2)
        q, k = (
            apply_rope(q, pos, f, convention=convention),
            apply_rope(k, pos, f, convention=convention),
        )
        return q @ k.transpose(-2, -1)

    per_head = torch.cat([perm + head * D for head in range(H)])
    converted = logits(w_q[per_head], w_k[per_head], "half")
    assert torch.allclose(converted, logits(w_q, w_k, "interleaved"), atol=1e-4)
    assert not torch.allclose(logits(w_q, w_k, "half"), logits(w_q, w_k, "interleaved"), atol=1e-2)


def _pmatrix(text: str) -> list[list[float]]:
    rows = text.split("\\\\")
    return [[float(eval(c, {"__builtins__": {}})) for c in r.split("&")] for r in rows]  # noqa: S307


@pytest.mark.parametrize(("pair", "convention"), [((1, 2), "interleaved"), ((1, 3), "half")])
def test_worked_rotations(page, pair, convention):
    [statement] = [
        s
        for s in statements(page.part("worked-example").math)
        if f"\\begin{{pmatrix}} {pair[0]} \\\\ {pair[1]} \\end{{pmatrix}}" in s
    ]
    assert statement.startswith(
        "\\begin{pmatrix} \\cos 1 & -\\sin 1 \\\\ \\sin 1 & \\cos 1 \\end{pmatrix}"
    ), "the matrix is R(1) as defined on the page"
    matrices = re.findall(r"\\begin\{pmatrix\}(.*?)\\end\{pmatrix\}", statement)
    terms, result = matrices[2], matrices[3]
    exact = rotation(1.0) @ torch.tensor(pair, dtype=torch.float64)
    products = [re.findall(r"-?\d+\.\d+", row) for row in terms.split("\\\\")]
    # the terms are cos 1, sin 1 times the coordinates, to four decimals
    c, s = math.cos(1), math.sin(1)
    assert [float(v) for v in products[0]] == pytest.approx([pair[0] * c, pair[1] * s], abs=5e-5)
    assert [float(v) for v in products[1]] == pytest.approx([pair[0] * s, pair[1] * c], abs=5e-5)
    written = torch.tensor(_pmatrix(result), dtype=torch.float64).flatten()
    assert torch.allclose(written, exact, atol=5e-5)
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    out = rope_1d(x, 1, convention)
    places = (0, 1) if convention == "interleaved" else (0, 2)
    assert torch.allclose(out[list(places)], exact, atol=1e-12)


def test_worked_conventions_table(page):
    tables = page.part("worked-example").tables
    conventions = tables[0]
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    for row, convention in zip(conventions[1:], ("interleaved", "half"), strict=True):
        stated = torch.tensor([cell_number(c) for c in row[2:]], dtype=torch.float64)
        assert torch.allclose(stated, rope_1d(x, 1, convention), atol=5e-5), row
        assert abs(stated.square().sum() - 30) < 1e-3, "the norm is kept"
    # Research note B, section 3: the published reference rows.
    assert torch.allclose(
        rope_1d(x, 1),
        torch.tensor([-1.142640, 1.922076, 2.959851, 4.029800], dtype=torch.float64),
        atol=1e-6,
    )
    assert torch.allclose(
        rope_1d(x, 1, "half"),
        torch.tensor([-1.984111, 1.959901, 2.462378, 4.019800], dtype=torch.float64),
        atol=1e-6,
    )
    # x_pi = [1, 3, 2, 4], half of it = interleaved, reordered
    text = normalise_math(page.section("worked-example"))
    assert "x_\\pi = [1, 3, 2, 4]" in text and "[-1.1426, 2.9599, 1.9221, 4.0298]" in text
    perm = rope_permutation(4)
    assert torch.allclose(rope_1d(x[perm], 1, "half"), rope_1d(x, 1)[perm])
    assert torch.allclose(
        rope_1d(x[perm], 1, "half"),
        torch.tensor([-1.1426, 2.9599, 1.9221, 4.0298]).double(),
        atol=5e-5,
    )


def test_worked_relative_property(page):
    found = set(statements(page.part("worked-example").math))
    assert NOT_NUMERIC - {"p \\approx 4096"} <= found
    q, k = torch.tensor([1.0, 0.0]).double(), torch.tensor([0.0, 1.0]).double()
    assert torch.allclose(rotation(2) @ q, torch.tensor([-0.4161, 0.9093]).double(), atol=5e-5)
    assert torch.allclose(rotation(5) @ k, torch.tensor([0.9589, 0.2837]).double(), atol=5e-5)
    relative = page.part("worked-example").tables[1]
    for row in relative[1:]:
        m, n, delta, value = (cell_number(c) for c in row)
        assert delta == n - m
        logit = (rope_1d(q, int(m)) @ rope_1d(k, int(n))).item()
        assert abs(logit - value) <= 5e-5, row
        assert abs(-math.sin(delta) - value) <= 5e-5, "q^T R(alpha) k = -sin(alpha)"


def test_bfloat16_and_float32_table(page):
    [table] = page.part("float32-angles").tables
    f = rope_frequencies(128)
    exact = theta(128)
    limits = [int(re.search(r"\d+", row[0]).group()) for row in table[1:]]
    assert limits == [256, 4096, 32768]
    positions = torch.arange(max(limits))
    errors = {}
    for dtype in (torch.bfloat16, torch.float32):
        angles = (positions.to(dtype)[:, None] * f.to(dtype)[None]).double()
        errors[dtype] = (angles - positions.double()[:, None] * exact).abs().max(dim=-1).values
    for row, limit in zip(table[1:], limits, strict=True):
        for cell, dtype in zip(row[1:], (torch.bfloat16, torch.float32), strict=True):
            measured = errors[dtype][:limit].max().item()
            assert abs(float(cell) - measured) <= 0.005 * measured, (limit, dtype, cell, measured)
    assert torch.tensor(257.0).to(torch.bfloat16).item() == 256.0
    assert torch.tensor(4097.0).to(torch.bfloat16).item() == 4096.0
    assert torch.finfo(torch.float32).eps * 4096 / 2 == 2**-12  # half the float32 gap at 4096


def test_bfloat16_rounds_the_frequencies_by_up_to_2_to_the_minus_8(page):
    # bfloat16 keeps 8 significant bits: rounding to nearest errs by up to half a step, 2^-8
    # relative. For d = 128, 21 of the 64 frequencies are off by more than 2^-9.
    warning = page.paragraph("float32-angles", "!!! warning")
    exact = theta(128)
    relative = (rope_frequencies(128).to(torch.bfloat16).double() - exact).abs() / exact
    beyond_half = int((relative > 2**-9).sum())
    assert beyond_half == 21 and relative.max().item() <= 2**-8
    assert "$2^{-8} \\approx 0.0039$" in warning and "2^{-9} \\approx" not in warning
    assert f"${beyond_half}$" in warning and f"${len(exact)}$" in warning and "$2^{-9}$" in warning


def test_why_float32_angles_are_accepted_here(page):
    # An angle off by 2^-12 moves cos and sin by at most 2^-12: 16 times less than rounding them
    # to bfloat16 (relative error up to 2^-8); the reference computes its angles in float32.
    from minimodel.positional.rope import rope_cos_sin

    text = " ".join(page.section("float32-angles").split())
    assert "$16$" in text and "$2^{-8} \\approx 0.0039$" in text and "17.01" in text
    angles = torch.linspace(0.0, 4096.0, 100_001, dtype=torch.float64)
    for f in (torch.cos, torch.sin):
        moved = (f(angles + 2**-12) - f(angles)).abs().max().item()
        assert moved <= 2**-12
    values = torch.linspace(0.01, 1.0, 100_001, dtype=torch.float64)
    rounded = values.to(torch.bfloat16).double()
    worst = ((rounded - values).abs() / values).max().item()
    assert 0.9 * 2**-8 < worst <= 2**-8 and 2**-8 / 2**-12 == 16
    positions, f = torch.arange(4000, 4096), rope_frequencies(128)
    cos, _ = rope_cos_sin(positions, f)
    in_float32 = torch.cos(positions.float()[:, None] * f)
    in_float64 = torch.cos(positions.double()[:, None] * f.double()).float()
    assert torch.allclose(cos, in_float32, atol=1e-6), "the reference's angles are float32"
    assert (cos - in_float64).abs().max().item() > 1e-5, "... not float64"


def test_reference_does_not_suffer_from_bfloat16(page):
    torch.manual_seed(4)
    x = torch.randn(1, 2, 32, 64).to(torch.bfloat16)
    positions = torch.arange(4096, 4128)
    f = rope_frequencies(64)
    out = apply_rope(x, positions, f)
    assert out.dtype == torch.bfloat16
    truth = torch.stack(
        [
            torch.stack([rope_1d(x[0, h, t].double(), int(p)) for t, p in enumerate(positions)])
            for h in range(2)
        ]
    )
    assert (out[0].double() - truth).abs().max() < 0.05
    assert RotaryEmbedding(64).to(torch.bfloat16).inv_freq.dtype == torch.float32


def test_code_blocks():
    # The code is the same in both languages (test_docs_parity): run it once.
    found = pages(LESSON)
    assert found["es"].code == found["en"].code
    assert run_code_blocks(found["en"]) == 3
