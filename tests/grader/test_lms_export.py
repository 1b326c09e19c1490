"""LMS exports: each file has the columns and id columns its LMS documents for grade imports.

The expected files are written here from each format's documentation: Canvas's gradebook CSV
(``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``, one column per assignment
named ``Name (id)``, and the ``Points Possible`` row of its export), Moodle's CSV grade import
(users matched by *Email address* or *ID number*, one column per grade item) and Gradescope's
score import (``Name``, ``SID``, ``Email`` and the score).
"""

from __future__ import annotations

import csv
import io

import pytest

from grader.cli import main
from grader.trusted import lms_export
from grader.trusted.gradebook import grades_csv, load_records, record_path, spreadsheet_safe
from grader.trusted.safe_io import atomic_write_json

ROSTER = """\
submission,name,email,sis_id,canvas_id,login_id,section
ana,"García Núñez, Ana",ana@uni.es,A001,1001,agarcia,Grupo 1
luis,Luis Pérez,luis@uni.es,A002,1002,lperez,Grupo 2
marta,"Ruiz, Marta",marta@uni.es,A003,1003,mruiz,Grupo 1
pablo,"Sanz, Pablo",pablo@uni.es,A004,1004,psanz,Grupo 2
"""


def write_records(out):
    for student_id, total, status in (("ana", 180.5, "ok"), ("luis", 0.0, "ok"),
                                      ("marta", 0.0, "flagged: unreadable"),
                                      ("zoe", 12.0, "ok")):
        atomic_write_json(record_path(out, student_id), {
            "student_id": student_id, "complete": True, "labs": {}, "messages": [],
            "total": total, "max_total": 224.0, "status": status})


@pytest.fixture
def graded(tmp_path):
    out = tmp_path / "out"
    write_records(out)
    roster = tmp_path / "roster.csv"
    roster.write_text("\ufeff" + ROSTER, encoding="utf-8")  # as a spreadsheet saves it
    return out, roster


def rows(path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_canvas_gradebook_csv(graded):
    out, roster = graded
    result = lms_export.export(out, "canvas", roster, "Lab 17-19", "4321")
    assert rows(result.path) == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab 17-19 (4321)"],
        ["    Points Possible", "", "", "", "", "224"],
        ["García Núñez, Ana", "1001", "A001", "agarcia", "Grupo 1", "180.50"],
        ["Luis Pérez", "1002", "A002", "lperez", "Grupo 2", "0"],
        ["Ruiz, Marta", "1003", "A003", "mruiz", "Grupo 1", ""],
        ["Sanz, Pablo", "1004", "A004", "psanz", "Grupo 2", ""],
    ]
    assert result.left_empty == ["marta", "pablo"] and result.not_in_roster == ["zoe"]
    report = "\n".join(lms_export.report(result))
    assert "marta, pablo" in report and "zoe" in report


def test_moodle_grade_import_csv(graded):
    out, roster = graded
    result = lms_export.export(out, "moodle", roster, "Lab 17-19")
    assert rows(result.path) == [
        ["First name", "Last name", "ID number", "Email address", "Lab 17-19"],
        ["Ana", "García Núñez", "A001", "ana@uni.es", "180.50"],
        ["Luis", "Pérez", "A002", "luis@uni.es", "0"],
        ["Marta", "Ruiz", "A003", "marta@uni.es", ""],
        ["Pablo", "Sanz", "A004", "pablo@uni.es", ""],
    ]


def test_gradescope_scores_csv(graded):
    out, roster = graded
    result = lms_export.export(out, "gradescope", roster, "Lab 17-19")
    assert rows(result.path) == [
        ["Name", "SID", "Email", "Lab 17-19"],
        ["García Núñez, Ana", "A001", "ana@uni.es", "180.50"],
        ["Luis Pérez", "A002", "luis@uni.es", "0"],
        ["Ruiz, Marta", "A003", "marta@uni.es", ""],
        ["Sanz, Pablo", "A004", "pablo@uni.es", ""],
    ]


def test_a_roster_that_cannot_serve_the_lms_is_refused(graded, tmp_path):
    out, _ = graded
    no_ids = tmp_path / "no_ids.csv"
    no_ids.write_text("submission,name\nana,Ana\n", encoding="utf-8")
    with pytest.raises(lms_export.ExportError, match="canvas_id or sis_id"):
        lms_export.export(out, "canvas", no_ids)
    twice = tmp_path / "twice.csv"
    twice.write_text("submission,email\nana,a@x\nana,b@x\n", encoding="utf-8")
    with pytest.raises(lms_export.ExportError, match="twice"):
        lms_export.export(out, "moodle", twice)
    unnamed = tmp_path / "unnamed.csv"
    unnamed.write_text("name,email\nAna,a@x\n", encoding="utf-8")
    with pytest.raises(lms_export.ExportError, match="'submission' column"):
        lms_export.export(out, "gradescope", unnamed)


def test_merge_exports_from_the_command_line(graded, capsys):
    out, roster = graded
    code = main(["merge", "--out", str(out), "--export", "canvas", "--export", "gradescope",
                 "--roster", str(roster), "--assignment", "Lab 17-19"])
    assert code == 0
    assert (out / "export" / "canvas.csv").exists() and (out / "export" / "gradescope.csv").exists()
    assert "left empty" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:  # a usage error, before anything is merged
        main(["merge", "--out", str(out), "--export", "moodle"])
    assert refused.value.code == 2
    assert "--roster" in capsys.readouterr().err


def test_no_cell_can_become_a_formula(tmp_path):
    """OWASP's CSV injection: a cell that a spreadsheet would evaluate starts with ``'``;
    numbers, negative ones too, and ordinary names are written as they are."""
    out = tmp_path / "out"
    for student_id, total in (("=1+1", 3.0), ("-2+3", -2.5), ("eva", 4.0)):
        atomic_write_json(record_path(out, student_id), {
            "student_id": student_id, "complete": True, "labs": {}, "messages": [],
            "total": total, "max_total": 224.0, "status": "ok"})
    roster = tmp_path / "roster.csv"
    roster.write_text('submission,name,email,sis_id,canvas_id,section\n'
                      '=1+1,"=HYPERLINK(""http://x"",""y"")",@x.es,A1,101,+Grupo\n'
                      '-2+3,"Ruiz, Marta",-m@x.es,-7,102,Grupo 1\n'
                      'eva,"Sanz, Eva",eva@x.es,A3,103,Grupo 1\n', encoding="utf-8")
    canvas = rows(lms_export.export(out, "canvas", roster, "-Lab").path)
    assert canvas[0][-1] == "'-Lab"
    assert canvas[2:] == [['\'=HYPERLINK("http://x","y")', "101", "A1", "", "'+Grupo", "3"],
                          ["Ruiz, Marta", "102", "-7", "", "Grupo 1", "-2.50"],
                          ["Sanz, Eva", "103", "A3", "", "Grupo 1", "4"]]
    moodle = rows(lms_export.export(out, "moodle", roster).path)
    assert moodle[1][3] == "'@x.es" and moodle[2][3] == "'-m@x.es"
    grades = list(csv.reader(io.StringIO(grades_csv(load_records(out), []))))
    assert [row[0] for row in grades[2:]] == ["'-2+3", "'=1+1", "eva"]
    assert [row[3] for row in grades[2:]] == ["-2.50", "3", "4"]  # the total, as it is


@pytest.mark.parametrize("cell", ["\t=1+1", "\r=1+1", " =1+1", "\n@A1", "-", "＝1+1"])
def test_blanks_and_lone_signs_before_a_formula_are_neutralised(cell):
    assert spreadsheet_safe(cell) == "'" + cell


@pytest.mark.parametrize("cell", ["-2", "-2.50", "+1", "1e-5", "-.5", "ana", "", 0, -1.5, None])
def test_numbers_and_names_are_left_alone(cell):
    assert spreadsheet_safe(cell) == cell
