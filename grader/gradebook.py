"""The gradebook: one JSON record per student, ``grades.csv`` for the LMS, merging.

Layout of a grading folder ``OUT``::

    OUT/grades.csv                one row per submission: student_id, every item, lab subtotals,
                                  total, gpu_checks (passed / failed / not run / n/a), status
    OUT/items.csv                 every column's lab, kind (auto / manual), points and titles
    OUT/records/<student>.json    the full record (the source of everything else)
    OUT/feedback/<student>/       feedback.{es,en}.{md,html}
    OUT/logs/<student>.log        what the sandbox and kernel printed (instructor only)
    OUT/grading.log               the run log

A record is written atomically, and only once the student is completely graded, so a run
interrupted at any point (Ctrl-C, ``kill -9``) leaves whole records or none; the next run skips
students whose record matches their submission and the grading configuration, and grades the
rest. ``grades.csv`` is rebuilt from all records at the end of every run and every merge.

Merging: ``merge`` copies the records of several grading folders (one per shard of a split
class) into one and rebuilds the CSV and feedback; ``--manual gradebook.db`` takes the scores of
the written answers graded by hand in nbgrader's formgrader and puts them in the manual columns.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

from grader import feedback
from grader.hidden import registry
from grader.safe_io import atomic_write_json, atomic_write_text
from minimodel.course import find_lab


def safe_id(student_id: str) -> str:
    """A file-name form of a student id (unchanged when already safe)."""
    clean = re.sub(r"[^A-Za-z0-9._@+-]", "_", student_id).strip(".") or "_"
    if clean != student_id:
        import hashlib

        clean = f"{clean[:60]}-{hashlib.sha256(student_id.encode()).hexdigest()[:8]}"
    return clean[:100]


def record_path(out: Path, student_id: str) -> Path:
    return out / "records" / f"{safe_id(student_id)}.json"


def load_record(out: Path, student_id: str) -> dict | None:
    path = record_path(out, student_id)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def load_records(out: Path) -> list[dict]:
    records = []
    folder = out / "records"
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if record.get("complete"):
            records.append(record)
    return sorted(records, key=lambda r: r["student_id"])


def save(out: Path, record: dict) -> None:
    """Feedback first, the record last: the record is the mark that the student is done."""
    feedback.write(record, out / "feedback" / safe_id(record["student_id"]))
    atomic_write_json(record_path(out, record["student_id"]), record)


def columns() -> list[dict]:
    """Every column of ``grades.csv`` after ``student_id``, with its points and titles."""
    from grader import nbexec

    cols = []
    for lab_id, checks in registry().items():
        lab = find_lab(lab_id)
        for item in checks.items:
            cols.append({"column": f"{lab_id}/{item.key}", "lab": lab_id, "kind": "auto",
                         "points": item.points, "title_es": item.title_es,
                         "title_en": item.title_en})
        if checks.notebook:
            graded = nbexec.graded_cells(nbexec.source_notebook(checks.notebook.slug))
            for grade_id, info in graded.items():
                es, en = checks.notebook.title(grade_id)
                cols.append({"column": f"{lab_id}/nb/{grade_id}", "lab": lab_id,
                             "kind": info["kind"], "points": info["points"],
                             "title_es": es, "title_en": en})
        cols.append({"column": lab_id, "lab": lab_id, "kind": "subtotal",
                     "points": None, "title_es": lab.title_es, "title_en": lab.title_en})
    return cols


def _scores(record: dict) -> dict[str, float | None]:
    scores: dict[str, float | None] = {}
    for lab_id, lab in record.get("labs", {}).items():
        for verdict in lab.get("items", []):
            scores[f"{lab_id}/{verdict['key']}"] = verdict.get("score")
        scores[lab_id] = lab.get("score")
    return scores


def _cell(value) -> str:
    if value is None:
        return ""
    return f"{value:g}" if float(value).is_integer() else f"{value:.2f}"


def grades_csv(records: list[dict], cols: list[dict] | None = None) -> str:
    cols = cols if cols is not None else columns()
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student_id", *[c["column"] for c in cols], "total", "gpu_checks",
                     "status"])
    for record in records:
        scores = _scores(record)
        writer.writerow([record["student_id"], *[_cell(scores.get(c["column"])) for c in cols],
                         _cell(record.get("total")), record.get("gpu", "n/a"),
                         record.get("status", "ok")])
    return buffer.getvalue()


def items_csv(cols: list[dict] | None = None) -> str:
    cols = cols if cols is not None else columns()
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["column", "lab", "kind", "points", "title_es", "title_en"])
    for c in cols:
        writer.writerow([c["column"], c["lab"], c["kind"], _cell(c["points"]), c["title_es"],
                         c["title_en"]])
    return buffer.getvalue()


def rebuild(out: Path, *, rewrite_feedback: bool = False) -> list[dict]:
    """Recompute totals, then rewrite ``grades.csv`` and ``items.csv`` (and feedback)."""
    records = load_records(out)
    cols = columns()
    for record in records:
        recompute_totals(record)
        if rewrite_feedback:
            save(out, record)
    atomic_write_text(out / "grades.csv", grades_csv(records, cols))
    atomic_write_text(out / "items.csv", items_csv(cols))
    return records


def recompute_totals(record: dict) -> None:
    total = max_total = 0.0
    for lab in record.get("labs", {}).values():
        score = sum(v.get("score") or 0.0 for v in lab.get("items", []))
        top = sum(v["points"] for v in lab.get("items", []) if v.get("kind") != "manual")
        manual = sum(v["points"] for v in lab.get("items", []) if v.get("kind") == "manual")
        graded_manual = sum(v["points"] for v in lab.get("items", [])
                            if v.get("kind") == "manual" and v.get("score") is not None)
        lab["score"], lab["max"] = round(score, 2), top + graded_manual
        lab["manual_max"] = manual
        total += score
        max_total += top + graded_manual
    record["total"], record["max_total"] = round(total, 2), max_total


def merge(sources: list[Path], out: Path) -> int:
    """Copy every complete record of ``sources`` into ``out``; rebuild. Returns the count."""
    count = 0
    for source in sources:
        for record in load_records(source):
            target = record_path(out, record["student_id"])
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_json(target, record)
            count += 1
            log_file = source / "logs" / f"{safe_id(record['student_id'])}.log"
            if log_file.exists():
                (out / "logs").mkdir(parents=True, exist_ok=True)
                shutil.copy2(log_file, out / "logs" / log_file.name)
    rebuild(out, rewrite_feedback=True)
    return count


def merge_manual(out: Path, db: Path) -> int:
    """Put the formgrader scores of the written answers into the records; rebuild.

    ``db`` is nbgrader's ``gradebook.db``. The nbgrader student id must be the submission's
    ``student_id``; the assignment and notebook are the lab's slug. Returns how many scores were
    taken.
    """
    import os
    import sys

    from nbgrader.api import Gradebook, MissingEntry

    # nbgrader runs the `alembic` executable next to this Python: make it findable.
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")
    taken = 0
    records = load_records(out)
    checks_by_lab = registry()
    with Gradebook(f"sqlite:///{db}") as gradebook:
        for record in records:
            for lab_id, lab in record.get("labs", {}).items():
                checks = checks_by_lab.get(lab_id)
                if not checks or not checks.notebook:
                    continue
                slug = checks.notebook.slug
                try:
                    notebook = gradebook.find_submission_notebook(slug, slug,
                                                                  record["student_id"])
                except MissingEntry:
                    continue
                manual = {g.name: g for g in notebook.grades}
                for verdict in lab.get("items", []):
                    if verdict.get("kind") != "manual":
                        continue
                    grade = manual.get(verdict["key"].removeprefix("nb/"))
                    if grade is not None and grade.manual_score is not None:
                        verdict["score"] = float(grade.manual_score)
                        verdict["status"] = "graded"
                        taken += 1
            recompute_totals(record)
            atomic_write_json(record_path(out, record["student_id"]), record)
    rebuild(out, rewrite_feedback=True)
    return taken
