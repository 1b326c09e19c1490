"""The reference pages (glossary, common mistakes, good practices): structure and every claim.

Each mistake has a symptom, a cause and a fix, and the symptoms that can be reproduced are
reproduced here with the reference implementation and PyTorch; the glossary pairs the same terms
in both languages and points to lessons that exist; the numbers are checked.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from docs_pages import DOCS, LANGS, pages
from page_numbers import check_all_statements

from minimodel.positional.alibi import alibi_slopes
from minimodel.positional.relative_bias import RelativePositionBias
from minimodel.positional.sinusoidal import sinusoidal_pe

LABELS = {
    "es": ("**Síntoma.**", "**Causa.**", "**Solución.**"),
    "en": ("**Symptom.**", "**Cause.**", "**Fix.**"),
}


@pytest.mark.parametrize("lang", LANGS)
def test_every_mistake_has_symptom_cause_fix_and_a_pointer(lang):
    page = pages("common-mistakes.md")[lang]
    mistakes = [anchor for level, anchor, _ in page.headings if level == 3]
    assert len(mistakes) >= 20
    for anchor in mistakes:
        text = page.section(anchor)
        positions = [text.find(label) for label in LABELS[lang]]
        assert all(p >= 0 for p in positions), f"{anchor}: symptom, cause and fix"
        assert positions == sorted(positions), f"{anchor}: in that order"
        fix = text[positions[2] :]
        assert re.search(r"\]\((17|18)/\d\d-[a-z0-9-]+\.md\)", fix) or "18" in fix, anchor


@pytest.mark.parametrize("lang", LANGS)
def test_numbers_of_the_reference_pages(lang):
    for name in ("common-mistakes.md", "good-practices.md", "glossary.md"):
        check_all_statements(pages(name)[lang].math, set())
    mistakes = pages("common-mistakes.md")[lang]
    assert "2^{-2/3} \\approx 0.63" in mistakes.math
    assert abs(2 ** (-8 / 12) - 0.63) < 0.005 and alibi_slopes(12)[0].item() == 0.5
    # bfloat16 cannot tell 256 from 257.
    assert "256" in mistakes.math and "257" in mistakes.math
    assert torch.tensor(257.0, dtype=torch.bfloat16) == torch.tensor(256.0, dtype=torch.bfloat16)
    # float32 spacing near a few thousand is about 1e-4 rad.
    assert 1e-4 < np.spacing(np.float32(3000.0)) < 5e-4
    # ViT-B/16: 197 rows at 224 pixels, 577 at 384, width 768.
    assert (224 // 16) ** 2 + 1 == 197 and (384 // 16) ** 2 + 1 == 577
    for number in ("197 \\times 768", "577 \\times 768", "224", "384", "16"):
        assert number in mistakes.math


WHICH_COLUMNS = {
    "es": ("con $d = 4$, en las columnas $1$ y $2$ (contando desde $0$); las únicas que coinciden "
           "siempre son la primera y la última"),
    "en": ("with $d = 4$, in columns $1$ and $2$ (counting from $0$); the only ones that always "
           "agree are the first and the last"),
}  # fmt: skip


@pytest.mark.parametrize("lang", LANGS)
def test_the_other_layout_differs_where_the_page_says(lang):
    # [sin, cos, sin, cos, ...] against [sin ... | cos ...] with the same frequencies: only the
    # first column (sin of pair 0) and the last (cos of the last pair) always agree. (At small
    # positions the cosines of the slowest pairs are close to 1 in both layouts.)
    for d in (4, 8, 64):
        table = sinusoidal_pe(100, d).astype(np.float64)
        concatenated = np.concatenate([table[:, 0::2], table[:, 1::2]], axis=1)
        agree = np.isclose(table, concatenated, rtol=1e-5, atol=1e-6)
        assert np.flatnonzero(agree.all(axis=0)).tolist() == [0, d - 1], d
        if d == 4:
            assert np.flatnonzero(~agree[1]).tolist() == [1, 2], "PE(1) with d = 4"
    text = " ".join(pages("common-mistakes.md")[lang].section("layout").split())
    assert WHICH_COLUMNS[lang] in text


def test_reproduced_symptoms():
    # A learned table past its end: IndexError "index out of range in self".
    table = torch.nn.Embedding(8, 4)
    with pytest.raises(IndexError, match="index out of range in self"):
        table(torch.arange(9))
    # Bidirectional buckets not halved: indices up to twice the table.
    bias = RelativePositionBias(2, bidirectional=True)
    with pytest.raises(IndexError, match="index out of range in self"):
        bias.bias(torch.tensor([32 + 31]))
    q, k, v = torch.randn(1, 1, 1, 8), torch.randn(1, 1, 5, 8), torch.randn(1, 1, 5, 8)
    # is_causal with attn_mask: a RuntimeError, or (other shapes, backends) both masks combined.
    three_d = torch.zeros(2, 4, 4)
    square = torch.randn(1, 2, 4, 8)
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(square, square, square, attn_mask=three_d, is_causal=True)
    bias = torch.randn(4, 4)
    try:
        both = F.scaled_dot_product_attention(
            square, square, square, attn_mask=bias, is_causal=True
        )
    except RuntimeError:
        pass
    else:
        alone = F.scaled_dot_product_attention(square, square, square, attn_mask=bias)
        assert not torch.allclose(both, alone), "a second, causal mask was added silently"
    # is_causal with one query and five cached keys: top-left, the query sees only key 0.
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert torch.allclose(out[0, 0, 0], v[0, 0, 0], atol=1e-6)
    # A row where every key is masked: nan by hand; nan or zeros with SDPA, depending on version.
    masked = torch.full((1, 5), float("-inf"))
    by_hand = (q @ k.transpose(-2, -1) / 8**0.5 + masked).softmax(-1) @ v
    assert torch.isnan(by_hand).all()
    sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=masked)
    assert torch.isnan(sdpa).all() or torch.equal(sdpa, torch.zeros_like(sdpa))
    # The sum of row and column encodings is symmetric; the concatenation is not.
    pe = sinusoidal_pe(4, 8).astype(np.float64)
    assert np.allclose(pe[1] + pe[2], pe[2] + pe[1])


def test_good_practices_laws():
    for d in (8, 64):
        table = sinusoidal_pe(50, d).astype(np.float64)
        assert np.allclose(np.linalg.norm(table, axis=1), math.sqrt(d / 2), atol=1e-5)
    for lang in LANGS:
        assert "\\sqrt{d/2}" in pages("good-practices.md")[lang].math


def test_glossary_pairs_are_the_same_in_both_languages():
    found = pages("glossary.md")
    es_tables, en_tables = found["es"].tables, found["en"].tables
    assert len(es_tables) == len(en_tables) >= 5
    seen: set[str] = set()
    for es_table, en_table in zip(es_tables, en_tables, strict=True):
        for es_row, en_row in zip(es_table[1:], en_table[1:], strict=True):
            assert len(es_row) == len(en_row) == 4
            assert es_row[:2] == en_row[:2], "the same Spanish and English terms"
            assert es_row[3] == en_row[3], "the same lesson"
            assert es_row[0] not in seen, f"{es_row[0]} appears twice"
            seen.add(es_row[0])
    for lang in LANGS:
        for link in found[lang].links:
            assert (DOCS[lang] / link).is_file(), f"{lang}: {link} does not exist"
