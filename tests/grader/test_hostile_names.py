"""Names a submission chooses, graded in the same run as honest classmates: its own (a formula
for a spreadsheet, a line break that would forge a line of ``grading.log``) and its members'
(one file written twice, the second time spelt another way: ``src//``, ``./``, another case,
another Unicode form). The honest rows must be byte-identical to those graded alone; no cell of
``grades.csv`` is a formula; no log line is forged; a file written twice is flagged and graded
from the copy extracting the archive keeps.
"""

from __future__ import annotations

import csv
import io
import re
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import TEST_LIMITS
from grader_corpus import REFERENCE, ZEROS_FORWARD, ZEROS_PE, Entry, module_score, stub_with

from grader.trusted.gradebook import PLAIN_NUMBER
from grader.trusted.grading import Options, grade

pytestmark = pytest.mark.slow

MODULE = "src/minimodel/positional/sinusoidal.py"
ZEROS = stub_with(ZEROS_PE, ZEROS_FORWARD)
FORMULAS = ['=HYPERLINK("x";"y")', "+SUM(1,2)", "-2+3+cmd|' -C calc'!A0", "@SUM(A1)"]
FORGED = "  flagged: z_honest: plagiarism"  # what a line break in an id would add to the log
FORGERS = [f"x_graded\n{FORGED}", f"x_flagged\n{FORGED}"]


def honest() -> list[Entry]:
    return [Entry("z_honest", REFERENCE), Entry("z_honest_zeros", ZEROS)]


def honest_archives(folder: Path) -> None:
    """A tar made with ``tar -cf z_honest_tar.tar .``: every name starts with ``./``."""
    _tar(folder / "z_honest_tar.tar", [(f"./{MODULE}", REFERENCE), ("./README.md", "notes")])


def named() -> list[Entry]:
    return [*(Entry(name, ZEROS) for name in [*FORMULAS, FORGERS[0]]),
            Entry(FORGERS[1], extra={"notes.txt": b"nothing of the course"})]  # flagged


def _tar(path: Path, members: list[tuple[str, str]]) -> None:
    with tarfile.open(path, "w") as archive:
        for name, text in members:
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            archive.addfile(info, io.BytesIO(text.encode()))


def _zip(path: Path, members: list[tuple[str, str]]) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members:
            archive.writestr(name, text)


# The reference first, the stub's zeros last: extracting leaves the zeros.
TWICE = {
    "twice_slash.tar": (_tar, [(f"repo/{MODULE.replace('/', '//', 1)}", REFERENCE),
                               (f"repo/{MODULE}", ZEROS)]),
    "twice_dot.zip": (_zip, [(f"repo/./{MODULE}", REFERENCE), (f"repo/{MODULE}", ZEROS)]),
    "twice_case.zip": (_zip, [(f"repo/{MODULE}", REFERENCE),
                              (f"repo/{MODULE.replace('sinusoidal', 'Sinusoidal')}", ZEROS)]),
    "twice_nfc.tar": (_tar, [(f"cafe\u0301/{MODULE}", REFERENCE), (f"caf\u00e9/{MODULE}", ZEROS)]),
}


def archives(folder: Path) -> None:
    honest_archives(folder)
    for name, (write, members) in TWICE.items():
        write(folder / name, members)


def graded(folder: Path, entries: list[Entry], extra) -> dict:
    subs = folder / "subs"
    subs.mkdir(parents=True)
    for entry in entries:
        entry.build(subs)
    extra(subs)
    summary = grade(subs, folder / "out", Options(workers=2, labs=["17.01"], limits=TEST_LIMITS,
                                                  progress=False), stream=io.StringIO())
    out = folder / "out"
    text = (out / "grades.csv").read_text(encoding="utf-8")
    return {"summary": summary, "out": out, "text": text,
            "log": (out / "grading.log").read_text(encoding="utf-8"),
            "records": {r["student_id"]: r for r in summary["records"]},
            "rows": {line.split(",", 1)[0]: line for line in text.splitlines()}}


@pytest.fixture(scope="module")
def runs(tmp_path_factory, capabilities):
    if not capabilities.namespaces:
        pytest.skip("this platform cannot isolate the sandbox (needs root and namespaces)")
    root = tmp_path_factory.mktemp("hostile-names")
    alone = graded(root / "alone", honest(), honest_archives)
    mixed = graded(root / "mixed", honest() + named(), archives)
    return {"alone": alone, "mixed": mixed}


def test_the_run_finishes_and_honest_rows_are_as_graded_alone(runs):
    mixed = runs["mixed"]
    assert mixed["summary"]["failed"] == []
    assert len(mixed["records"]) == len(honest()) + len(named()) + 1 + len(TWICE)
    for name in ("z_honest", "z_honest_zeros", "z_honest_tar"):
        assert mixed["rows"][name] == runs["alone"]["rows"][name]
    assert module_score(mixed["records"]["z_honest_tar"]) == 9
    assert mixed["records"]["z_honest_tar"]["status"] == "ok"  # ./ is no second copy


def test_no_cell_of_the_gradebook_is_a_formula(runs):
    rows = list(csv.reader(io.StringIO(runs["mixed"]["text"])))
    ids = [row[0] for row in rows[2:]]
    for name in FORMULAS:
        assert "'" + name in ids
    for cell in (cell for row in rows for cell in row):
        assert not cell.lstrip().startswith(("=", "+", "-", "@", "\t", "\r")) \
            or PLAIN_NUMBER.fullmatch(cell), cell
    for name in FORMULAS:  # graded as what they handed in: the stub's zeros
        assert module_score(runs["mixed"]["records"][name]) == 1


def test_an_id_cannot_forge_a_line_of_the_log(runs):
    log = runs["mixed"]["log"]
    assert not re.search(r"^\s*flagged: z_honest", log, re.MULTILINE), log
    ids = [i for i in runs["mixed"]["records"] if i.startswith("x_")]
    assert len(ids) == 2 and all("\n" not in i and "\\x0a" in i for i in ids), ids
    assert all(i in log for i in ids)  # said, escaped


@pytest.mark.parametrize("name", sorted(TWICE))
def test_a_file_twice_under_two_spellings_is_flagged_and_graded_as_extracted(runs, name):
    records = runs["mixed"]["records"]
    record = records[name.split(".")[0]]
    assert record["status"] == "flagged: duplicate-entry"
    assert module_score(record) == module_score(records["z_honest_zeros"]) == 1
