"""Read the lesson pages as structure: headings, math, code, tables, links, admonitions.

The docs tests compare the Spanish and English pages through this one parser, so "the same
equation" and "the same code" mean the same thing in every test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

ROOT = Path(__file__).resolve().parents[2]
LANGS = ("es", "en")
DOCS = {lang: ROOT / f"docs_{lang}" for lang in LANGS}
LESSON = "17/01-sinusoidal.md"

_ANCHOR = re.compile(r"\s*\{#([A-Za-z0-9_-]+)\}\s*$")
_ADMONITION = re.compile(r"^\s*(?:!!!|\?\?\?\+?)\s+([a-z]+)", re.MULTILINE)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass
class Page:
    """One markdown page, reduced to what the two languages must share."""

    path: Path
    text: str
    headings: list[tuple[int, str | None, str]] = field(default_factory=list)  # level, id, text
    math: list[str] = field(default_factory=list)  # inline and display, in order
    code: list[tuple[str, str]] = field(default_factory=list)  # (info string, body)
    links: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    tables: list[list[list[str]]] = field(default_factory=list)  # rows of raw cell text
    admonitions: list[str] = field(default_factory=list)  # kinds, in order

    @property
    def lang(self) -> str:
        """``"es"`` or ``"en"``: the language folder the page is in."""
        [lang] = [lang for lang in LANGS if DOCS[lang] in self.path.parents]
        return lang

    def section(self, anchor: str, own: bool = False) -> str:
        """Markdown text from the heading ``{#anchor}`` up to the next heading of its level.

        With ``own``, stop at the next heading of any level (leave out the subsections).
        """
        lines = self.text.splitlines()
        start = level = None
        for number, line in enumerate(lines):
            match = re.match(r"^(#+)\s", line)
            if not match:
                continue
            if start is None and line.rstrip().endswith(f"{{#{anchor}}}"):
                start, level = number, len(match.group(1))
            elif start is not None and (own or len(match.group(1)) <= level):
                return "\n".join(lines[start:number])
        if start is None:
            raise KeyError(f"{self.path}: no heading with {{#{anchor}}}")
        return "\n".join(lines[start:])

    def paragraph(self, anchor: str, containing: str) -> str:
        """The one paragraph (or admonition) of section ``anchor`` that contains ``containing``,
        with its whitespace collapsed."""
        [found] = [" ".join(block.split()) for block in self.section(anchor).split("\n\n")
                   if containing in block]  # fmt: skip
        return found

    def part(self, anchor: str, own: bool = False) -> Page:
        """The section ``{#anchor}``, parsed by itself (see ``section``)."""
        return parse(self.section(anchor, own), self.path)


def normalise_math(tex: str) -> str:
    """Whitespace-insensitive form of a formula."""
    return re.sub(r"\s+", " ", tex).strip()


def _flatten_admonitions(text: str) -> str:
    """Unindent admonition bodies so CommonMark does not read them as indented code."""
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if _ADMONITION.match(line):
            inside = True
            out.append("")
        elif inside and (line.startswith("    ") or not line.strip()):
            out.append(line[4:])
        else:
            inside = False
            out.append(line)
    return "\n".join(out) + "\n"


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table").use(dollarmath_plugin, double_inline=True)


def _tables(tokens: list) -> list[list[list[str]]]:
    tables: list[list[list[str]]] = []
    inside = False
    for token in tokens:
        if token.type == "table_open":
            tables.append([])
            inside = True
        elif token.type == "table_close":
            inside = False
        elif inside and token.type == "tr_open":
            tables[-1].append([])
        elif inside and token.type == "inline":
            tables[-1][-1].append(token.content.strip())
    return tables


@cache
def read(path: Path) -> Page:
    """Parse one page (cached: the pages do not change during a test run)."""
    return parse(path.read_text(encoding="utf-8"), path)


def parse(text: str, path: Path = Path("<text>")) -> Page:
    """Parse markdown text (a page, or a section of one)."""
    page = Page(path=path, text=text)
    page.admonitions = _ADMONITION.findall(text)
    tokens = _parser().parse(_flatten_admonitions(text))
    page.tables = _tables(tokens)
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            inline = tokens[index + 1].content
            match = _ANCHOR.search(inline)
            title = _ANCHOR.sub("", inline).strip()
            page.headings.append((int(token.tag[1]), match.group(1) if match else None, title))
        elif token.type in ("math_block", "math_block_label"):
            page.math.append(normalise_math(token.content))
        elif token.type == "fence":
            page.code.append((token.info.strip(), token.content))
        for child in token.children or []:
            if child.type in ("math_inline", "math_inline_double"):
                page.math.append(normalise_math(child.content))
            elif child.type == "link_open":
                page.links.append(str(child.attrs.get("href", "")))
            elif child.type == "image":
                page.images.append(str(child.attrs.get("src", "")))
    return page


def pages(relative: str) -> dict[str, Page]:
    """The page at ``relative`` in each language."""
    return {lang: read(DOCS[lang] / relative) for lang in LANGS}


def markdown_files(lang: str) -> set[str]:
    """Relative paths of every markdown page of one language."""
    return {p.relative_to(DOCS[lang]).as_posix() for p in DOCS[lang].rglob("*.md")}


def numbers(text: str) -> list[float]:
    """Decimal numbers in ``text`` (``47\\,117`` counts as one number), in order."""
    return [float(n) for n in _NUMBER.findall(text.replace("\\,", "").replace("−", "-"))]


def decimals(literal: str) -> int:
    """Digits after the decimal point of a number as written."""
    return len(literal.split(".")[1]) if "." in literal else 0
