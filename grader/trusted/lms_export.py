"""The grades as each LMS imports them: Canvas, Moodle and Gradescope CSV files.

``grades.csv`` is keyed by submission name (the folder or zip a student handed in); an LMS knows
students by its own ids. A **roster** CSV maps one to the other, one row per student::

    submission,name,email,sis_id,canvas_id,section
    ana,"García, Ana",ana@uni.es,A001,1001,Grupo 1

``submission`` is required; the rest as the chosen LMS needs (Canvas: ``canvas_id`` or
``sis_id``; Moodle: ``email`` or ``sis_id``, imported as *ID number*; Gradescope: ``email`` or
``sis_id``, its *SID*). :func:`export` writes ``OUT/export/<lms>.csv`` with the total points
(automatic plus those graded by hand) in one assignment column:

- **Canvas** (Grades > Import): ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``,
  ``Section`` and the assignment, ``Name (id)`` when its Canvas id is given so that Canvas
  updates that assignment; the second row is ``Points Possible``, as in Canvas's own export.
- **Moodle** (Grade administration > Import > CSV file): ``First name``, ``Last name``,
  ``ID number``, ``Email address`` and the grade item; map users by *Email address* or
  *ID number* in the import form, and the column to the grade item.
- **Gradescope** (an assignment's Import scores): ``Name``, ``SID``, ``Email`` and the score.

A flagged submission (the grader could not read it) or a student with no record gets an empty
cell, never a zero, and is listed in what :func:`export` returns; a record that no roster row
names is listed too, and nothing is exported for it.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from grader.trusted.feedback import number
from grader.trusted.gradebook import csv_text, load_records
from grader.trusted.safe_io import atomic_write_text
from grader.trusted.status import is_flagged

ROSTER_COLUMNS = ("submission", "name", "email", "sis_id", "canvas_id", "login_id", "section")
# each LMS an export is written for, and the roster columns it needs (one of them at least)
NEEDS = {"canvas": ("canvas_id", "sis_id"), "moodle": ("email", "sis_id"),
         "gradescope": ("email", "sis_id")}


class ExportError(ValueError):
    """A roster that cannot serve the chosen LMS (bilingual message)."""


@dataclass
class Export:
    path: Path
    rows: int = 0
    left_empty: list[str] = field(default_factory=list)  # flagged or never graded
    not_in_roster: list[str] = field(default_factory=list)


def read_roster(path: Path) -> list[dict[str, str]]:
    """The roster's rows (UTF-8, a spreadsheet's byte-order mark allowed), checked."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise ExportError(f"No se puede leer la lista de clase {path} ({type(error).__name__}) "
                          f"/ cannot read the roster {path}") from None
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip().lower() for h in reader.fieldnames or []]
    if "submission" not in header:
        raise ExportError(f"La lista de clase {path} necesita una columna «submission» con el "
                          f"nombre de cada entrega / the roster {path} needs a 'submission' "
                          "column with each submission's name")
    rows, seen = [], set()
    for raw in reader:
        row = {k.strip().lower(): (v or "").strip() for k, v in raw.items() if k}
        if not row.get("submission"):
            continue
        if row["submission"] in seen:
            raise ExportError(f"La entrega «{row['submission']}» aparece dos veces en la lista "
                              f"de clase / submission '{row['submission']}' is in the roster "
                              "twice")
        seen.add(row["submission"])
        rows.append({c: row.get(c, "") for c in ROSTER_COLUMNS})
    return rows


def _split_name(name: str) -> tuple[str, str]:
    """(first, last) from ``Last, First`` or ``First Last``."""
    if "," in name:
        last, first = (part.strip() for part in name.split(",", 1))
        return first, last
    first, _, last = name.partition(" ")
    return first, last


def _table(lms: str, assignment: str, assignment_id: str, points: float | None,
           students: list[tuple[dict, str]]) -> list[list[str]]:
    if lms == "canvas":
        title = f"{assignment} ({assignment_id})" if assignment_id else assignment
        rows = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", title],
                ["    Points Possible", "", "", "", "", number(points)]]
        rows += [[r["name"], r["canvas_id"], r["sis_id"], r["login_id"], r["section"], score]
                 for r, score in students]
    elif lms == "moodle":
        rows = [["First name", "Last name", "ID number", "Email address", assignment]]
        rows += [[*_split_name(r["name"]), r["sis_id"], r["email"], score]
                 for r, score in students]
    else:
        rows = [["Name", "SID", "Email", assignment]]
        rows += [[r["name"], r["sis_id"], r["email"], score] for r, score in students]
    return rows


def export(out: Path, lms: str, roster_path: Path, assignment: str = "Positional encodings",
           assignment_id: str = "") -> Export:
    """Write ``out/export/<lms>.csv`` from the records in ``out`` and the roster."""
    if lms not in NEEDS:
        raise ExportError(f"--export: {lms}? (canvas, moodle, gradescope)")
    roster = read_roster(roster_path)
    missing = [r["submission"] for r in roster if not any(r[c] for c in NEEDS[lms])]
    if missing:
        wanted = " o ".join(NEEDS[lms])
        raise ExportError(
            f"Para {lms} cada fila de la lista de clase necesita {wanted}; faltan en: "
            f"{', '.join(missing[:10])} / for {lms} every roster row needs "
            f"{' or '.join(NEEDS[lms])}; missing for: {', '.join(missing[:10])}")
    records = {r["student_id"]: r for r in load_records(out)}
    result = Export(out / "export" / f"{lms}.csv")
    students = []
    for row in roster:
        record = records.get(row["submission"])
        usable = record is not None and not is_flagged(record.get("status"))
        if not usable:
            result.left_empty.append(row["submission"])
        students.append((row, number(record.get("total")) if usable else ""))
    named = {r["submission"] for r in roster}
    result.not_in_roster = sorted(set(records) - named)
    points = max((r.get("max_total", 0) for r in records.values()), default=None)
    atomic_write_text(result.path, csv_text(_table(lms, assignment, assignment_id, points,
                                                   students)))
    result.rows = len(students)
    return result


def report(result: Export) -> list[str]:
    """What the instructor should know after an export (both languages)."""
    lines = [f"{result.path}: {result.rows} students / estudiantes"]
    if result.left_empty:
        lines.append("  left empty (flagged or not graded) / en blanco (marcadas o sin "
                     f"corregir): {', '.join(result.left_empty)}")
    if result.not_in_roster:
        lines.append("  graded but not in the roster, not exported / corregidas pero sin fila "
                     f"en la lista de clase, no exportadas: {', '.join(result.not_in_roster)}")
    return lines
