"""The lessons in reading order, as each site's navigation lists them (``mkdocs.<lang>.yml``)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import yaml
from docs_pages import DOCS

ROOT = Path(__file__).resolve().parents[2]
_LESSON = re.compile(r"^\d\d/\d\d-[a-z0-9-]+\.md$")


def _pages(nav: list) -> list[str]:
    found = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        found += _pages(value) if isinstance(value, list) else [value]
    return found


@cache
def lessons(lang: str = "es") -> list[str]:
    """Relative paths of the lesson pages, in the order of the site's navigation."""
    config = (ROOT / "docs_site" / f"mkdocs.{lang}.yml").read_text(encoding="utf-8")
    nav = yaml.safe_load(config)["nav"]
    return [page for page in _pages(nav) if _LESSON.match(page)]


def title(lang: str, page: str) -> str:
    """The level-1 heading of a page, without its ``{#anchor}``."""
    first = (DOCS[lang] / page).read_text(encoding="utf-8").splitlines()[0]
    return re.sub(r"\s*\{#[^}]+\}\s*$", "", first.removeprefix("# ")).strip()
