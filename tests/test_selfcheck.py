"""`minimodel check` never crashes on a broken student file and says what is wrong, per function."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from selfcheck_copies import released_stubs, statuses

from minimodel.course import find_lab
from minimodel.implementation import REFERENCE_DIR
from minimodel.selfcheck.runner import run_checks

LAB = find_lab("17.01")


def student_copy(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the reference with one edit, as a student's folder."""
    folder = tmp_path / "student"
    folder.mkdir()
    text = (REFERENCE_DIR / "sinusoidal.py").read_text()
    assert old in text
    (folder / "sinusoidal.py").write_text(text.replace(old, new, 1))
    return folder


def test_untouched_stubs_are_all_not_implemented(tmp_path):
    results = run_checks(LAB, str(released_stubs(tmp_path)))
    assert set(statuses(results).values()) == {"todo"}
    assert "Falta implementar sinusoidal_pe" in results[0].detail_es
    assert "sinusoidal_pe is not implemented yet" in results[0].detail_en


def test_syntax_error_is_reported_not_raised(tmp_path):
    folder = student_copy(tmp_path, "return pe\n", "return pe)\n")
    results = run_checks(LAB, str(folder))
    assert set(statuses(results).values()) == {"error"}
    assert "sintaxis" in results[0].detail_es and "syntax error" in results[0].detail_en


def test_infinite_loop_names_the_function_and_skips_the_rest_of_its_file(tmp_path):
    folder = student_copy(
        tmp_path,
        "    ### BEGIN SOLUTION\n",
        "    ### BEGIN SOLUTION\n    while T == 50:\n        pass\n",
    )
    results = run_checks(LAB, str(folder), timeout=3)
    found = statuses(results)
    names = list(found)
    hung = names.index("table_values")
    assert found["table_values"] == "timeout"
    assert {found[name] for name in names[:hung]} == {"pass"}
    assert {found[name] for name in names[hung + 1 :]} == {"skipped"}
    detail = results[hung]
    assert "sinusoidal_pe" in detail.detail_es and "sinusoidal.py, línea" in detail.detail_es
    assert "sinusoidal.py, line" in detail.detail_en and "while T == 50" in detail.detail_en


def test_exit_in_student_code_costs_only_those_checks(tmp_path):
    folder = student_copy(tmp_path, "return x + rows", "import os; os._exit(3)")
    found = statuses(run_checks(LAB, str(folder)))
    assert {found[name] for name in ("module_adds_rows", "module_offset", "module_dtype")} == {
        "error"
    }
    assert found["table_values"] == "pass"


@pytest.mark.parametrize(
    ("lang", "word"), [("es", "comprobaciones superadas"), ("en", "checks passed")]
)
def test_command_reports_in_the_students_language(lang, word, tmp_path):
    env = {**os.environ, "MINIMODEL_LANG": lang}
    stubs = str(released_stubs(tmp_path))
    out = subprocess.run(
        [sys.executable, "-m", "minimodel.cli", "check", "17.01", "--impl", stubs],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1 and word in out.stdout and "sinusoidal_pe" in out.stdout


def test_command_without_a_lab_says_how_and_lists_the_labs():
    out = subprocess.run([sys.executable, "-m", "minimodel.cli", "check", "--lang", "en"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "make check LAB=17.01" in out.stdout
    assert "17.03  RoPE" in out.stdout and "19.02" in out.stdout


def test_command_exits_zero_when_all_pass():
    out = subprocess.run(
        [sys.executable, "-m", "minimodel.cli", "check", "17.01", "--impl", "reference"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"(?s)\[es\].*\[en\]"):
        run_checks(LAB, str(tmp_path / "nowhere"))


def summary_lines(folder: Path, statuses_by_lab: dict[str, list[str]]) -> dict[str, str]:
    """The line ``make test`` writes for each lab of ``statuses_by_lab`` (lab id -> the statuses
    of its checks), in the order of the course, with the implementation ``folder``."""
    import io

    from minimodel.selfcheck.command import Report, lab_line
    from minimodel.selfcheck.compare import Check
    from minimodel.selfcheck.runner import Result

    out = io.StringIO()
    report, states = Report("es", out), {}
    for lab_id, said in statuses_by_lab.items():
        check = Check("c", "f", "una comprobación", "a check", run=lambda: None)
        results = [Result(check, status, "detalle", "detail") for status in said]
        states[lab_id] = lab_line(report, find_lab(lab_id), results, folder, states)
    lines = [line.split(maxsplit=2) for line in out.getvalue().splitlines()]
    return {words[1]: " ".join(words) for words in lines
            if len(words) == 3 and words[1] in statuses_by_lab}


def test_a_failing_lab_is_still_needed_first(tmp_path):
    """With 17.03 written but failing, 18.02 (which runs it) says it needs 17.03 first, as it
    does when 17.03 is not started; 19.01, with no file of its own, is not started although its
    checks of 17.01's code pass."""
    folder = tmp_path / "student"
    shutil.copytree(REFERENCE_DIR, folder)
    lines = summary_lines(folder, {"17.01": ["pass"], "17.02": ["todo"], "17.03": ["fail"],
                                   "17.04": ["todo"], "17.05": ["todo"], "18.02": ["todo"],
                                   "19.01": ["pass"] * 4 + ["todo"] * 11})
    assert lines["18.02"].endswith("sin empezar (necesita antes 17.03)"), lines["18.02"]
    assert lines["19.01"].endswith("sin empezar (necesita antes 17.02, 17.03, 17.04, 17.05)"), \
        lines["19.01"]
    assert "empezado" not in lines["19.01"]
