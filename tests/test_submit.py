"""`make submit`: exactly the graded files go in, checked; a file that cannot be graded stops it."""

import io
import os
import time
import zipfile
from pathlib import Path

import pytest

from grader.build.sync import released_text
from minimodel import own_work, submit
from minimodel.implementation import REPO_ROOT


@pytest.fixture
def student(tmp_path, monkeypatch) -> Path:
    """A student's repository as released, with a virtual environment and notes beside it."""
    monkeypatch.setenv("MINIMODEL_LANG", "en")
    for name in submit.expected_files():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(released_text(REPO_ROOT / name), encoding="utf-8")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "torch.so").write_bytes(b"\0" * 1000)
    (tmp_path / "labs" / "notes.txt").write_text("mine")
    return tmp_path


def archive_names(path: Path) -> set[str]:
    with zipfile.ZipFile(path) as archive:
        return set(archive.namelist())


def test_the_archive_holds_exactly_the_graded_files(student):
    rope = student / "src/minimodel/positional/rope.py"
    rope.write_text(rope.read_text() + "\n# started\n")
    said = io.StringIO()
    assert submit.submit(student, stream=said) == 0
    out = student / "build" / "submission.zip"
    assert archive_names(out) == set(submit.expected_files())
    text = said.getvalue()
    assert f"Upload this file: {out}" in text and "1 with your work" in text
    assert "src/minimodel/positional/rope.py" in text and "started" in text
    assert "not started (as released)" in text
    rope.touch()
    os.utime(rope, (time.mktime((2025, 7, 12, 9, 5, 0, 0, 0, -1)),) * 2)
    said = io.StringIO()
    submit.submit(student, stream=said)
    assert "saved 2025-07-12 09:05" in said.getvalue(), "a date no country reads otherwise"


def test_a_missing_file_is_said_and_left_out(student):
    (student / "labs/17_00_why_position.ipynb").unlink()
    said = io.StringIO()
    assert submit.submit(student, stream=said) == 0
    assert "labs/17_00_why_position.ipynb" not in archive_names(student / "build/submission.zip")
    assert "MISSING" in said.getvalue()


@pytest.mark.parametrize(("name", "text", "said"), [
    ("src/minimodel/positional/sinusoidal.py", "def f(:\n", "syntax error on line 1"),
    ("labs/17_01_sinusoidal.ipynb", '{"cells": [', "not a valid notebook"),
])
def test_a_file_that_cannot_be_graded_stops_the_submission(student, name, text, said):
    (student / name).write_text(text)
    out = io.StringIO()
    assert submit.submit(student, stream=out) == 1
    assert said in out.getvalue() and "No archive written" in out.getvalue()
    assert not (student / "build" / "submission.zip").exists()


@pytest.mark.parametrize(("line", "refusal"), [
    ("from transformers.models.llama.modeling_llama import apply_rotary_pos_emb",
     own_work.Refusal("library", "transformers.models.llama.modeling_llama")),
    ("import minimodel.selfcheck.snapshots", own_work.Refusal("self-check",
                                                              "minimodel.selfcheck.snapshots")),
])
def test_borrowed_work_is_named_before_the_archive_is_written(student, line, refusal):
    """In the words of the self-check and the grader; the archive is still written."""
    rope = student / "src/minimodel/positional/rope.py"
    rope.write_text(rope.read_text().replace("import torch\n", f"import torch\n{line}\n", 1))
    said = io.StringIO()
    assert submit.submit(student, stream=said) == 0
    text = said.getvalue()
    warning = text.index("Warning: the grader will give 0 to what depends on these files:")
    assert warning < text.index("Checked:")
    assert f"  {own_work.explain(refusal, 'rope.py')[1]}\n" in text
    through = own_work.Refusal(refusal.kind, refusal.name, "rope.py")
    for module in ("two_d", "scaling"):  # they import rope.py
        assert own_work.explain(through, f"{module}.py")[1] in text
    assert archive_names(student / "build" / "submission.zip") == set(submit.expected_files())


def test_a_refused_submission_leaves_no_older_archive(student):
    assert submit.submit(student, stream=io.StringIO()) == 0
    (student / "src/minimodel/positional/rope.py").write_text("def f(:\n")
    said = io.StringIO()
    assert submit.submit(student, stream=said) == 1
    assert not (student / "build" / "submission.zip").exists()
    assert "removed the archive of an earlier submission" in said.getvalue()


def test_an_empty_folder_is_not_a_submission(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIMODEL_LANG", "en")
    said = io.StringIO()
    assert submit.submit(tmp_path, stream=said) == 1
    assert "none of the course's files" in said.getvalue()
