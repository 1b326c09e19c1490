"""The review questions at the end of each lesson (``docs_site/quizzes/``), without a browser.

Every lesson has 4-8 questions in both languages, each option and each numeric answer explained in
both; each numeric answer is computed here by the reference code (the question's ``compute``) and
must match what the page accepts. The browser side is in ``test_quiz_browser.py``.
"""

from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path

import pytest
import torch
from docs_pages import DOCS, LANGS
from lessons import lessons

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs_site" / "hooks"))
import quiz  # noqa: E402

MODULES = (
    "alibi", "cache_positions", "equivariance", "extrapolation", "learned",
    "relative_bias", "rope", "scaling", "sinusoidal", "two_d",
)  # fmt: skip
LESSONS = lessons("es")


def questions(page: str) -> list[dict]:
    return quiz.load(quiz.quiz_file(page))["questions"]


def numeric(page: str) -> list[dict]:
    return [q for q in questions(page) if q["kind"] == "number"]


def computed(question: dict) -> float:
    """The value of a question's ``compute`` expression, with the reference modules in scope."""
    scope = {"torch": torch, "math": math}
    scope |= {name: importlib.import_module(f"minimodel.positional.{name}") for name in MODULES}
    return eval(question["compute"], scope)  # noqa: S307 - the course's own data files


def bilingual(field: object) -> bool:
    return isinstance(field, dict) and all(str(field.get(lang, "")).strip() for lang in LANGS)


def test_one_quiz_per_lesson_and_nothing_else():
    files = {path.name for path in quiz.QUIZZES.glob("*.yml")}
    assert files == {quiz.quiz_file(page).name for page in LESSONS}


@pytest.mark.parametrize("page", LESSONS)
def test_each_lesson_ends_with_its_questions(page):
    for lang in LANGS:
        text = (DOCS[lang] / page).read_text(encoding="utf-8")
        assert text.count(quiz.MARKER) == 1, f"{lang}/{page}"
    data = quiz.load(quiz.quiz_file(page))
    assert data["lesson"] == f"{page[:2]}.{page[3:5]}"


@pytest.mark.parametrize("page", LESSONS)
def test_four_to_eight_questions_in_both_languages(page):
    found = questions(page)
    assert 4 <= len(found) <= 8, f"{page}: {len(found)} questions"
    kinds = {q["kind"] for q in found}
    assert kinds <= {"choice", "number"} and "choice" in kinds
    for q in found:
        assert bilingual(q["prompt"]), q
        if q["kind"] == "choice":
            assert 2 <= len(q["options"]) <= 5
            assert sum(bool(o.get("correct")) for o in q["options"]) == 1, q["prompt"]["en"]
            for option in q["options"]:
                assert bilingual(option) and bilingual(option["why"]), option
        else:
            assert bilingual(q["right"]) and bilingual(q["wrong"]), q
            assert q["tolerance"] >= 0 and q["compute"].strip()


def test_every_quiz_has_a_numeric_question():
    assert all(numeric(page) for page in LESSONS)


@pytest.mark.parametrize("page", LESSONS)
def test_numeric_answers_are_what_the_reference_computes(page):
    for question in numeric(page):
        value = computed(question)
        error = abs(value - question["answer"])
        assert error <= question["tolerance"], (
            f"{page}: {question['prompt']['en']}\n stated {question['answer']}, computed {value}"
        )


@pytest.mark.parametrize("lang", LANGS)
def test_rendered_questions_explain_every_option(lang):
    for page in LESSONS:
        data = quiz.load(quiz.quiz_file(page))
        html = quiz.render(data, lang)
        options = sum(len(q.get("options", [])) for q in data["questions"])
        assert html.count('class="quiz-option"') == options
        assert html.count('class="quiz-feedback"') == options
        assert html.count('class="quiz-input"') == len(numeric(page))
        assert quiz.WORDS[lang]["right"] in html and "$" not in html, "math left as $...$"


def test_the_12_head_explanation_names_the_positions_the_reference_takes():
    """17.04: the 4 slopes added to those of 8 heads are positions 0, 2, 4, 6 of 16 heads'."""
    from minimodel.positional.alibi import alibi_slopes

    added = [s for s in alibi_slopes(12).tolist() if s not in alibi_slopes(8).tolist()]
    positions = [alibi_slopes(16).tolist().index(s) for s in added]
    assert positions == [0, 2, 4, 6]
    [question] = [q for q in numeric("17/04-alibi.md") if "12" in q["prompt"]["en"]]
    for lang in LANGS:
        assert "$0, 2, 4, 6$" in question["wrong"][lang], lang
