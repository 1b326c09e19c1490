"""The student repository: nothing instructor-only leaks, and it installs and runs its tests."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from grader.release import leaks, release, student_makefile
from minimodel.implementation import REFERENCE_DIR, REPO_ROOT


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    out = tmp_path_factory.mktemp("student-repo")
    release(out, force=True)
    return out


def run_visible_tests(repo):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MINIMODEL_", "PYTEST_"))}
    env["PYTHONPATH"] = str(repo / "src")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/student"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=600)


def test_nothing_instructor_only_is_released(released):
    assert not (released / "solutions").exists()
    assert not (released / "grader").exists()
    assert not (released / "benchmarks" / "grading.py").exists()
    assert not list(released.rglob("*.npz"))
    tests = {p.relative_to(released).parts[1] for p in (released / "tests").rglob("*.py")}
    assert tests <= {"student", "conftest.py"}
    assert leaks(released) == []
    for path in released.rglob("*"):
        if path.is_file() and path.suffix in (".py", ".ipynb", ".md", ".toml", ".yml", ""):
            text = path.read_text(encoding="utf-8", errors="replace")
            assert "BEGIN HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text, path
            assert "minimodel-grader" not in text or path.suffix == ".md", path
    pyproject = (released / "pyproject.toml").read_text()
    assert not re.search(r"(?<!\w)grader\b", pyproject)


def test_the_released_makefile_needs_no_grader():
    makefile = student_makefile((REPO_ROOT / "Makefile").read_text())
    assert not re.search(r"(?<!\w)grader\b", makefile)
    assert "--impl reference" not in makefile
    assert "demo:" in makefile and "test:" in makefile


def test_it_installs_without_the_grader(released, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--no-compile", "--target", str(target),
                    str(released)], check=True, capture_output=True, timeout=600)
    assert (target / "minimodel" / "positional").is_dir()
    assert not (target / "grader").exists()
    assert (target / "bin" / "minimodel").exists()
    assert not (target / "bin" / "minimodel-grader").exists()


def test_visible_tests_run_on_the_stubs_and_pass_with_the_solutions(released, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(released, repo)
    stubs = run_visible_tests(repo)
    assert stubs.returncode == 1, stubs.stdout[-2000:]  # run, and fail: nothing implemented
    assert "NotImplementedError" in stubs.stdout and "error" not in stubs.stdout.splitlines()[-1]
    for solution in REFERENCE_DIR.glob("*.py"):
        shutil.copy2(solution, repo / "src" / "minimodel" / "positional" / solution.name)
    solved = run_visible_tests(repo)
    assert solved.returncode == 0, solved.stdout[-3000:]
