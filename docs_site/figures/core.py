"""What a lesson figure is, defined once for both languages, and the registry of all of them.

A lesson module (``lesson_17_01.py``, ...) defines its figures with two decorators:

- ``@static(id, title=..., alt=...)`` on ``draw(fig, t)``: draws into a Matplotlib figure;
  ``t(es, en)`` picks the text of the language being drawn. The build saves one SVG per language.
- ``@interactive(id, title=..., alt=...)`` on ``spec(t)``: returns a Vega-Lite spec whose data
  (computed here, by the reference code) covers every setting its controls (``params`` bound to
  inputs) offer; the page only draws it.

Pages refer to a figure by its id: ``<div class="course-figure" data-figure="17-01-table"></div>``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

# The figures' numbers come from the reference implementation, never from a student's stubs.
os.environ["MINIMODEL_IMPL"] = "reference"

LANGS = ("es", "en")
Text = Callable[[str, str], str]  # t(es, en) -> the text in the language being drawn


@dataclass(frozen=True)
class Bilingual:
    """A piece of text in both languages."""

    es: str
    en: str

    def __call__(self, lang: str) -> str:
        return {"es": self.es, "en": self.en}[lang]


@dataclass(frozen=True)
class Figure:
    """One figure of one lesson: a static SVG (``kind == "static"``) or an interactive chart."""

    id: str
    kind: str
    title: Bilingual
    alt: Bilingual
    make: Callable  # static: draw(fig, t) -> None; interactive: spec(t) -> dict
    size: tuple[float, float] = (6.4, 3.4)

    @property
    def lesson(self) -> str:
        """``"17.01"`` for ``"17-01-table"``."""
        return self.id[:5].replace("-", ".")


REGISTRY: dict[str, Figure] = {}


def _register(figure: Figure) -> Figure:
    if figure.id in REGISTRY:
        raise ValueError(f"figure id {figure.id!r} defined twice")
    REGISTRY[figure.id] = figure
    return figure


def static(id: str, *, title: tuple[str, str], alt: tuple[str, str], size=(6.4, 3.4)):
    """Register ``draw(fig, t)`` as the static figure ``id`` (title and alt as ``(es, en)``)."""

    def decorate(draw: Callable) -> Callable:
        _register(Figure(id, "static", Bilingual(*title), Bilingual(*alt), draw, size))
        return draw

    return decorate


def interactive(id: str, *, title: tuple[str, str], alt: tuple[str, str]):
    """Register ``spec(t) -> dict``, a Vega-Lite spec with its data, as interactive ``id``."""

    def decorate(spec: Callable) -> Callable:
        _register(Figure(id, "interactive", Bilingual(*title), Bilingual(*alt), spec))
        return spec

    return decorate


def text_for(lang: str) -> Text:
    """``t(es, en)`` for one language."""
    if lang not in LANGS:
        raise ValueError(f"language must be one of {LANGS}, not {lang!r}")
    return (lambda es, en: es) if lang == "es" else (lambda es, en: en)


def spelled(value: float, decimals: int = 0) -> tuple[str, str]:
    """``value`` rounded to ``decimals`` (negative: to tens, hundreds, ...) as each language
    writes it in a caption, ``(es, en)``: 17652 at ``decimals=-2`` is ``("17 700", "17,700")``
    (Spanish groups thousands with a space from 10 000 on)."""
    en = f"{round(value, decimals):,.{max(decimals, 0)}f}"
    return en.replace(",", " " if abs(value) >= 10_000 else ""), en


def rounded(values, digits: int = 4) -> list:
    """Plain floats rounded to ``digits`` decimals (nested lists kept), for compact page data."""
    if isinstance(values, list | tuple):
        return [rounded(v, digits) for v in values]
    if hasattr(values, "tolist"):
        return rounded(values.tolist(), digits)
    return round(float(values), digits)
