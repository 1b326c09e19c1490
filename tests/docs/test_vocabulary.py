"""One vocabulary: no page uses a variant that the glossary rejects (``docs_site/vocabulary.yml``).

The glossary shows the same list (``hooks/vocabulary.py``), so readers and this test read one
source. Glossary tables are checked without their English column, which names the English terms,
and lesson titles are left out: they are plain text, as the lab list (``minimodel.course``) and the
terminal write them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from docs_pages import DOCS, LANGS, markdown_files
from lessons import lessons, title
from prose import paragraphs

ROOT = Path(__file__).resolve().parents[2]
RULES = yaml.safe_load((ROOT / "docs_site" / "vocabulary.yml").read_text(encoding="utf-8"))


def without_english_column(text: str) -> str:
    """A glossary page with the second cell (the English term) of every table row blanked."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and line.count("|") >= 5:
            cells = line.split("|")
            cells[2] = " "
            line = "|".join(cells)
        rows.append(line)
    return "\n".join(rows)


def offences(text: str, rules: list[dict]) -> list[str]:
    """Each use of a rejected variant in ``text``, with a little context."""
    found = []
    for paragraph in paragraphs(text):
        for rule in rules:
            if "context" in rule and not re.search(rule["context"], paragraph):
                continue
            for match in re.finditer(rule["pattern"], paragraph):
                around = paragraph[max(0, match.start() - 40) : match.end() + 40]
                found.append(f"{rule['use']!r} rejects {match.group(0)!r}: ...{around}...")
    return found


@pytest.mark.parametrize("lang", LANGS)
def test_every_rule_is_complete(lang):
    assert len(RULES[lang]) >= 3
    for rule in RULES[lang]:
        assert {"use", "avoid", "pattern"} <= set(rule), rule
        re.compile(rule["pattern"])


@pytest.mark.parametrize("lang", LANGS)
def test_each_rule_catches_the_form_it_rejects(lang):
    """The rules can fail: each one flags its own rejected form, written as a sentence."""
    for rule in RULES[lang]:
        avoided = rule["avoid"].replace("*", "")
        sentence = f"{avoided} en una imagen" if "context" in rule else avoided
        assert offences(sentence, [rule]), f"{rule['pattern']!r} misses {avoided!r}"
        assert not offences(rule["use"], [rule]), f"{rule['pattern']!r} rejects {rule['use']!r}"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", sorted(markdown_files("es")))
def test_pages_use_the_glossary_forms(lang, page):
    text = (DOCS[lang] / page).read_text(encoding="utf-8")
    if page == "glossary.md":
        text = without_english_column(text)
    for lesson in lessons(lang):
        text = text.replace(title(lang, lesson), " ")
    assert offences(text, RULES[lang]) == []


def test_quizzes_figures_and_labs_name_the_standard_error_as_the_lessons_do():
    """One Spanish term for the standard error wherever a student reads it, not only in pages."""
    [rule] = [r for r in RULES["es"] if r["avoid"] == "error estándar"]
    sources = [
        *(ROOT / "docs_site" / "quizzes").glob("*.yml"),
        *(ROOT / "docs_site" / "figures").glob("*.py"),
        *(ROOT / "solutions" / "labs").rglob("*.py"),
        *(ROOT / "src" / "minimodel").rglob("*.py"),
        # the recorded outputs the lessons quote, and the scripts that print them
        *(ROOT / "benchmarks").rglob("*.py"),
        *(ROOT / "benchmarks" / "results").glob("*.txt"),
    ]
    assert len(sources) > 40
    used = [path.name for path in sources if re.search(rule["pattern"], path.read_text("utf-8"))]
    assert used == []
    # nor its abbreviation: "e. e." (error estándar) where the course's term gives "e. t."
    abbreviated = [path.name for path in sources if "e. e. " in path.read_text("utf-8")]
    assert abbreviated == []


def test_spanish_italics_of_loanwords_are_recognised():
    rules = [r for r in RULES["es"] if "logits" in r["use"]]
    assert offences("los logits de la atención", rules)
    assert not offences("los *logits* de la atención", rules)
    assert not offences("los $logits$ y `logits`", rules)
