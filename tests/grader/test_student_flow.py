"""A student's whole road on a released repository, for lab 17.01: fill the stubs, `make check`,
answer the notebook, `make submit`, and the grader on the archive they hand in.

The right work gets full automatic marks (the written answers wait for manual grading); the same
work with sine and cosine swapped gets the diagnosis, in Spanish and in English.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from grader.build.demo import fill_notebook, fill_stub, reference_bodies
from grader.trusted import nbexec
from grader.trusted.grading import Options, grade
from grader.trusted.sandbox import Limits

LAB, SLUG, MODULE = "17.01", "17_01_sinusoidal", "sinusoidal"
SWAPPED = {"np.sin(angles)": "np.cos(angles)", "np.cos(angles)": "np.sin(angles)"}


@pytest.fixture(scope="module")
def student_repo(released, tmp_path_factory) -> Path:
    """A copy of this run's release, the student's own."""
    repo = tmp_path_factory.mktemp("flow") / "student"
    shutil.copytree(released, repo)
    return repo


def run(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """A course command in the student repository, as `make` runs it there."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MINIMODEL_", "PYTEST_"))}
    env.update(PYTHONPATH=str(repo / "src"), MINIMODEL_LANG="en")
    return subprocess.run([sys.executable, *args], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=900)


def do_the_lab(repo: Path, mistake: bool) -> Path:
    """Fill the 17.01 stub and notebook as a student does, then `make submit`; the archive."""
    stub = repo / "src" / "minimodel" / "positional" / f"{MODULE}.py"
    bodies = reference_bodies(MODULE)
    if mistake:
        bodies["sinusoidal_pe"] = re.sub(r"np\.(sin|cos)\(angles\)",
                                         lambda m: SWAPPED[m.group()], bodies["sinusoidal_pe"])
        assert "pe[:, 0::2] = np.cos(angles)" in bodies["sinusoidal_pe"]
    stub.write_text(fill_stub(stub.read_text(encoding="utf-8"), bodies), encoding="utf-8")
    solved = nbexec.source_notebook(SLUG)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in solved.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    path = repo / "labs" / f"{SLUG}.ipynb"
    nbformat.write(fill_notebook(nbformat.read(path, as_version=4), answers), path)
    checked = run(repo, "-m", "minimodel.cli", "check", LAB)
    assert (checked.returncode != 0) == mistake, checked.stdout[-3000:]
    submitted = run(repo, "-m", "minimodel.submit")
    assert submitted.returncode == 0, submitted.stdout
    archive = repo / "build" / "submission.zip"
    assert f"Upload this file: {archive}" in submitted.stdout
    assert f"{LAB}  src/minimodel/positional/{MODULE}.py" in submitted.stdout
    with zipfile.ZipFile(archive) as zipped:
        names = set(zipped.namelist())
    assert f"labs/{SLUG}.ipynb" in names and all(
        n.startswith(("src/minimodel/positional/", "labs/")) for n in names)
    return archive


def test_released_repository_to_graded_archive(student_repo, tmp_path):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    for name, mistake in (("ana", False), ("beto", True)):
        repo = tmp_path / name
        shutil.copytree(student_repo, repo)
        shutil.copy(do_the_lab(repo, mistake), submissions / f"{name}.zip")
    summary = grade(submissions, tmp_path / "grades",
                    Options(workers=1, labs=[LAB], progress=False,
                            limits=Limits(cell_timeout_s=120)))
    records = {r["student_id"]: r for r in summary["records"]}
    ana, beto = records["ana"]["labs"][LAB], records["beto"]["labs"][LAB]
    assert ana["auto"] == ana["auto_max"] > 0, "full automatic marks for the right work"
    assert 0 < beto["auto"] < beto["auto_max"]
    feedback = tmp_path / "grades" / "feedback" / records["beto"]["safe_id"]
    assert "Seno y coseno están intercambiados" in (feedback / "feedback.es.md").read_text()
    assert "Sine and cosine are swapped" in (feedback / "feedback.en.md").read_text()
