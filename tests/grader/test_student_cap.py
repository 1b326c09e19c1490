"""The cap per student: once a submission has used ``student_cpu_s`` seconds (all its items
together), the items not yet run score 0 with a reason in both languages, and the worker moves on.
"""

from __future__ import annotations

import io

import nbformat
from grader_corpus import REFERENCE_FORWARD, stub_with

from grader.trusted import nbexec
from grader.trusted.budget import StudentBudget
from grader.trusted.grading import Options, grade
from grader.trusted.sandbox import Limits

SLUG = "17_01_sinusoidal"
# a loop in C, which only the CPU limit of its probe group stops (a loop in Python runs out of
# its time on one case and is not run again: tests/grader/test_out_of_time.py)
SPIN = "import collections, itertools\ncollections.deque(itertools.repeat(None), maxlen=0)\n"


def test_budget_caps_the_charges_and_the_time_held():
    budget = StudentBudget(10, 30)
    budget.charge(3.0, 9.0)  # a run that finished: its CPU time; it held the worker 9 s
    assert (budget.used_s, budget.held_s) == (3.0, 9.0) and not budget.spent()
    budget.charge(8.0, 8.5)  # stopped on time: charged the limit that stopped it
    assert budget.spent() and budget.left() == 0 and budget.wall_left() == 12.5
    finding = budget.finding()
    assert finding.code == "student-cap"
    assert "10 s" in finding.es and "10 s" in finding.en and finding.es != finding.en
    asleep = StudentBudget(10, 30)
    asleep.charge(0.1, 31.0)  # slept just under every limit: no CPU, but the worker was held
    assert asleep.spent() and asleep.left() > 0 and asleep.finding().code == "student-wall-cap"
    assert "30 s" in asleep.finding().es and "30 s" in asleep.finding().en
    assert StudentBudget(0).left() == StudentBudget(0).wall_left() == float("inf")
    assert not StudentBudget(0).spent()


def test_a_student_who_loops_forever_is_stopped_by_the_cap(tmp_path):
    subs = tmp_path / "subs"
    root = subs / "loops"
    (root / "src/minimodel/positional").mkdir(parents=True)
    (root / "labs").mkdir()
    (root / "src/minimodel/positional/sinusoidal.py").write_text(
        stub_with(SPIN, "T = x.shape[-2]\n" + SPIN + REFERENCE_FORWARD), encoding="utf-8")
    notebook = nbexec.source_notebook(SLUG)
    (root / f"labs/{SLUG}.ipynb").write_text(nbformat.writes(notebook), encoding="utf-8")
    limits = Limits(wall_s=3, cpu_s=2, memory_mb=1024, cell_timeout_s=30, notebook_wall_s=60,
                    student_cpu_s=5)
    summary = grade(subs, tmp_path / "out", Options(workers=1, limits=limits, progress=False,
                                                    labs=["17.01"]), stream=io.StringIO())
    (record,) = summary["records"]
    assert "student cpu cap" in record["status"]
    budget = record["instructor"]["budget"]
    assert budget["used_s"] >= 5 and budget["skipped"]
    assert "17.01/notebook" in budget["skipped"]
    capped = [v for v in record["labs"]["17.01"]["items"]
              if any(f["code"] == "student-cap" for f in v["findings"])]
    assert capped and all(v["score"] == 0 for v in capped)
    assert record["wall_s"] < 120  # not the notebook's 60 s per cell, three times over
    for lang, words in (("es", "tiempo total de CPU"), ("en", "total CPU time")):
        text = (tmp_path / "out/feedback/loops" / f"feedback.{lang}.md").read_text()
        assert words in text
