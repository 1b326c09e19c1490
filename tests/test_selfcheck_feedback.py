"""`minimodel check` as a student runs it: the report arrives while the checks run, in one
language at a time, names the place in the student's code, and never ends in a traceback."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from selfcheck_copies import TIMEOUT, diagnose, student_copy

HANG = ("    ### BEGIN SOLUTION\n", "    ### BEGIN SOLUTION\n    while T == 50:\n        pass\n")


def check_command(*args: str, lang: str = "es") -> subprocess.Popen:
    env = {**os.environ, "MINIMODEL_LANG": lang, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "minimodel.cli", "check", "17.01", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def student_folder(tmp_path, *edits):
    return str(student_copy(tmp_path, "sinusoidal", *edits))


def test_header_and_checks_are_printed_while_the_checks_run(tmp_path):
    folder = student_folder(tmp_path, HANG)
    command = check_command("--impl", folder, "--timeout", "30")
    try:
        header = command.stdout.readline()
        assert "Laboratorio 17.01" in header
        lines = [command.stdout.readline() for _ in range(4)]  # folder, blank, target, 1st check
        assert "✔" in lines[-1]
        assert command.poll() is None  # still on the check that hangs
        hanging = children(command.pid)
    finally:
        command.kill()
        command.communicate()
    assert hanging, "the checks run in a child process"
    deadline = time.monotonic() + 60
    while any(Path(f"/proc/{pid}").exists() for pid in hanging) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in hanging if Path(f"/proc/{pid}").exists()], \
        "a killed self-check leaves no infinite loop running"


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux's /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_ctrl_c_is_a_short_bilingual_message(tmp_path):
    folder = student_folder(tmp_path, HANG)
    command = check_command("--impl", folder, "--timeout", "60")
    assert "17.01" in command.stdout.readline()
    command.send_signal(signal.SIGINT)
    out, err = command.communicate(timeout=60)
    assert command.returncode == 130
    assert "[es] Interrumpido (Ctrl-C)." in err and "[en] Interrupted (Ctrl-C)." in err
    assert "Traceback" not in err


def test_a_lab_typo_lists_the_labs():
    out = subprocess.run(
        [sys.executable, "-m", "minimodel.cli", "check", "17.1"], capture_output=True, text=True
    )
    assert out.returncode == 2
    assert "Traceback" not in out.stderr and "\\n" not in out.stderr
    assert "[es] No hay un laboratorio '17.1'" in out.stderr and "17.01, 17.02" in out.stderr
    assert "[en] There is no lab '17.1'" in out.stderr


@pytest.mark.parametrize(
    ("lang", "said", "unsaid"), [("es", "línea", "line"), ("en", "line", "línea")]
)
def test_a_syntax_error_is_said_once_in_one_language(tmp_path, lang, said, unsaid):
    folder = student_folder(tmp_path, ("return pe\n", "return pe)\n"))
    out, _ = check_command("--impl", folder, "--lang", lang, lang="es").communicate(timeout=300)
    syntax = "sintaxis" if lang == "es" else "syntax error"
    assert out.count(syntax) == 1, out
    assert f"sinusoidal.py, {said}" in out and f"sinusoidal.py, {unsaid}" not in out


def test_an_exception_names_the_file_and_line_in_the_students_code(tmp_path):
    results = diagnose(tmp_path, "17.01", "sinusoidal", ("return pe\n", "return pe[None][5]\n"))
    detail = results["table_values"]
    assert detail.status == "error"
    assert "IndexError" in detail.detail_en
    assert "In sinusoidal_pe (sinusoidal.py, line" in detail.detail_en
    assert "return pe[None][5]" in detail.detail_en
    assert "En sinusoidal_pe (sinusoidal.py, línea" in detail.detail_es


@pytest.mark.parametrize(("lang", "word"), [("es", "Nota:"), ("en", "Note:")])
def test_lang_option_chooses_the_language(lang, word, tmp_path):
    folder = student_folder(
        tmp_path,
        (
            "angles = np.arange(T, dtype=np.float64)[:, None] * inv_freq[None, :]",
            "angles = np.arange(T, dtype=np.float32)[:, None] * inv_freq[None, :]"
            ".astype(np.float32)",
        ),
    )
    other = "en" if lang == "es" else "es"
    out, _ = check_command("--impl", folder, "--lang", lang, lang=other).communicate(
        timeout=TIMEOUT * 3
    )
    assert word in out and ("Note:" if lang == "es" else "Nota:") not in out
