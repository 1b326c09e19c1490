"""A term of one lab through nbgrader, at test size: the course written by ``nbgrader-course``,
released, fetched, submitted and collected through nbgrader's exchange (one student; another
placed in ``submitted/`` by hand), nbgrader's Autograde refused, ``submitted/`` graded here, our
scores in nbgrader's gradebook (export and feedback), a written answer graded by hand, and the
merged gradebook and feedback with the right totals and denominators."""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
import warnings
from contextlib import redirect_stderr
from pathlib import Path

import nbformat
import pytest
from notebook_runs import LIMITS, solved

from grader.build.demo import fill_notebook
from grader.cli import main
from grader.trusted import gradebook
from grader.trusted.grading import Options, grade
from minimodel.implementation import REFERENCE_DIR, REPO_ROOT

SLUG, LAB = "17_01_sinusoidal", "17.01"
NBGRADER = [sys.executable, "-c", "from nbgrader.apps.nbgraderapp import main; main()"]


def nbgrader(folder: Path, *args: str) -> str:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([*NBGRADER, *args], cwd=folder, capture_output=True, text=True,
                          env=env, timeout=600)
    return done.stdout + done.stderr


def fill(folder: Path, cells: dict[str, str] | None, answer: str = "",
         module: bool = False) -> None:
    """A student's work in their assignment folder (the released notebook there)."""
    notebook = nbformat.read(folder / f"{SLUG}.ipynb", as_version=4)
    notebook = fill_notebook(notebook, cells or {})
    for cell in notebook.cells:
        if answer and cell.metadata.get("nbgrader", {}).get("grade_id") == "q1-answer":
            cell.source = answer
    nbformat.write(notebook, folder / f"{SLUG}.ipynb")
    if module:  # the module the notebook uses, handed in next to it
        shutil.copy2(REFERENCE_DIR / "sinusoidal.py", folder / "sinusoidal.py")


def through_the_exchange(course: Path, root: Path, student: str, **work) -> None:
    """release_assignment, the student's fetch_assignment and submit, then collect."""
    exchange = f"--Exchange.root={root / 'exchange'}"
    (root / "exchange").mkdir(exist_ok=True)
    home = root / student
    home.mkdir()
    course_id = ["--course", "minimodel-positional", exchange]
    assert "Released as" in nbgrader(course, "release_assignment", SLUG, exchange)
    assert "Fetched as" in nbgrader(home, "fetch_assignment", SLUG, *course_id)
    fill(home / SLUG, **work)
    # the student's login name (nbgrader takes the system user's; here, one machine for all)
    assert "Submitted as" in nbgrader(home, "submit", SLUG, *course_id,
                                      f"--CourseDirectory.student_id={student}")
    assert "Collecting submission" in nbgrader(course, "collect", SLUG, exchange)


def place(course: Path, student: str, **work) -> None:
    """What ``nbgrader collect`` leaves, put there by hand: the folder and its timestamp."""
    folder = course / "submitted" / student / SLUG
    folder.mkdir(parents=True)
    shutil.copy2(course / "release" / SLUG / f"{SLUG}.ipynb", folder)
    fill(folder, **work)
    (folder / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC\n")


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    root = tmp_path_factory.mktemp("term")
    course = root / "course"
    assert main(["nbgrader-course", str(course), "--lab", LAB]) == 0
    through_the_exchange(course, root, "ana", cells=solved(SLUG),
                         answer="Porque... / Because...", module=True)
    place(course, "bea", cells=None)
    refused = nbgrader(course, "autograde", SLUG)
    left = sorted((course / "autograded").glob("*/*/*.ipynb"))
    out = root / "out"
    with redirect_stderr(io.StringIO()):
        grade(course / "submitted", out, Options(workers=2, device="cpu", labs=[LAB],
                                                 limits=LIMITS, progress=False),
              stream=io.StringIO())
    before = {r["student_id"]: r for r in gradebook.load_records(out)}
    assert main(["nbgrader-course", str(course), "--scores", str(out)]) == 0
    return {"course": course, "out": out, "refused": refused, "left": left, "before": before}


def rows(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def test_the_course_is_what_nbgrader_expects(term):
    course = term["course"]
    assert (course / "nbgrader_config.py").exists() and (course / "gradebook.db").exists()
    source = nbformat.read(course / "source" / SLUG / f"{SLUG}.ipynb", as_version=4)
    assert any("### BEGIN SOLUTION" in c.source for c in source.cells)
    released = nbformat.read(course / "release" / SLUG / f"{SLUG}.ipynb", as_version=4)
    labs = nbformat.read(REPO_ROOT / "labs" / f"{SLUG}.ipynb", as_version=4)
    assert [c.source for c in released.cells] == [c.source for c in labs.cells]


def test_nbgrader_autograde_is_refused_before_any_student_code_runs(term):
    assert "autograde is disabled in this course" in term["refused"]
    assert term["left"] == []  # nothing autograded by nbgrader


def test_the_submitted_layout_is_graded(term):
    ana, bea = term["before"]["ana"], term["before"]["bea"]
    assert ana["auto"] == ana["auto_max"] == 18 and ana["manual_pending"] == 2
    assert bea["auto"] < 3 and bea["status"] == "ok"


def test_nbgrader_shows_our_points(term):
    course = term["course"]
    nbgrader(course, "export", "--to", "export.csv")
    exported = rows(course / "export.csv")
    for student, record in term["before"].items():
        notebook_auto = sum(v["score"] or 0 for v in record["labs"][LAB]["items"]
                            if v["key"].startswith("nb/") and v["kind"] == "auto")
        assert float(exported[student]["raw_score"]) == notebook_auto
        assert float(exported[student]["max_score"]) == 12  # the notebook's 9 + 3 by hand
    assert float(exported["ana"]["raw_score"]) == 9


def test_hand_grading_merges_into_one_total_and_feedback(term):
    from nbgrader.api import Gradebook

    course, out = term["course"], term["out"]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as book:
        notebook = book.find_submission_notebook(SLUG, SLUG, "ana")
        assert notebook.needs_manual_grade  # formgrader lists it
        book.find_grade("q1-answer", SLUG, SLUG, "ana").manual_score = 1.5
        book.find_grade("test-table", SLUG, SLUG, "bea").manual_score = 1  # typed over
        book.db.commit()
    assert main(["merge", "--out", str(out), "--manual", str(course / "gradebook.db")]) == 0
    grades = rows(out / "grades.csv")
    ana, maxima = grades["ana"], grades["max_points"]
    assert (maxima["auto"], maxima["manual"], maxima["total"], maxima[LAB]) == \
        ("18", "3", "21", "21")
    assert (ana["auto"], ana["manual"], ana["total"]) == ("18", "1.50", "19.50")
    assert ana["manual_pending"] == "1" and ana["status"] == "awaiting manual grading"
    bea = grades["bea"]
    assert bea["17.01/nb/test-table"] == "1"
    assert float(bea["auto"]) == term["before"]["bea"]["auto"] + 1
    feedback = (out / "feedback" / "ana" / "feedback.en.md").read_text(encoding="utf-8")
    assert "**Total: 19.50 / 21 (automatic 18 / 18 · by hand 1.50 / 3; 1 written answer " \
           "still to be graded by hand)**" in feedback
    assert "Automatic total" not in feedback
    spanish = (out / "feedback" / "ana" / "feedback.es.md").read_text(encoding="utf-8")
    assert "**Total: 19.50 / 21 (automático 18 / 18 · a mano 1.50 / 3; 1 respuesta escrita" \
        in spanish
    nbgrader(course, "generate_feedback", SLUG)
    html = course / "feedback" / "ana" / SLUG / f"{SLUG}.html"
    assert html.exists() and "10.5" in html.read_text(encoding="utf-8")  # 9 + 1.5 of 12


def test_repository_submissions_give_formgrader_their_notebooks(term, tmp_path):
    from grader.build.nbgrader_course import collect_from

    course = term["course"]
    subs = tmp_path / "subs"
    (subs / "carlos" / "labs").mkdir(parents=True)
    notebook = fill_notebook(nbformat.read(REPO_ROOT / "labs" / f"{SLUG}.ipynb", as_version=4),
                             solved(SLUG))
    nbformat.write(notebook, subs / "carlos" / "labs" / f"{SLUG}.ipynb")
    ana_before = (course / "submitted" / "ana" / SLUG / f"{SLUG}.ipynb").read_bytes()
    (subs / "ana" / "labs").mkdir(parents=True)
    nbformat.write(notebook, subs / "ana" / "labs" / f"{SLUG}.ipynb")
    assert collect_from(course, subs, [SLUG]) == 1  # ana's collected notebook is kept
    placed = course / "submitted" / "carlos" / SLUG
    assert nbformat.read(placed / f"{SLUG}.ipynb", as_version=4).cells == notebook.cells
    assert (placed / "timestamp.txt").read_text().strip().endswith("UTC")
    assert (course / "submitted" / "ana" / SLUG / f"{SLUG}.ipynb").read_bytes() == ana_before


def test_the_gradebooks_own_session_warnings_are_not_printed():
    """nbgrader's gradebook makes SQLAlchemy warn about nbgrader's own session handling on every
    notebook of a class with several labs per student (``SAWarning: Object of type
    <SubmittedAssignment> not in session``): writing the scores prints none of it, and nothing
    else is silenced."""
    from sqlalchemy.exc import SAWarning

    from grader.build.nbgrader_course import _quiet

    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        with _quiet():
            warnings.warn("Object of type <SubmittedAssignment> not in session, add operation "
                          "along 'Student.submissions' will not proceed", SAWarning, stacklevel=1)
            warnings.warn("a warning of the course's own", UserWarning, stacklevel=1)
    assert [w.category for w in warned] == [UserWarning]


def test_scores_from_a_folder_that_was_not_graded_are_refused(term, tmp_path):
    from grader.build.nbgrader_course import CourseError, write_scores

    before = (term["course"] / "gradebook.db").read_bytes()
    with pytest.raises(CourseError, match="is not a grading folder"):
        write_scores(term["course"], tmp_path / "not-graded")
    with pytest.raises(CourseError, match="is not a folder of submissions"):
        write_scores(term["course"], term["out"], tmp_path / "nowhere")
    assert (term["course"] / "gradebook.db").read_bytes() == before
