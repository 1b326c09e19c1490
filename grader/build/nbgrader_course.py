"""An nbgrader course for the labs whose automatic points come from this grader, not from nbgrader.

``minimodel-grader nbgrader-course COURSE`` writes the course folder nbgrader expects::

    COURSE/nbgrader_config.py              course id, the course's stubs, Autograde refused
    COURSE/source/<slug>/<slug>.ipynb      each lab's notebook with its solutions (instructors)
    COURSE/release/<slug>/<slug>.ipynb     what students get (``nbgrader generate_assignment``)
    COURSE/gradebook.db                    the assignments, notebooks and graded cells

From there nbgrader works as usual: ``release_assignment``, ``collect``, formgrader's manual
grading, ``generate_feedback`` / ``release_feedback``. What nbgrader must not do is run student
code itself: its Autograde (command or formgrader button) would run it outside the sandbox and,
with execution disabled, give untouched stubs the points of every test cell that raises nothing.
So the course's config replaces Autograde's steps with ``RefuseAutograde``, which stops with
a message that says what to run instead (``grader/build/nbgrader_refusal.py``).

``minimodel-grader grade COURSE/submitted --out OUT`` grades nbgrader's layout
(``submitted/<student>/<slug>/<slug>.ipynb``), and then
``minimodel-grader nbgrader-course COURSE --scores OUT`` (:func:`write_scores`) puts this
grader's score of every auto-graded cell into ``gradebook.db`` and the submitted notebooks into
``autograded/`` (where formgrader and ``generate_feedback`` read them), so that formgrader,
``nbgrader export`` and nbgrader's feedback show the real points. Written answers are graded in
formgrader; ``merge --manual COURSE/gradebook.db`` brings them back into ``OUT``.
"""

from __future__ import annotations

import contextlib
import datetime
import shutil
import warnings
from pathlib import Path

import nbformat

from grader.build import notebooks
from grader.hidden import chosen
from grader.trusted import nbexec
from grader.trusted.gradebook import load_records, load_run, rebuild, record_path
from grader.trusted.safe_io import atomic_write_json
from grader.trusted.status import Item
from minimodel.messages import bilingual

COURSE_ID = "minimodel-positional"
CONFIG = f'''"""The nbgrader course of the labs (written by `minimodel-grader nbgrader-course`)."""

c = get_config()  # noqa: F821 - provided by nbgrader
c.CourseDirectory.course_id = "{COURSE_ID}"
c.ClearSolutions.code_stub = {{"python": {notebooks.CODE_STUB!r}}}
c.ClearSolutions.text_stub = {notebooks.TEXT_STUB!r}
# Student code runs only in minimodel-grader's sandbox: nbgrader's Autograde is refused.
c.Autograde.sanitize_preprocessors = ["grader.build.nbgrader_refusal.RefuseAutograde"]
c.Autograde.autograde_preprocessors = ["grader.build.nbgrader_refusal.RefuseAutograde"]
'''
@contextlib.contextmanager
def _quiet():
    """nbgrader's gradebook, without the warnings SQLAlchemy prints about nbgrader's own session
    handling (``SAWarning: Object of type <SubmittedAssignment> not in session``): they say
    nothing about this course's scores, which are written all the same."""
    from sqlalchemy.exc import SAWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=SAWarning, message="Object of type")
        yield


class CourseError(ValueError):
    """The course folder cannot be written or read; the message says why, in both languages."""


def _labs(labs: list[str] | None) -> dict[str, str]:
    """lab id -> notebook slug, for the labs with an auto-graded notebook."""
    picked = chosen(labs)
    found = {lab_id: checks.notebook.slug for lab_id, checks in picked.items() if checks.notebook}
    unknown = sorted(set(picked) - set(found)) if labs else []
    if unknown:
        raise CourseError(bilingual(f"No hay cuaderno calificado para: {', '.join(unknown)}.",
                                    f"No graded notebook for: {', '.join(unknown)}."))
    return found


def _write_once(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, refusing to replace a file an instructor changed."""
    if path.exists() and path.read_text(encoding="utf-8") != text:
        raise CourseError(bilingual(
            f"{path} ya existe y es distinto del que escribiría; no lo sustituyo. Muévelo o "
            "bórralo si quieres regenerarlo.",
            f"{path} already exists and differs from what would be written; it is not "
            "replaced. Move or delete it to regenerate it."))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _notebook_labs(record: dict, slugs: dict[str, str]) -> list[tuple[dict, str]]:
    """(lab record, notebook slug) for each lab of a student's record with a graded notebook."""
    return [(lab, slugs[lab_id]) for lab_id, lab in record.get("labs", {}).items()
            if lab_id in slugs]


def _cells(lab: dict, notebook) -> list[tuple]:
    """(nbgrader grade, this grader's verdict) for each graded cell of ``notebook`` (an nbgrader
    submission notebook) that the lab record ``lab`` has a verdict for."""
    grades = {grade.name: grade for grade in notebook.grades}
    return [(grades[verdict["key"].removeprefix("nb/")], verdict)
            for verdict in lab.get("items", []) if verdict["key"].startswith("nb/")
            and verdict["key"].removeprefix("nb/") in grades]


def write_course(course: Path, labs: list[str] | None = None) -> list[str]:
    """Write the course folder for ``labs`` (default: every lab with a graded notebook) and run
    ``generate_assignment`` for each; returns the assignment ids (the notebooks' slugs)."""
    slugs = _labs(labs)
    course = course.resolve()
    _write_once(course / "nbgrader_config.py", CONFIG)
    for slug in slugs.values():
        source = nbexec.source_notebook(slug)
        _write_once(course / "source" / slug / f"{slug}.ipynb",
                    nbformat.writes(source, version=4) + "\n")
    api = notebooks.nbgrader_api(course, course_id=COURSE_ID)
    for slug in slugs.values():
        result = api.generate_assignment(slug, force=True)
        if not result["success"]:
            raise CourseError(f"nbgrader generate_assignment {slug}:\n{result['log']}")
    return list(slugs.values())


def collect_from(course: Path, submissions: Path, slugs: list[str]) -> int:
    """Put the lab notebooks of repository submissions (folders or zips, as ``grade`` takes
    them) into ``COURSE/submitted/<student>/<slug>/``, as ``nbgrader collect`` would, so that
    formgrader can show them; a notebook already there is never replaced. Returns how many."""
    from grader.trusted.unpack import discover, unpack

    placed = 0
    for student, path in discover(submissions):
        submission = unpack(student, path)
        for slug in slugs:
            data = submission.notebook(slug)
            folder = course / "submitted" / student / slug
            if data is None or (folder / f"{slug}.ipynb").exists():
                continue
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{slug}.ipynb").write_bytes(data)
            when = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.UTC)
            (folder / "timestamp.txt").write_text(when.strftime("%Y-%m-%d %H:%M:%S.%f %Z\n"))
            placed += 1
    return placed


def write_scores(course: Path, out: Path, submissions: Path | None = None) -> int:
    """Put the scores of ``OUT`` into the course's ``gradebook.db`` and copy each graded
    submission into ``autograded/``; returns how many notebooks were updated.

    ``submissions``: the repository submissions ``OUT`` was graded from; their notebooks are
    first placed in ``submitted/`` (:func:`collect_from`) for the students nbgrader did not
    collect. For every student of ``OUT`` with a notebook in
    ``COURSE/submitted/<student>/<slug>/``: the submission is created in the gradebook if needed
    (with its ``timestamp.txt``), each auto-graded cell gets this grader's score as nbgrader's
    automatic score, and each written answer is marked as needing manual grading until someone
    grades it in formgrader.
    """
    from nbgrader.api import Gradebook, MissingEntry
    from nbgrader.coursedir import CourseDirectory

    course = course.resolve()
    db = course / "gradebook.db"
    if not db.is_file():
        raise CourseError(bilingual(
            f"{course} no es un curso de nbgrader (falta gradebook.db); créalo con "
            "`minimodel-grader nbgrader-course`.",
            f"{course} is not an nbgrader course (no gradebook.db); write it with "
            "`minimodel-grader nbgrader-course`."))
    if load_run(out) is None:
        raise CourseError(bilingual(
            f"{out} no es una carpeta de corrección (falta run.json): califica antes en ella con "
            "`minimodel-grader grade`.",
            f"{out} is not a grading folder (no run.json): grade into it first with "
            "`minimodel-grader grade`."))
    if submissions is not None and not submissions.is_dir():
        raise CourseError(bilingual(f"{submissions} no es una carpeta de entregas.",
                                    f"{submissions} is not a folder of submissions."))
    notebooks.nbgrader_on_path()
    coursedir = CourseDirectory(root=str(course))
    labs = _labs(None)
    if submissions is not None:
        collect_from(course, submissions.resolve(), list(labs.values()))
    updated = 0
    with _quiet(), Gradebook(f"sqlite:///{db}", COURSE_ID) as gradebook:
        for record in load_records(out):
            student = record["student_id"]
            for lab, slug in _notebook_labs(record, labs):
                submitted = course / "submitted" / student / slug
                if not (submitted / f"{slug}.ipynb").is_file():
                    continue
                try:
                    gradebook.find_assignment(slug)
                except MissingEntry:
                    continue
                gradebook.update_or_create_student(student)
                timestamp = coursedir.get_existing_timestamp(str(submitted))
                gradebook.update_or_create_submission(
                    slug, student, **({"timestamp": timestamp} if timestamp else {}))
                notebook = gradebook.find_submission_notebook(slug, slug, student)
                for grade, verdict in _cells(lab, notebook):
                    if verdict.get("kind") == "manual":
                        grade.auto_score = None
                        grade.needs_manual_grade = grade.manual_score is None
                    else:
                        grade.auto_score = float(verdict.get("score") or 0.0)
                        grade.needs_manual_grade = False
                gradebook.db.commit()
                target = course / "autograded" / student / slug
                if target.exists():
                    shutil.rmtree(target)
                shutil.copytree(submitted, target)
                updated += 1
    return updated


def merge_manual(out: Path, db: Path) -> int:
    """Put the formgrader scores into the records; rebuild (totals and feedback). Returns how
    many were taken.

    ``db`` is nbgrader's ``gradebook.db``. The nbgrader student id must be the submission's
    ``student_id``; the assignment and notebook are the lab's slug. A written answer takes its
    manual score; an auto-graded cell takes a manual score only when an instructor typed one
    over it in formgrader (it is then marked as graded by hand).
    """
    from nbgrader.api import Gradebook, MissingEntry

    if not db.is_file():
        raise CourseError(bilingual(f"No encuentro {db} (el gradebook.db del curso de nbgrader).",
                                    f"{db} not found (the nbgrader course's gradebook.db)."))
    notebooks.nbgrader_on_path()
    taken = 0
    slugs = _labs(None)
    with _quiet(), Gradebook(f"sqlite:///{db}") as gradebook:
        for record in load_records(out):
            for lab, slug in _notebook_labs(record, slugs):
                try:
                    notebook = gradebook.find_submission_notebook(slug, slug,
                                                                  record["student_id"])
                except MissingEntry:
                    continue
                for grade, verdict in _cells(lab, notebook):
                    if grade.manual_score is None:
                        continue
                    verdict["score"] = float(grade.manual_score)
                    verdict["status"] = Item.GRADED
                    taken += 1
            atomic_write_json(record_path(out, record["student_id"]), record)
    rebuild(out, rewrite_feedback=True)
    return taken
