"""MkDocs hook: put the lessons' figures into the pages, in the language of the site being built.

A page marks where a figure goes with one line, the same in both languages::

    <div class="course-figure" data-figure="17-01-table"></div>

The figures come from ``docs_site/figures/`` (drawn once per language by ``figures.render``, cached
under ``build/docs-figures/``). A static figure becomes an ``<img>`` of its SVG with its alt text
and caption; an interactive one embeds its Vega-Lite spec and data in the page, and the page loads
Vega (``vendor_assets.VEGA_SCRIPTS``) and ``assets/javascripts/figures.js``, which only draws.
An unknown id fails the build.
"""

from __future__ import annotations

import html
import json
import logging
import re
import sys
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from figures import render  # noqa: E402
from vendor_assets import VEGA_SCRIPTS  # noqa: E402

MARKER = re.compile(r'<div class="course-figure" data-figure="(?P<id>[a-z0-9-]+)"></div>')
MATH = re.compile(r"\$([^$]+)\$")  # inline math in a figure's title
FIGURES_URI = "assets/figures"
DRAW_SCRIPT = "assets/javascripts/figures.js"
LABEL = {"es": "Figura", "en": "Figure"}
HINT = {
    "es": "Figura interactiva: mueve los controles.",
    "en": "Interactive figure: move the controls.",
}

_state: dict = {}
log = logging.getLogger("mkdocs.hooks.lesson_figures")


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Find (or draw) the figures of this site's language."""
    lang = config.theme["language"]
    folder = render.rendered(lang, progress=log.info)
    _state.update(
        lang=lang,
        folder=folder,
        figures=render.figures(),
        specs=json.loads((folder / render.SPECS).read_text(encoding="utf-8")),
    )
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add every static figure's SVG to the site as ``assets/figures/<id>.svg``."""
    for figure_id, figure in _state["figures"].items():
        if figure.kind == "static":
            source = _state["folder"] / f"{figure_id}.svg"
            files.append(
                File.generated(config, f"{FIGURES_URI}/{figure_id}.svg", abs_src_path=str(source))
            )
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Fail on a figure id that does not exist (before any work is done on the page)."""
    for match in MARKER.finditer(markdown):
        if match["id"] not in _state["figures"]:
            raise PluginError(
                f"{page.file.src_uri}: no figure {match['id']!r} in docs_site/figures/ "
                f"(known: {', '.join(_state['figures'])})"
            )
    return markdown


def caption_html(title: str) -> str:
    """A figure title as caption HTML: ``$...$`` becomes math, typeset in the page by KaTeX like
    the lessons' own (``assets/javascripts/katex-init.js``); the rest is escaped text."""
    parts = [html.escape(part) for part in MATH.split(title)]  # text, math, ..., text
    for i in range(1, len(parts), 2):
        parts[i] = f'<span class="arithmatex">\\({parts[i]}\\)</span>'
    return "".join(parts)


def _caption(figure_id: str, number: str) -> str:
    figure, lang = _state["figures"][figure_id], _state["lang"]
    hint = f" <em>{HINT[lang]}</em>" if figure.kind == "interactive" else ""
    return (
        f"<figcaption><strong>{LABEL[lang]} {number}.</strong> "
        f"{caption_html(figure.title(lang))}{hint}</figcaption>"
    )


def _static_html(figure_id: str, number: str, page: Page) -> str:
    figure, lang = _state["figures"][figure_id], _state["lang"]
    src = get_relative_url(f"{FIGURES_URI}/{figure_id}.svg", page.url)
    return (
        f'<figure class="course-figure" id="fig-{figure_id}" data-figure="{figure_id}">'
        f'<img src="{src}" alt="{html.escape(figure.alt(lang))}" loading="lazy">'
        f"{_caption(figure_id, number)}</figure>"
    )


def _interactive_html(figure_id: str, number: str) -> str:
    figure, lang = _state["figures"][figure_id], _state["lang"]
    spec = json.dumps(_state["specs"][figure_id], ensure_ascii=False, separators=(",", ":"))
    spec = spec.replace("</", "<\\/")  # the JSON cannot close its <script> element
    return (
        f'<figure class="course-figure course-interactive" id="fig-{figure_id}" '
        f'data-figure="{figure_id}">'
        f'<div class="course-vega" role="img" aria-label="{html.escape(figure.alt(lang))}" '
        f'data-spec="spec-{figure_id}"></div>'
        f'<script type="application/json" id="spec-{figure_id}">{spec}</script>'
        f"{_caption(figure_id, number)}</figure>"
    )


def on_page_content(content: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Replace each marker with its figure, numbered in page order (``17.01-1``, ...); a page
    with an interactive figure gets Vega's scripts (deferred: the page is parsed first)."""
    interactive = False
    count = 0

    def expand(match: re.Match) -> str:
        nonlocal interactive, count
        figure_id = match["id"]
        count += 1
        number = f"{_state['figures'][figure_id].lesson}-{count}"
        if _state["figures"][figure_id].kind == "static":
            return _static_html(figure_id, number, page)
        interactive = True
        return _interactive_html(figure_id, number)

    content = MARKER.sub(expand, content)
    if interactive:
        scripts = (*VEGA_SCRIPTS, DRAW_SCRIPT)
        content += "".join(
            f'<script defer src="{get_relative_url(script, page.url)}"></script>'
            for script in scripts
        )
    return content
