"""Feedback from a record, without grading: the total with its fixed denominator and its split
into automatic and hand-graded points, the policy on syntax errors, Markdown that stays readable
(``gpu_check.py``, not ``gpu\\_check.py``) and inert."""

from __future__ import annotations

from grader.trusted import feedback, gradebook


def record(manual_scores=(None, None)) -> dict:
    items = [{"key": "pe.values", "title_es": "Tabla", "title_en": "Table", "points": 3,
              "score": 3.0, "status": "passed", "findings": [], "kind": "auto"},
             {"key": "module.device", "title_es": "Dispositivo", "title_en": "Device",
              "points": 1, "score": 0.0, "status": "failed", "kind": "auto", "findings": [
                  {"code": "x", "es": "mira gpu_check.py y <b>|[x](y)", "en":
                   "see gpu_check.py and <b>|[x](y) _em_", "scoring": True}]}]
    for grade_id, points, score in zip(("q1-answer", "q2-answer"), (2, 1), manual_scores,
                                       strict=True):
        items.append({"key": f"nb/{grade_id}", "title_es": grade_id, "title_en": grade_id,
                      "points": points, "score": score, "status": "manual", "kind": "manual",
                      "findings": []})
    data = {"student_id": "ana", "messages": [], "status": "ok",
            "labs": {"17.01": {"title_es": "Sinusoidal", "title_en": "Sinusoidal",
                               "items": items}}}
    gradebook.recompute_totals(data)
    return data


def test_the_total_counts_every_point_and_says_what_is_pending():
    before = feedback.markdown(record(), "en")
    assert "**Total: 3 / 7 (automatic 3 / 4 · by hand 0 / 3; 2 written answers still to be " \
           "graded by hand)**" in before
    after = record((1.5, 1.0))
    assert after["manual_pending"] == 0 and gradebook.student_status(after) == "ok"
    text = feedback.markdown(after, "es")
    assert "**Total: 5.50 / 7 (automático 3 / 4 · a mano 2.50 / 3)**" in text
    assert "Sinusoidal — 5.50 / 7" in text and "Total automático" not in text


def test_a_flagged_submission_lists_no_written_answer_to_grade():
    """A flagged submission (an archive that could not be read) is reviewed by the instructor as
    a whole: its feedback lists no written answer as waiting for a grade, nor counts them."""
    flagged = {**record(), "status": "flagged: zip bomb"}
    for lang, waiting in (("en", "awaiting manual grading"), ("es", "pendiente de corrección")):
        text = feedback.markdown(flagged, lang)
        assert "q1-answer" not in text and waiting not in text, lang
        assert "q1-answer" in feedback.markdown(record(), lang)
    assert "still to be graded" not in feedback.markdown(flagged, "en")


def test_a_syntax_error_states_the_policy_in_both_languages():
    data = record()
    data["messages"] = [{"code": "syntax-error", "es": "rope.py tiene un error de sintaxis",
                         "en": "rope.py has a syntax error", "scoring": True}]
    assert "every item that uses it scores 0" in feedback.markdown(data, "en")
    assert "todos los apartados que lo usan valen 0" in feedback.html_page(data, "es")
    assert "scores 0" not in feedback.markdown(record(), "en")


def test_markdown_keeps_file_names_readable_and_stays_inert():
    text = feedback.markdown(record(), "en")
    assert "gpu_check.py" in text and "gpu\\_check.py" not in text
    assert "\\<b\\>\\|\\[x\\](y) \\_em\\_" in text


def test_gpu_results_say_whether_they_count():
    data = record()
    data["labs"]["17.01"]["items"][1]["gpu"] = "failed"
    data["device"] = "cuda-report"  # --device auto on a GPU machine
    assert "GPU checks: failed. In this grading they change no points" in \
        feedback.markdown(data, "en")
    data["device"] = "cuda"  # the whole class graded with --device cuda
    text = feedback.markdown(data, "en")
    assert "GPU checks: failed." in text and "change no points" not in text
    data["labs"]["17.01"]["items"][1]["gpu"] = "not run"
    data["device"] = "cpu"
    assert "not run (graded without a GPU); they change no points" in \
        feedback.markdown(data, "en")


def test_notebook_cells_are_said_to_be_checked_in_the_students_own_kernel():
    data = record()
    assert "your own kernel" not in feedback.markdown(data, "en")  # no notebook handed in
    data["labs"]["17.01"]["notebook"] = {"present": True, "status": "finished", "findings": []}
    assert "checked in your own kernel" in feedback.markdown(data, "en")
    assert "se comprueban en tu propio kernel" in feedback.html_page(data, "es")
