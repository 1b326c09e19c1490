"""One navigation: every lesson links to the next one, with the next page's title as link text,
and the glossary and common mistakes send readers to the lessons that teach each term."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

import pytest
import yaml
from docs_pages import DOCS, LANGS, pages
from lessons import lessons, title

from minimodel.course import LABS

ROOT = Path(__file__).resolve().parents[2]

LESSON_LINK = re.compile(r"\[([^\]]*?\d\d\.\d\d · [^\]]+)\]\(([^)#]+\.md)\)")


def lesson_links(lang: str, page: str) -> list[tuple[str, str]]:
    """``(text, target page)`` of each link to a lesson in the page's ``{#next}`` section."""
    section = pages(page)[lang].section("next")
    here = posixpath.dirname(page)
    return [
        (text, posixpath.normpath(posixpath.join(here, href)))
        for text, href in LESSON_LINK.findall(section)
    ]


def test_lessons_are_the_same_in_both_navigations():
    assert lessons("es") == lessons("en")
    assert len(lessons("es")) == 12


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("index", range(11))
def test_every_lesson_links_to_the_next_one(lang, index):
    page, following = lessons(lang)[index], lessons(lang)[index + 1]
    targets = [target for _, target in lesson_links(lang, page)]
    assert following in targets, f"{page} has no link to {following} in its next-lesson section"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", lessons("es"))
def test_link_texts_are_the_page_titles(lang, page):
    for text, target in lesson_links(lang, page):
        assert (DOCS[lang] / target).is_file(), f"{page}: {target} does not exist"
        assert text.strip("*") == title(lang, target), f"{page}: link text {text!r}"


GLOSSARY = {
    "es": {"caché KV": "18.03", "extrapolación": "18.01", "interpolación de posiciones": "18.02"},
    "en": {"KV cache": "18.03", "extrapolation": "18.01", "position interpolation": "18.02"},
}


@pytest.mark.parametrize("lang", LANGS)
def test_glossary_terms_link_to_the_lesson_that_teaches_them(lang):
    column = 1 if lang == "es" else 2
    rows = {
        row[column - 1]: row[-1] for table in pages("glossary.md")[lang].tables for row in table
    }
    for term, lesson in GLOSSARY[lang].items():
        assert rows[term].startswith(f"[{lesson}]"), f"{term}: {rows[term]}"


@pytest.mark.parametrize("lang", LANGS)
def test_glossary_and_mistakes_link_to_existing_pages(lang):
    for page in ("glossary.md", "common-mistakes.md"):
        for link in pages(page)[lang].links:
            target = link.split("#")[0]
            if target and not target.startswith("http"):
                assert (DOCS[lang] / target).is_file(), f"{page}: {link}"


@pytest.mark.parametrize("lang", LANGS)
def test_common_mistakes_has_a_long_context_section(lang):
    section = pages("common-mistakes.md")[lang].part("long-context")
    anchors = [anchor for level, anchor, _ in section.headings if level == 3]
    assert anchors == [
        "yarn-factor-twice",
        "wrong-original-length",
        "interpolation-without-fine-tuning",
        "dynamic-ntk-cache",
    ]
    assert all(link.startswith("18/") for link in section.links), section.links


@pytest.mark.parametrize("lang", LANGS)
def test_titles_agree_in_the_page_the_navigation_and_the_lab_list(lang):
    """The sidebar, the home page and each lesson's heading call a lesson by one title."""
    config = yaml.safe_load((ROOT / "docs_site" / f"mkdocs.{lang}.yml").read_text("utf-8"))
    labels = dict(nav_entries(config["nav"]))
    for lab in LABS:
        heading = title(lang, lab.page)
        assert heading == f"{lab.id} · {lab.title_es if lang == 'es' else lab.title_en}", lab.id
        assert labels[lab.page] == heading, f"the navigation calls {lab.page} {labels[lab.page]!r}"


def nav_entries(nav: list) -> list[tuple[str, str]]:
    """``(page, label)`` of every page in a navigation tree."""
    found = []
    for item in nav:
        for label, value in item.items():
            found += nav_entries(value) if isinstance(value, list) else [(value, label)]
    return found
