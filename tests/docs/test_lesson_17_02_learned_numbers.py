"""Every number and checkable equation of lesson 17.02 (learned positions), against the reference.

The test reads the pages, so editing a number on a page breaks it: the numeric formulas are
evaluated, the table of models is recomputed from ``LearnedPositionalEmbedding``, the
interpolation formula written on the page is implemented from its text and compared with
``interpolate_positions`` and with PyTorch, the worked example is recomputed, and the code blocks
are run. The numbers quoted from papers and code (BERT's 90%/10% schedule at 128/512 tokens,
GPT-2's initialisation: 0.01 for positions and 0.02 for tokens in OpenAI's code, 0.02 for both in
Hugging Face and nanoGPT) are citations, not computations; 0.02 is also the module's default, and
the Mini-GPT's token table's, which are checked.
"""

from __future__ import annotations

import inspect
import re

import pytest
import torch
import torch.nn.functional as F
from docs_pages import LANGS, normalise_math, pages
from page_numbers import cell_number, check_all_statements, run_code_blocks, statements

from minimodel.positional.learned import LearnedPositionalEmbedding, interpolate_positions

LESSON = "17/02-learned-vs-sinusoidal.md"
NOT_NUMERIC: set[str] = set()
INTERPOLATION = (
    "s_j = j\\,\\frac{L - 1}{L' - 1}, \\qquad P'_j = (1 - \\phi_j)\\, P_{\\lfloor s_j \\rfloor} "
    "+ \\phi_j\\, P_{\\lfloor s_j \\rfloor + 1}, \\qquad \\phi_j = s_j - \\lfloor s_j \\rfloor"
)
TABLE = {"P_0": (0.0, 1.0), "P_1": (2.0, 0.0), "P_2": (4.0, 3.0)}


@pytest.fixture(params=LANGS)
def page(request):
    return pages(LESSON)[request.param]


def test_numeric_formulas(page):
    # page_numbers reads one thin-space group (47\\,117); join longer ones (38\\,597\\,376) first.
    joined = [re.sub(r"(?<=\d)\\,(?=\d{3})", "", m) for m in page.math]
    assert check_all_statements(joined, NOT_NUMERIC) >= 9


def test_parameter_counts_and_initialisation(page):
    text = page.section("learned-table")
    assert "1024 \\cdot 768 = 786\\,432" in normalise_math(text)
    table = LearnedPositionalEmbedding(1024, 768)
    assert table.weight.numel() == sum(p.numel() for p in table.parameters()) == 786432
    assert inspect.signature(LearnedPositionalEmbedding).parameters["init_std"].default == 0.02
    big = LearnedPositionalEmbedding(4096, 64)
    assert abs(big.weight.std().item() - 0.02) < 1e-3
    # OpenAI's GPT-2: positions at 0.01, tokens at 0.02; the course: 0.02 for both, as HF.
    learned_table = " ".join(text.split())
    assert "$0.01$, and the token table with $0.02$" in learned_table or (
        "$0.01$, y la tabla de tokens con $0.02$" in learned_table
    )
    from minimodel.model import GPT, GPTConfig

    torch.manual_seed(0)
    gpt = GPT(GPTConfig(vocab_size=512, block_size=256, n_embd=64, n_layer=1, positional="learned"))
    assert abs(gpt.wte.weight.std().item() - 0.02) < 1e-3
    assert abs(gpt.hooks.input.weight.std().item() - 0.02) < 1e-3


def test_sinusoidal_dot_products_not_rows_depend_on_the_distance(page):
    from minimodel.positional.sinusoidal import sinusoidal_pe

    text = " ".join(page.section("free-table").split())
    assert "dot products between rows" in text or "producto escalar de dos filas" in text
    pe = torch.from_numpy(sinusoidal_pe(64, 16)).double()
    gram = pe @ pe.T
    for shift in (1, 7, 30):
        assert torch.allclose(gram[shift:, shift:], gram[:-shift, :-shift], atol=1e-6)
        assert not torch.allclose(pe[shift:], pe[:-shift]), "the rows themselves move"


def test_gradient_of_a_row_is_the_sum_over_the_batch(page):
    gradient = "\\frac{\\partial \\mathcal{L}}{\\partial P_p} = \\sum_{b}"
    assert any(s.startswith(gradient) for s in page.math)
    torch.manual_seed(0)
    table = LearnedPositionalEmbedding(8, 3)
    x = torch.randn(4, 5, 3, requires_grad=True)
    out = table(x, offset=2)
    weights = torch.randn_like(out)
    (out * weights).sum().backward()
    expected = torch.zeros(8, 3)
    expected[2:7] = weights.sum(dim=0)  # dL/dx_{b,p} = weights[b, p]
    assert torch.allclose(table.weight.grad, expected)


def test_models_table(page):
    [table] = page.part("models").tables
    header, *rows = table
    assert len(header) == 6 and len(rows) == 4
    for row in rows:
        L, d, count = (int(cell_number(c)) for c in row[1:4])
        assert LearnedPositionalEmbedding(L, d).weight.numel() == count == L * d, row[0]
    lengths = {row[0].split()[0]: int(row[1]) for row in rows}
    assert lengths["RoBERTa-base"] == 512 + 2
    assert lengths["ViT-B/16,"] == (224 // 16) ** 2 + 1 == 197
    assert lengths["GPT-2"] == 1024 and lengths["BERT-base"] == 512


def _formula(table: torch.Tensor, new_len: int) -> torch.Tensor:
    """The page's formula, one row at a time, in float64."""
    L = table.shape[0]
    rows = []
    for j in range(new_len):
        s = j * (L - 1) / (new_len - 1) if new_len > 1 else 0.0
        low = int(s)
        phi = s - low
        upper = table[min(low + 1, L - 1)]
        rows.append((1 - phi) * table[low] + phi * upper)
    return torch.stack(rows)


def test_interpolation_formula_is_the_reference_and_align_corners(page):
    assert INTERPOLATION in set(page.math), "the interpolation formula moved or changed"
    torch.manual_seed(1)
    for L, new_len in ((3, 5), (3, 4), (3, 2), (32, 128), (197, 577), (10, 7)):
        table = torch.randn(L, 6, dtype=torch.float64)
        mine = interpolate_positions(table, new_len)
        assert torch.allclose(mine, _formula(table, new_len)), (L, new_len)
        torch_version = F.interpolate(table.T[None], new_len, mode="linear", align_corners=True)
        assert torch.allclose(mine, torch_version[0].T), (L, new_len)
        centres = F.interpolate(table.T[None], new_len, mode="linear", align_corners=False)[0].T
        if new_len != L:
            assert not torch.allclose(mine, centres), "the two conventions differ"


def test_distances_scale_by_the_ratio(page):
    assert "\\Delta' = \\Delta\\, \\frac{L' - 1}{L - 1}" in page.math
    L, new_len = 32, 128
    ramp = torch.arange(L, dtype=torch.float64)[:, None]  # row p holds p: reads positions back
    stretched = interpolate_positions(ramp, new_len)[:, 0]
    # the old position found 12.29 new rows back is 3 old rows back
    step = (stretched[100] - stretched[100 - 1]).item()
    assert abs(3 / step - 3 * 127 / 31) < 1e-9
    assert abs(3 * 127 / 31 - 12.3) < 0.05


def _pairs(statement: str) -> dict[str, tuple[float, ...]]:
    """``P'_1 = ... = (1, 0.5)`` -> {"P'_1": (1.0, 0.5)}; fractions like 4/3 are evaluated."""
    match = re.match(r"^(P'?_\d) = .*\(([^()]*)\)$", statement.strip())
    if not match:
        return {}
    name, body = match.groups()
    return {name: tuple(eval(v, {"__builtins__": {}}) for v in body.split(","))}  # noqa: S307


def test_worked_example(page):
    found: dict[str, tuple[float, ...]] = {}
    for statement in statements(page.part("worked-example").math):
        found.update(_pairs(statement))
    table = torch.tensor([TABLE["P_0"], TABLE["P_1"], TABLE["P_2"]], dtype=torch.float64)
    five, four = interpolate_positions(table, 5), interpolate_positions(table, 4)
    expected = {
        **{name: tuple(value) for name, value in TABLE.items()},
        "P'_1": None,  # appears twice: (1, 0.5) for L' = 5 and (4/3, 1/3) for L' = 4
        "P'_3": tuple(five[3].tolist()),
        "P'_2": tuple(four[2].tolist()),
    }
    for name in ("P_0", "P_1", "P_2", "P'_3", "P'_2"):
        assert found[name] == pytest.approx(expected[name]), name
    sevens = [s for s in statements(page.part("worked-example").math) if s.startswith("P'_1 = ")]
    assert [_pairs(s)["P'_1"] for s in sevens] == [
        pytest.approx(tuple(five[1].tolist())),
        pytest.approx(tuple(four[1].tolist())),
    ]
    assert torch.equal(interpolate_positions(table, 2), table[[0, 2]])


def test_code_blocks():
    # The code is the same in both languages (test_docs_parity): run it once.
    found = pages(LESSON)
    assert found["es"].code == found["en"].code
    assert run_code_blocks(found["en"]) == 2
