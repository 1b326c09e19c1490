// Feedback for the self-check questions at the end of each lesson (docs_site/hooks/quiz.py).
// Multiple choice: a click shows that option's explanation and marks it right or wrong.
// Numeric: the answer typed (decimal point or comma) is compared with the stored one, within
// the question's tolerance. Everything is in the page: no network, no library.
(function () {
  "use strict";

  function show(question, feedback) {
    var all = question.querySelectorAll(".quiz-answer ~ .quiz-feedback");
    for (var i = 0; i < all.length; i++) all[i].hidden = all[i] !== feedback;
  }

  function choose(question, button) {
    var right = button.getAttribute("data-correct") === "true";
    button.classList.add(right ? "quiz-is-right" : "quiz-is-wrong");
    button.setAttribute("aria-pressed", "true");
    button.nextElementSibling.hidden = false;
    if (right) question.classList.add("quiz-solved");
  }

  function check(question) {
    var input = question.querySelector(".quiz-input");
    var text = input.value.replace(/\s/g, "").replace(",", ".").replace("\u2212", "-");
    var value = text === "" ? NaN : Number(text);
    var answer = Number(question.getAttribute("data-answer"));
    var tolerance = Number(question.getAttribute("data-tolerance"));
    if (!isFinite(value)) {
      show(question, question.querySelector(".quiz-invalid"));
      return;
    }
    var right = Math.abs(value - answer) <= tolerance;
    input.classList.toggle("quiz-is-right", right);
    input.classList.toggle("quiz-is-wrong", !right);
    show(question, question.querySelector(right ? ".quiz-right" : ".quiz-wrong"));
    if (right) question.classList.add("quiz-solved");
  }

  function wire(question) {
    if (question.getAttribute("data-kind") === "number") {
      question.querySelector(".quiz-check").addEventListener("click", function () {
        check(question);
      });
      question.querySelector(".quiz-input").addEventListener("keydown", function (event) {
        if (event.key === "Enter") check(question);
      });
      return;
    }
    var buttons = question.querySelectorAll(".quiz-option");
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].addEventListener("click", function (event) {
        choose(question, event.currentTarget);
      });
    }
  }

  function start() {
    var questions = document.querySelectorAll(".quiz-question");
    for (var i = 0; i < questions.length; i++) wire(questions[i]);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
