"""MkDocs hook: each lesson's bibliography, from ``docs_site/bibliography.yml``.

A page cites an entry with a link to ``#ref-<key>``. Where the page has the marker
``<!-- bibliography -->``, the hook lists the entries the page cites, sorted by first author and
year, each with its anchor, so every citation link lands on its entry. A citation of a key that
``bibliography.yml`` lacks stops the build with a message in both languages.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import yaml
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

SOURCE = Path(__file__).resolve().parents[1] / "bibliography.yml"
MARKER = "<!-- bibliography -->"
CITATION = re.compile(r"\]\(#ref-([a-z0-9-]+)\)")


def load() -> dict[str, dict]:
    """Every entry of ``bibliography.yml``, by key."""
    return yaml.safe_load(SOURCE.read_text(encoding="utf-8"))


def cited(markdown_text: str) -> list[str]:
    """Keys cited by a page, in the order of their first citation."""
    return list(dict.fromkeys(CITATION.findall(markdown_text)))


def link(entry: dict) -> tuple[str, str]:
    """``(href, label)`` of an entry: its arXiv page, its DOI, or its address."""
    if "arxiv" in entry:
        return f"https://arxiv.org/abs/{entry['arxiv']}", f"arXiv:{entry['arxiv']}"
    if "doi" in entry:
        return f"https://doi.org/{entry['doi']}", f"doi:{entry['doi']}"
    return entry["url"], entry["url"].split("//")[1].split("/")[0]


QUOTES = {"es": ("«", "»"), "en": ("\u201c", "\u201d")}


def render_entry(key: str, entry: dict, lang: str) -> str:
    """One ``<li>``: authors, title (quoted as ``lang`` quotes), venue and year, link."""
    href, label = link(entry)
    authors = ", ".join(entry["authors"])
    opening, closing = QUOTES[lang]
    title = f"{opening}{html.escape(entry['title'])}{closing}"
    return (
        f'<li id="ref-{key}">{html.escape(authors)}. {title}. '
        f"<em>{html.escape(entry['venue'])}</em>, {entry['year']}. "
        f'<a href="{html.escape(href)}">{html.escape(label)}</a></li>'
    )


def render(keys: list[str], entries: dict[str, dict], lang: str) -> str:
    """The bibliography of a page that cites ``keys``."""
    ordered = sorted(keys, key=lambda k: (entries[k]["authors"][0].split()[-1].lower(), k))
    items = "\n".join(render_entry(key, entries[key], lang) for key in ordered)
    return f'<ol class="bibliography">\n{items}\n</ol>'


def on_page_markdown(markdown_text: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Replace the marker with the entries the page cites; fail on an unknown key."""
    keys = cited(markdown_text)
    if not keys:
        return markdown_text.replace(MARKER, "")
    entries = load()
    unknown = [key for key in keys if key not in entries]
    if unknown:
        raise PluginError(
            f"[es] {page.file.src_uri} cita entradas que no están en bibliography.yml: {unknown}\n"
            f"[en] {page.file.src_uri} cites entries missing from bibliography.yml: {unknown}"
        )
    if MARKER not in markdown_text:
        raise PluginError(
            f"[es] {page.file.src_uri} cita trabajos pero no tiene {MARKER}\n"
            f"[en] {page.file.src_uri} cites works but has no {MARKER}"
        )
    return markdown_text.replace(MARKER, render(keys, entries, config.theme["language"]))


def on_serve(server, config: MkDocsConfig, builder):
    """Rebuild when the bibliography changes while serving."""
    server.watch(str(SOURCE))
    return server
