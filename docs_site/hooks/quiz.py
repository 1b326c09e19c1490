"""MkDocs hook: the self-check questions at the end of each lesson, from ``docs_site/quizzes/``.

Each lesson's questions live in one YAML file (``17-03.yml`` for ``17/03-rope.md``) with the
Spanish and English text side by side. Where a page has the marker ``<!-- quiz -->``, the hook puts
the questions in the page's language as plain HTML; ``assets/javascripts/quiz.js`` gives the
feedback in the browser, with no network. Numeric answers are computed by the reference code in
``tests/docs/test_quizzes.py`` (each question names its ``compute`` expression).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import markdown
import yaml
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

QUIZZES = Path(__file__).resolve().parents[1] / "quizzes"
MARKER = "<!-- quiz -->"
WORDS = {
    "es": {
        "right": "Correcto.",
        "wrong": "No.",
        "check": "Comprobar",
        "answer": "Tu respuesta",
        "not_a_number": "Escribe un número (con punto o coma decimal).",
    },
    "en": {
        "right": "Correct.",
        "wrong": "Not quite.",
        "check": "Check",
        "answer": "Your answer",
        "not_a_number": "Type a number.",
    },
}
_INLINE = markdown.Markdown(
    extensions=["pymdownx.arithmatex", "pymdownx.inlinehilite"],
    extension_configs={"pymdownx.arithmatex": {"generic": True}},
)


def quiz_file(src_uri: str) -> Path:
    """``17/03-rope.md`` -> ``docs_site/quizzes/17-03.yml``."""
    phase, page = src_uri.split("/")
    return QUIZZES / f"{phase}-{page[:2]}.yml"


def load(path: Path) -> dict:
    """The questions of one lesson, as written in its YAML file."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def inline(text: str) -> str:
    """One paragraph of markdown (code, emphasis, ``$math$``) as HTML, without the ``<p>``."""
    _INLINE.reset()
    out = _INLINE.convert(text.strip())
    return re.sub(r"^<p>(.*)</p>$", r"\1", out, flags=re.DOTALL)


def _choice(question: dict, lang: str, words: dict) -> str:
    items = []
    for option in question["options"]:
        correct = bool(option.get("correct"))
        verdict = words["right"] if correct else words["wrong"]
        items.append(
            '<li><button type="button" class="quiz-option" '
            f'data-correct="{str(correct).lower()}">{inline(option[lang])}</button>'
            f'<div class="quiz-feedback" role="status" hidden><strong>{verdict}</strong> '
            f"{inline(option['why'][lang])}</div></li>"
        )
    return f'<ul class="quiz-options">{"".join(items)}</ul>'


def _number(question: dict, lang: str, words: dict) -> str:
    return (
        '<p class="quiz-answer">'
        f'<label>{words["answer"]}: <input type="text" inputmode="decimal" class="quiz-input" '
        f'autocomplete="off"></label> '
        f'<button type="button" class="quiz-check">{words["check"]}</button></p>'
        f'<div class="quiz-feedback quiz-right" hidden><strong>{words["right"]}</strong> '
        f"{inline(question['right'][lang])}</div>"
        f'<div class="quiz-feedback quiz-wrong" hidden><strong>{words["wrong"]}</strong> '
        f"{inline(question['wrong'][lang])}</div>"
        f'<div class="quiz-feedback quiz-invalid" hidden>{html.escape(words["not_a_number"])}</div>'
    )


def render(quiz: dict, lang: str) -> str:
    """The questions of one lesson as HTML in ``lang``."""
    words = WORDS[lang]
    blocks = []
    for number, question in enumerate(quiz["questions"], start=1):
        kind = question["kind"]
        attrs = f'data-kind="{kind}" id="quiz-{quiz["lesson"].replace(".", "-")}-{number}"'
        if kind == "number":
            answer, tolerance = question["answer"], question["tolerance"]
            attrs += f' data-answer="{answer!r}" data-tolerance="{tolerance!r}"'
            body = _number(question, lang, words)
        else:
            body = _choice(question, lang, words)
        blocks.append(
            f'<div class="quiz-question" {attrs}>'
            f'<p class="quiz-prompt"><span class="quiz-number">{number}.</span> '
            f"{inline(question['prompt'][lang])}</p>{body}</div>"
        )
    return f'<div class="quiz" data-lesson="{quiz["lesson"]}">\n{"".join(blocks)}\n</div>'


def on_page_markdown(markdown_text: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Replace the marker with the lesson's questions in the page's language."""
    if MARKER not in markdown_text:
        return markdown_text
    quiz = load(quiz_file(page.file.src_uri))
    return markdown_text.replace(MARKER, render(quiz, config.theme["language"]))


def on_serve(server, config: MkDocsConfig, builder):
    """Rebuild when a quiz changes while serving."""
    server.watch(str(QUIZZES))
    return server
