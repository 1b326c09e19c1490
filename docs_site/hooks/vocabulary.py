"""MkDocs hook: the table of rejected variants on the glossary page, from ``vocabulary.yml``.

The glossary is the source of the course's terms; ``docs_site/vocabulary.yml`` adds, for each
language, the forms the pages do not use. Where the glossary has the marker ``<!-- vocabulary -->``,
the hook writes them as a table in the page's language; ``tests/docs/test_vocabulary.py`` checks
every page against the same file.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

SOURCE = Path(__file__).resolve().parents[1] / "vocabulary.yml"
MARKER = "<!-- vocabulary -->"
HEADER = {"es": "| Escribimos | No escribimos |", "en": "| We write | We do not write |"}


def load() -> dict[str, list[dict]]:
    """The rejected variants of each language: ``{"es": [...], "en": [...]}``."""
    return yaml.safe_load(SOURCE.read_text(encoding="utf-8"))


def render(rules: list[dict], lang: str) -> str:
    """A markdown table of what the pages write and what they do not."""
    rows = [HEADER[lang], "|---|---|"]
    rows += [f"| {rule['use']} | {rule['avoid']} |" for rule in rules]
    return "\n".join(rows)


def on_page_markdown(markdown_text: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Replace the marker with the table of the page's language."""
    if MARKER not in markdown_text:
        return markdown_text
    lang = config.theme["language"]
    return markdown_text.replace(MARKER, render(load()[lang], lang))


def on_serve(server, config: MkDocsConfig, builder):
    """Rebuild when the vocabulary changes while serving."""
    server.watch(str(SOURCE))
    return server
