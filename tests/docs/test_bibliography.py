"""References: every author-year citation links to its entry of ``docs_site/bibliography.yml``,
every entry is complete, and in the built sites every citation lands on its entry."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from docs_pages import DOCS, LANGS, markdown_files
from lessons import lessons
from prose import prose

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = yaml.safe_load((ROOT / "docs_site" / "bibliography.yml").read_text(encoding="utf-8"))
CITATION = re.compile(r"\[([^\]]+)\]\(#ref-([a-z0-9-]+)\)")
PAGES = sorted(markdown_files("es"))


def surnames() -> set[str]:
    """First authors' surnames (or handles): the words an author-year citation starts with."""
    return {entry["authors"][0].split()[-1] for entry in ENTRIES.values()}


def unlinked_citations(text: str) -> list[str]:
    """Author-year citations outside a ``[...](#ref-...)`` link."""
    names = "|".join(sorted(map(re.escape, surnames())))
    pattern = re.compile(rf"\b({names})\b[^;()\[\]]{{0,25}}?,?\s\(?(19|20)\d\d\b")
    bare = " ".join(prose(CITATION.sub(" ", text)).split())
    return [match.group(0) for match in pattern.finditer(bare)]


def test_every_entry_is_complete():
    for key, entry in ENTRIES.items():
        assert re.fullmatch(r"[a-z0-9]+-(19|20)\d\d", key), key
        assert key.endswith(str(entry["year"])), key
        assert entry["authors"] and entry["title"] and entry["venue"], key
        assert {"arxiv", "doi", "url"} & set(entry), f"{key}: no arXiv id, DOI or address"
        if "arxiv" in entry:
            assert re.fullmatch(r"\d{4}\.\d{4,5}", entry["arxiv"]), key


def test_the_detector_sees_a_bare_citation():
    assert unlinked_citations("como mostraron (Press et al., 2022) y Su et al. (2021)") == [
        "Press et al., 2022",
        "Su et al. (2021",
    ]
    assert unlinked_citations("([Press et al., 2022](#ref-press-2022))") == []


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES)
def test_citations_link_to_existing_entries(lang, page):
    text = (DOCS[lang] / page).read_text(encoding="utf-8")
    for shown, key in CITATION.findall(text):
        assert key in ENTRIES, f"{page}: [{shown}] cites #ref-{key}, not in bibliography.yml"
        surname = ENTRIES[key]["authors"][0].split()[-1]
        assert surname in shown and str(ENTRIES[key]["year"]) in shown, (page, shown, key)
    assert unlinked_citations(text) == [], f"{page}: citations without a link"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", lessons("es"))
def test_every_lesson_has_a_bibliography(lang, page):
    text = (DOCS[lang] / page).read_text(encoding="utf-8")
    assert CITATION.search(text), f"{page} cites nothing"
    assert text.count("<!-- bibliography -->") == 1


def test_every_entry_is_cited_and_the_languages_cite_the_same():
    cited = {}
    for lang in LANGS:
        cited[lang] = {
            (page, key)
            for page in PAGES
            for _, key in CITATION.findall((DOCS[lang] / page).read_text(encoding="utf-8"))
        }
    assert cited["es"] == cited["en"]
    assert {key for _, key in cited["es"]} == set(ENTRIES)


@pytest.mark.parametrize("lang", LANGS)
def test_built_citations_land_on_their_entries(built_site, lang):
    for page in lessons(lang):
        html = (built_site["site"] / lang / page.replace(".md", ".html")).read_text("utf-8")
        targets = set(re.findall(r'href="#(ref-[a-z0-9-]+)"', html))
        entries = re.findall(r'<li id="(ref-[a-z0-9-]+)">', html)
        assert targets, f"{page}: no citation links"
        assert targets == set(entries), f"{page}: citations {targets} vs entries {entries}"
        for key in entries:
            entry = ENTRIES[key.removeprefix("ref-")]
            assert entry["title"].replace("&", "&amp;") in html, key
