"""Every number and checkable equation of lesson 17.00 (why position), checked numerically.

The test reads the pages, so editing a formula or a number on a page breaks it:

- the identities of the page (equivariance, pooled invariance, positions, the causal mask, the
  ``1/(i+1)`` count, relative logits) must still be written there, and each one is checked on
  random inputs with a reference attention;
- the softmax weights and the table of the worked example are recomputed from the three tokens;
- the code block is run and its output compared with the page.
"""

from __future__ import annotations

import math
import re

import pytest
import torch
from docs_pages import LANGS, decimals, normalise_math, pages
from page_numbers import check_all_statements, run_code_blocks, statements

from minimodel.positional.equivariance import permutation_equivariance_gap

LESSON = "17/00-why-position.md"
# Tuples of rounded weights: checked by test_worked_weights.
NOT_NUMERIC = {
    "(e, 1, e)/(2e + 1) \\approx (0.4223, 0.1554, 0.4223)",
    "(1, 1, e)/(2 + e) \\approx (0.2119, 0.2119, 0.5761)",
    "(1, e)/(1 + e) \\approx (0.2689, 0.7311)",
}
IDENTITIES = {
    "\\mathrm{Attn}(PX) = P\\, \\mathrm{Attn}(X)",
    "\\frac{1}{T}\\,\\mathbf{1}^\\top \\mathrm{Attn}(PX) = \\frac{1}{T}\\,\\mathbf{1}^\\top "
    "\\mathrm{Attn}(X)",
    "\\mathrm{softmax}(P S P^\\top) = P\\, \\mathrm{softmax}(S)\\, P^\\top",
    "Q' K'^\\top = P\\, Q K^\\top P^\\top",
    "PX + E = P(X + P^\\top E)",
    "\\mathrm{Attn}(PX + E) = P\\, \\mathrm{Attn}(X + P^\\top E)",
    "\\mathrm{Attn}_M(PX) = \\mathrm{softmax}\\!\\left(P S P^\\top + M\\right) P V = P\\, "
    "\\mathrm{softmax}\\!\\left(S + P^\\top M P\\right) V",
    "\\mathrm{Attn}_M(X)_i = \\frac{1}{i + 1}",
    "s_{ij} = \\frac{q_i \\cdot k_j}{\\sqrt{d_k}} + b(j - i)",
    "S = X X^\\top = \\begin{pmatrix} 1 & 0 & 1 \\\\ 0 & 1 & 1 \\\\ 1 & 1 & 2 \\end{pmatrix}",
}


@pytest.fixture(params=LANGS)
def page(request):
    return pages(LESSON)[request.param]


def attention(x, w_q, w_k, w_v, mask=None, scale=True):
    """One head, written from the page's formula. x (B, T, d)."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    logits = q @ k.transpose(-2, -1)
    if scale:
        logits = logits / q.shape[-1] ** 0.5
    if mask is not None:
        logits = logits + mask
    return logits.softmax(dim=-1) @ v


def causal(T: int) -> torch.Tensor:
    """M_ij = 0 for j <= i, -inf for j > i."""
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return torch.zeros(T, T, dtype=torch.float64).masked_fill(future, -math.inf)


def test_numeric_formulas(page):
    # The page's formulas are identities, not numbers: only the few numeric ones are checked here.
    check_all_statements(page.math, NOT_NUMERIC)


def test_identities_are_on_the_page_and_hold(page):
    found = set(statements(page.math)) | set(page.math)
    missing = {normalise_math(i) for i in IDENTITIES} - found
    assert not missing, f"formulas checked below are no longer on the page: {missing}"

    torch.manual_seed(0)
    B, T, d = 3, 7, 6
    x = torch.randn(B, T, d, dtype=torch.float64)
    w_q, w_k, w_v = (torch.randn(d, d, dtype=torch.float64) for _ in range(3))
    perm = torch.randperm(T)
    P = torch.eye(T, dtype=torch.float64)[perm]  # row i of P X is row perm[i] of X
    assert torch.equal(P @ x[0], x[0, perm])
    assert torch.allclose(P.T @ P, torch.eye(T, dtype=torch.float64))

    def attn(z, mask=None):
        return attention(z, w_q, w_k, w_v, mask)

    # Attn(PX) = P Attn(X), and the pooled output is invariant; not invariant row by row.
    assert torch.allclose(attn(P @ x), P @ attn(x))
    assert torch.allclose(attn(P @ x).mean(dim=1), attn(x).mean(dim=1))
    assert not torch.allclose(attn(P @ x), attn(x))
    # softmax(P S P^T) = P softmax(S) P^T, and Q'K'^T = P Q K^T P^T.
    S = torch.randn(T, T, dtype=torch.float64)
    assert torch.allclose((P @ S @ P.T).softmax(-1), P @ S.softmax(-1) @ P.T)
    q, k = x[0] @ w_q, x[0] @ w_k
    assert torch.allclose((P @ q) @ (P @ k).T, P @ q @ k.T @ P.T)
    # Positions: PX + E = P(X + P^T E), Attn(PX + E) = P Attn(X + P^T E) != P Attn(X + E).
    E = torch.randn(T, d, dtype=torch.float64)
    assert torch.allclose(P @ x + E, P @ (x + P.T @ E))
    assert torch.allclose(attn(P @ x + E), P @ attn(x + P.T @ E))
    assert not torch.allclose(attn(P @ x + E), P @ attn(x + E))
    # The causal mask: Attn_M(PX) = P softmax(S + P^T M P) V, and P^T M P != M.
    M = causal(T)
    S = (x @ w_q) @ (x @ w_k).transpose(-2, -1) / d**0.5
    inverse = torch.argsort(perm)
    mask_moved = M[inverse][:, inverse]  # P^T M P, without multiplying -inf by 0
    finite = M.clamp(min=-1e9)
    assert torch.allclose(P.T @ finite @ P, finite[inverse][:, inverse])
    expected = P @ (S + mask_moved).softmax(-1) @ (x @ w_v)
    assert torch.allclose(attn(P @ x, M), expected)
    assert not torch.equal(mask_moved, M)
    # ... and the last row only sees a multiset: permuting the prefix leaves it unchanged.
    prefix = torch.cat([torch.randperm(T - 1), torch.tensor([T - 1])])
    assert torch.allclose(attn(x[:, prefix], M)[:, -1], attn(x, M)[:, -1])


def test_identity_permutations_keep_the_mask():
    # P^T M P = M only for the identity: try every permutation of 4 tokens.
    import itertools

    M = (torch.ones(4, 4).triu(1) > 0).double()
    keep = [p for p in itertools.permutations(range(4)) if torch.equal(M[list(p)][:, list(p)], M)]
    assert keep == [(0, 1, 2, 3)]


def test_the_mask_alone_counts_positions(page):
    T = 9
    marker = torch.zeros(1, T, 1, dtype=torch.float64)
    marker[0, 0, 0] = 1.0
    zero, one = torch.zeros(1, 1, dtype=torch.float64), torch.ones(1, 1, dtype=torch.float64)
    counted = attention(marker, zero, zero, one, causal(T))[0, :, 0]
    assert torch.allclose(counted, 1 / torch.arange(1, T + 1, dtype=torch.float64))
    flat = attention(marker, zero, zero, one)[0, :, 0]
    assert torch.allclose(flat, torch.full((T,), 1 / T, dtype=torch.float64))


def test_relative_logits_do_not_change_under_a_shift():
    # s_ij = q_i.k_j / sqrt(d) + b(j - i) with a bias of the distance: shift-invariant;
    # with a table added to the input: not.
    torch.manual_seed(1)
    T, d = 6, 4
    x = torch.randn(T, d, dtype=torch.float64)
    w_q, w_k = torch.randn(d, d, dtype=torch.float64), torch.randn(d, d, dtype=torch.float64)
    table = torch.randn(40, d, dtype=torch.float64)

    def relative(c):
        pos = torch.arange(T) + c
        return (x @ w_q) @ (x @ w_k).T / d**0.5 - 0.3 * (pos[None] - pos[:, None]).abs()

    def absolute(c):
        z = x + table[torch.arange(T) + c]
        return (z @ w_q) @ (z @ w_k).T / d**0.5

    assert torch.allclose(relative(0), relative(11))
    assert not torch.allclose(absolute(0), absolute(11))


def test_worked_weights(page):
    e = math.e
    exact = {  # the three weight vectors of the worked example, exactly
        "(e, 1, e)/(2e + 1) \\approx (0.4223, 0.1554, 0.4223)": [
            e / (2 * e + 1),
            1 / (2 * e + 1),
            e / (2 * e + 1),
        ],
        "(1, 1, e)/(2 + e) \\approx (0.2119, 0.2119, 0.5761)": [
            1 / (2 + e),
            1 / (2 + e),
            e / (2 + e),
        ],
        "(1, e)/(1 + e) \\approx (0.2689, 0.7311)": [1 / (1 + e), e / (1 + e)],
    }
    assert set(exact) == NOT_NUMERIC
    assert set(exact) <= set(statements(page.math)), "the three weight vectors are on the page"
    for statement, truth in exact.items():
        values = [float(v) for v in re.findall(r"\d\.\d{4}", statement)]
        assert len(values) == len(truth), statement
        assert all(abs(a - b) <= 5e-5 for a, b in zip(values, truth, strict=True)), statement
    X = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
    weights = (X @ X.T).softmax(-1)
    rows = list(exact.values())
    assert torch.allclose(weights[0], torch.tensor(rows[0], dtype=torch.float64))
    assert torch.allclose(weights[2], torch.tensor(rows[1], dtype=torch.float64))
    masked = (X[:2] @ X[:2].T + causal(2)).softmax(-1)[1]
    assert torch.allclose(masked, torch.tensor([1 / (1 + e), e / (1 + e)], dtype=torch.float64))


def test_worked_example_table(page):
    [table] = page.part("worked-example").tables
    header, *rows = table
    assert len(rows) == 4 and len(header) == 5
    vectors = {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0]}
    eye = torch.eye(2, dtype=torch.float64)
    for row in rows:
        order = re.findall(r"[abc]", row[0])
        X = torch.tensor([vectors[name] for name in order], dtype=torch.float64)
        masked = not any(word in row[1] for word in ("none", "ninguna"))
        out = attention(X[None], eye, eye, eye, causal(3) if masked else None, scale=False)[0]
        for name, cell in zip("abc", row[2:], strict=True):
            stated = [float(v) for v in re.findall(r"-?\d+\.\d+", cell)]
            assert all(decimals(v) == 4 for v in re.findall(r"\d+\.\d+", cell)), cell
            truth = out[order.index(name)].tolist()
            assert all(abs(s - t) <= 5e-5 for s, t in zip(stated, truth, strict=True)), (
                f"{row[0]} {row[1]}: output of {name} is {truth}, the page says {cell}"
            )


def test_the_reference_gap_on_the_pages_layers():
    torch.manual_seed(0)
    attention_layer = torch.nn.MultiheadAttention(8, num_heads=2, batch_first=True)
    x, perm = torch.randn(2, 5, 8), torch.randperm(5)

    def plain(z):
        return attention_layer(z, z, z, need_weights=False)[0]

    assert permutation_equivariance_gap(plain, x, perm) < 1e-5
    ramp = torch.arange(5.0)[:, None]
    assert permutation_equivariance_gap(lambda z: z + ramp, x, perm) == pytest.approx(
        (torch.arange(5) - perm).abs().max().item()
    )


def test_the_last_token_is_order_blind_in_one_layer_only(page):
    # With real layers (the Mini-GPT without an encoding): permuting the prefix leaves the last
    # token's output unchanged with one layer, and changes it with two.
    from minimodel.model import GPT, GPTConfig

    text = " ".join(page.section("causal-mask").split())
    one, two = (
        ("single layer", "second layer")
        if page.path.parts[-3] == "docs_en"
        else ("una sola capa", "segunda capa")
    )
    assert one in text and two in text, "the page says the symmetry holds for one layer only"
    torch.manual_seed(0)
    T = 9
    idx = torch.randint(0, 32, (4, T))
    prefix = torch.cat([torch.randperm(T - 1), torch.tensor([T - 1])])
    gaps = {}
    for layers in (1, 2):
        torch.manual_seed(1)
        config = GPTConfig(
            vocab_size=32, block_size=T, n_layer=layers, n_head=2, n_embd=16, positional="none"
        )
        model = GPT(config).eval()
        with torch.no_grad():
            for weight in model.parameters():  # away from the near-uniform attention at init
                weight.mul_(10)
            last = model(idx)[0][:, -1]
            permuted = model(idx[:, prefix])[0][:, -1]
        gaps[layers] = (last - permuted).abs().max().item()
    assert gaps[1] < 1e-4, gaps  # float32 rounding of logits of size ~30
    assert gaps[2] > 1.0, gaps


def test_code_blocks():
    # The code is the same in both languages (test_docs_parity): run it once.
    found = pages(LESSON)
    assert found["es"].code == found["en"].code
    assert run_code_blocks(found["en"]) == 1
