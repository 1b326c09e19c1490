"""The review questions in a real browser: a right and a wrong answer each get their feedback.

For every lesson in both languages, headless Chromium (network off, as in ``test_docs_browser``)
loads a copy of the built page with a small script appended that answers each question twice,
first wrongly and then rightly, by clicking the options and typing into the inputs as a reader
would, and records which feedback the page shows. The right answers come from the quiz files and,
for numbers, from the reference code (``test_quizzes.computed``); Spanish numbers are typed with a
decimal comma.
"""

from __future__ import annotations

import html
import json
import re
from urllib.parse import urljoin

import pytest
import test_docs_browser as browser
from docs_pages import LANGS
from lessons import lessons
from test_quizzes import computed, questions, quiz

pytestmark = pytest.mark.browser
chromium = browser.chromium  # the fixtures of the other browser tests
server = browser.server

ANSWER_SCRIPT = """
<script>
window.addEventListener("load", function () {
  var plan = %s;
  function shown(question) {
    var out = [];
    question.querySelectorAll(".quiz-feedback").forEach(function (box, index) {
      if (!box.hidden) {
        var verdict = box.querySelector("strong");
        out.push({index: index, cls: box.className, verdict: verdict ? verdict.textContent : ""});
      }
    });
    return out;
  }
  function answer(question, step) {
    if (step.type === "option") {
      question.querySelectorAll(".quiz-option")[step.value].click();
    } else {
      question.querySelector(".quiz-input").value = step.value;
      question.querySelector(".quiz-check").click();
    }
    return {shown: shown(question), solved: question.classList.contains("quiz-solved")};
  }
  var results = plan.map(function (item) {
    var question = document.getElementById(item.id);
    var record = {id: item.id};
    item.steps.forEach(function (step) { record[step.name] = answer(question, step); });
    return record;
  });
  var out = document.createElement("pre");
  out.id = "quiz-results";
  out.textContent = JSON.stringify(results);
  document.body.appendChild(out);
});
</script>
"""


def typed(value: float, lang: str) -> str:
    """A number as a reader of ``lang`` types it."""
    text = repr(round(float(value), 6))
    return text.replace(".", ",") if lang == "es" else text


def plan(page: str, lang: str) -> list[dict]:
    """What to answer, question by question: wrong first, then right (and garbage for numbers)."""
    steps = []
    lesson = quiz.quiz_file(page).stem
    for number, question in enumerate(questions(page), start=1):
        item = {"id": f"quiz-{lesson}-{number}"}
        if question["kind"] == "choice":
            right = next(i for i, o in enumerate(question["options"]) if o.get("correct"))
            wrong = next(i for i, o in enumerate(question["options"]) if not o.get("correct"))
            item["steps"] = [
                {"name": "wrong", "type": "option", "value": wrong},
                {"name": "right", "type": "option", "value": right},
            ]
            item["expect"] = {"wrong": wrong, "right": right}
        else:
            value = computed(question)
            off = question["answer"] + 10 * question["tolerance"] + 1
            item["steps"] = [
                {"name": "garbage", "type": "number", "value": "abc"},
                {"name": "wrong", "type": "number", "value": typed(off, lang)},
                {"name": "right", "type": "number", "value": typed(value, lang)},
            ]
        steps.append(item)
    return steps


def check(results: list[dict], steps: list[dict], lang: str) -> None:
    words = quiz.WORDS[lang]
    assert [r["id"] for r in results] == [s["id"] for s in steps], "questions missing on the page"
    for result, step in zip(results, steps, strict=True):
        wrong, right = result["wrong"], result["right"]
        assert not wrong["solved"] and right["solved"], result
        if "expect" in step:  # multiple choice: the clicked option's own explanation appears
            assert [s["index"] for s in wrong["shown"]] == [step["expect"]["wrong"]], result
            assert wrong["shown"][0]["verdict"] == words["wrong"], result
            shown = {s["index"]: s["verdict"] for s in right["shown"]}
            assert shown.get(step["expect"]["right"]) == words["right"], result
        else:
            assert [s["cls"] for s in result["garbage"]["shown"]] == ["quiz-feedback quiz-invalid"]
            assert [(s["cls"], s["verdict"]) for s in wrong["shown"]] == [
                ("quiz-feedback quiz-wrong", words["wrong"])
            ], result
            assert [(s["cls"], s["verdict"]) for s in right["shown"]] == [
                ("quiz-feedback quiz-right", words["right"])
            ], result


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", lessons("es"))
def test_right_and_wrong_answers_get_their_feedback(
    chromium, server, built_site, page, lang, tmp_path
):
    built = built_site["site"] / lang / page.replace(".md", ".html")
    steps = plan(page, lang)
    script = ANSWER_SCRIPT % json.dumps([{"id": s["id"], "steps": s["steps"]} for s in steps])
    probe = built.with_name(built.stem + ".quiz-check.html")
    probe.write_text(built.read_text("utf-8").replace("</body>", script + "</body>"), "utf-8")
    try:
        url = urljoin(server, f"{lang}/{page.replace('.md', '.quiz-check.html')}")
        dom = browser.run_chromium(chromium, url, tmp_path / "profile", "--dump-dom")
    finally:
        probe.unlink()
    found = re.search(r'<pre id="quiz-results">(.*?)</pre>', dom, re.DOTALL)
    assert found, "the answering script did not finish (quiz.js broken?)"
    check(json.loads(html.unescape(found.group(1))), steps, lang)
