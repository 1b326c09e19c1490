"""The gradebook: one JSON record per student, ``grades.csv`` with its maxima, ``run.json``.

Layout of a grading folder ``OUT``::

    OUT/grades.csv                a row of maxima, then one row per submission: student_id,
                                  every item, lab subtotals, auto, manual, total,
                                  manual_pending, gpu_checks, device, status
    OUT/items.csv                 every column's lab, kind (auto / manual / subtotal / total),
                                  points and titles
    OUT/run.json                  settings, shard and student ids of the run
    OUT/records/<student>.json    the full record (the source of everything else)
    OUT/feedback/<student>/       feedback.{es,en}.{md,html}
    OUT/logs/<student>.log        what the sandbox and kernel printed (instructor only)
    OUT/grading.log               the run log

A record is written atomically, and only once the student is completely graded, so a run
interrupted at any point (Ctrl-C, ``kill -9``) leaves whole records or none; the next run skips
students whose record matches their submission and the grading configuration, and grades the
rest. ``grades.csv`` is rebuilt from all records at the end of every run and every merge.

``grades.csv``'s second row (``max_points``) holds every column's maximum; each student has
``auto``, ``manual`` and ``total`` points (the maxima count every item, graded or not, so the
denominator never moves), ``manual_pending`` (written answers not graded yet), ``gpu_checks``,
``device`` and ``status``. ``OUT/run.json`` says with which settings, shard and students the
folder was graded; ``grader.trusted.merging`` checks it before joining folders.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from grader.hidden import registry
from grader.trusted import feedback
from grader.trusted.feedback import number
from grader.trusted.safe_io import atomic_write_json, atomic_write_text
from grader.trusted.status import Gpu, Student
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


def _read_json(path: Path) -> dict | None:
    """The JSON in ``path``, or None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def load_record(out: Path, student_id: str) -> dict | None:
    return _read_json(record_path(out, student_id))


def load_records(out: Path) -> list[dict]:
    """Every complete record in ``out``, by student id (unreadable ones left out)."""
    records = [_read_json(path) for path in sorted((out / "records").glob("*.json"))]
    return sorted((r for r in records if r and r.get("complete")), key=lambda r: r["student_id"])


def save(out: Path, record: dict) -> None:
    """Feedback first, the record last: the record is the mark that the student is done."""
    feedback.write(record, out / "feedback" / safe_id(record["student_id"]))
    atomic_write_json(record_path(out, record["student_id"]), record)


def columns(labs: set[str] | None = None) -> list[dict]:
    """Every column of ``grades.csv`` after ``student_id`` for ``labs`` (default: all), with
    its points and titles."""
    from grader.trusted import nbexec

    cols = []
    for lab_id, checks in registry().items():
        if labs is not None and lab_id not in labs:
            continue
        lab = find_lab(lab_id)
        first = len(cols)
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
                     "points": sum(c["points"] for c in cols[first:]),
                     "title_es": lab.title_es, "title_en": lab.title_en})
    return cols


TOTALS = [("auto", "Puntos automáticos", "Automatic points"),
          ("manual", "Puntos corregidos a mano", "Points graded by hand"),
          ("total", "Total (automáticos + a mano)", "Total (automatic + by hand)")]
TRAILER = ["manual_pending", "gpu_checks", "device", "status"]
MAX_ROW = "max_points"  # the second row of grades.csv: every column's maximum


def _scores(record: dict) -> dict[str, float | None]:
    scores: dict[str, float | None] = {}
    for lab_id, lab in record.get("labs", {}).items():
        for verdict in lab.get("items", []):
            scores[f"{lab_id}/{verdict['key']}"] = verdict.get("score")
        scores[lab_id] = lab.get("score")
    return scores


def student_status(record: dict) -> str:
    """``ok``; ``awaiting manual grading``; or what the run flagged (``problems: ...``)."""
    status = record.get("status", Student.OK)
    if status == Student.OK and record.get("manual_pending"):
        return Student.AWAITING_MANUAL
    return status


def _maxima(cols: list[dict]) -> dict[str, float]:
    """The most points of the automatic columns, the manual ones and both."""
    auto = sum(c["points"] for c in cols if c["kind"] == "auto")
    manual = sum(c["points"] for c in cols if c["kind"] == "manual")
    return {"auto": auto, "manual": manual, "total": auto + manual}


FORMULA_START = tuple("=+-@\t\r\uff1d\uff0b\uff0d\uff20")  # what a spreadsheet may evaluate
PLAIN_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def spreadsheet_safe(cell: object) -> object:
    """``cell`` as a spreadsheet reads it as text: one that starts (after blanks) with ``=``,
    ``+``, ``-``, ``@``, a tab or a carriage return, and is not a plain number, gets a leading
    ``'`` (OWASP's CSV injection); a student id or a roster's name cannot become a formula."""
    if not isinstance(cell, str) or PLAIN_NUMBER.fullmatch(cell):
        return cell
    if cell.startswith(FORMULA_START) or cell.lstrip().startswith(FORMULA_START):
        return "'" + cell
    return cell


def csv_text(rows: list[list]) -> str:
    """``rows`` as CSV text, as every file of the gradebook and the LMS exports writes it
    (each cell :func:`spreadsheet_safe`)."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(
        [spreadsheet_safe(cell) for cell in row] for row in rows)
    return buffer.getvalue()


def grades_csv(records: list[dict], cols: list[dict]) -> str:
    """One row per student after a ``max_points`` row; totals split into automatic and manual."""
    totals = [name for name, _, _ in TOTALS]
    maxima = _maxima(cols)
    rows = [["student_id", *[c["column"] for c in cols], *totals, *TRAILER],
            [MAX_ROW, *[number(c["points"]) for c in cols],
             *[number(maxima[name]) for name in totals], "", "", "", ""]]
    for record in records:
        scores = _scores(record)
        rows.append([record["student_id"], *[number(scores.get(c["column"])) for c in cols],
                     *[number(record.get(name)) for name in totals],
                     record.get("manual_pending", 0), record.get("gpu", Gpu.NONE),
                     record.get("device", "cpu"), student_status(record)])
    return csv_text(rows)


def items_csv(cols: list[dict]) -> str:
    maxima = _maxima(cols)
    return csv_text([["column", "lab", "kind", "points", "title_es", "title_en"],
                     *[[c["column"], c["lab"], c["kind"], number(c["points"]), c["title_es"],
                        c["title_en"]] for c in cols],
                     *[[name, "", "total", number(maxima[name]), es, en]
                       for name, es, en in TOTALS]])


def rebuild(out: Path, *, rewrite_feedback: bool = False) -> list[dict]:
    """Recompute totals, then rewrite ``grades.csv`` and ``items.csv`` (and feedback)."""
    records = load_records(out)
    cols = columns({lab for record in records for lab in record.get("labs", {})} or None)
    for record in records:
        recompute_totals(record)
        if rewrite_feedback:
            save(out, record)
    atomic_write_text(out / "grades.csv", grades_csv(records, cols))
    atomic_write_text(out / "items.csv", items_csv(cols))
    return records


def recompute_totals(record: dict) -> None:
    """Per lab and in all: automatic and manual points, their maxima (every item, graded or
    not, so the denominator never moves), the total and the written answers still to grade."""
    sums = dict.fromkeys(("auto", "auto_max", "manual", "manual_max"), 0.0)
    pending = 0
    for lab in record.get("labs", {}).values():
        part = dict.fromkeys(sums, 0.0)
        for verdict in lab.get("items", []):
            kind = "manual" if verdict.get("kind") == "manual" else "auto"
            part[kind] += verdict.get("score") or 0.0
            part[f"{kind}_max"] += verdict["points"]
            pending += kind == "manual" and verdict.get("score") is None
        lab.update({key: round(value, 2) for key, value in part.items()})
        lab["score"] = round(part["auto"] + part["manual"], 2)
        lab["max"] = part["auto_max"] + part["manual_max"]
        for key in sums:
            sums[key] += part[key]
    record.update({key: round(value, 2) for key, value in sums.items()})
    record["total"] = round(sums["auto"] + sums["manual"], 2)
    record["max_total"] = sums["auto_max"] + sums["manual_max"]
    record["manual_pending"] = pending


def write_run(out: Path, run: dict) -> None:
    """``OUT/run.json``: the settings, shard and students of the last run into ``out``."""
    atomic_write_json(out / "run.json", run)


def load_run(out: Path) -> dict | None:
    return _read_json(out / "run.json")
