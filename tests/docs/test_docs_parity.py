"""The Spanish and English sites say the same thing: same pages, structure, math, code and links.

Prose is free to differ (each language is written natively); everything a reader would compare
across languages is not.
"""

from __future__ import annotations

import pytest
from docs_pages import LANGS, markdown_files, normalise_math, numbers, pages

from minimodel.course import LABS


def test_same_pages_in_both_languages():
    es, en = (markdown_files(lang) for lang in LANGS)
    assert es, "docs_es/ has no pages"
    assert es - en == set(), f"only in docs_es/: {sorted(es - en)}"
    assert en - es == set(), f"only in docs_en/: {sorted(en - es)}"


def test_normalise_math_ignores_whitespace_only():
    assert normalise_math("a  +\n  b") == normalise_math("a + b")
    assert normalise_math("a+b") != normalise_math("a + b")


PAGES = sorted(markdown_files("es") & markdown_files("en"))


@pytest.fixture(params=PAGES)
def pair(request):
    found = pages(request.param)
    return found["es"], found["en"]


def test_same_heading_levels_and_anchors(pair):
    es, en = pair
    levels = [(level, anchor) for level, anchor, _ in es.headings]
    assert levels == [(level, anchor) for level, anchor, _ in en.headings]
    assert all(anchor for _, anchor in levels), "every heading needs an explicit {#id} anchor"
    anchors = [anchor for _, anchor in levels]
    assert len(anchors) == len(set(anchors)), "anchors must be unique within a page"
    assert [level for level, _ in levels][:1] == [1], "a page starts with one level-1 heading"
    assert [level for level, _ in levels].count(1) == 1


def test_identical_math(pair):
    es, en = pair
    for index, (a, b) in enumerate(zip(es.math, en.math, strict=False)):
        assert a == b, f"formula #{index} differs:\n  es: {a}\n  en: {b}"
    assert len(es.math) == len(en.math), "different number of formulas"


def test_identical_code_blocks(pair):
    es, en = pair
    assert es.code == en.code


def test_same_links_images_and_admonitions(pair):
    es, en = pair
    assert es.links == en.links, "links must point to the same targets, in the same order"
    assert es.images == en.images
    assert es.admonitions == en.admonitions


def test_same_tables_and_numbers_in_them(pair):
    es, en = pair
    assert [len(t) for t in es.tables] == [len(t) for t in en.tables], "table sizes"
    for table_es, table_en in zip(es.tables, en.tables, strict=True):
        for row_es, row_en in zip(table_es, table_en, strict=True):
            assert len(row_es) == len(row_en)
            assert numbers(" ".join(row_es)) == numbers(" ".join(row_en)), (row_es, row_en)


@pytest.mark.parametrize("lang", LANGS)
def test_home_page_lists_every_lesson_and_its_lab(lang):
    home = pages("index.md")[lang].text
    for lab in LABS:
        title = lab.title_es if lang == "es" else lab.title_en
        assert f"[{lab.id} · {title}]({lab.page})" in home, f"index.md does not list {lab.id}"
        assert f"`labs/{lab.slug}.ipynb`" in home, f"index.md does not name the lab of {lab.id}"
        assert all(f"`{module}.py`" in home for module in lab.modules), lab.id


@pytest.mark.parametrize("page", PAGES)
def test_no_published_lesson_is_announced_as_in_preparation(page):
    for lang, found in pages(page).items():
        phrase = "en preparación" if lang == "es" else "in preparation"
        assert phrase not in found.text, f"docs_{lang}/{page}: every lesson is published"
