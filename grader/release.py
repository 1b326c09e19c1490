"""``minimodel-grader release OUT``: write the student repository.

The student gets the lessons, the labs (already stripped of solutions and hidden tests by
nbgrader), the library with the stubs, the visible tests (``tests/student/``) and everything
needed to install and run them. Left out: ``solutions/``, the whole ``grader/`` package (hidden
checks, reference outputs, sample submissions, the sandbox), the project's own tests, CI and the
grading benchmark. ``pyproject.toml`` and the ``Makefile`` are rewritten so that they no longer
mention what was left out, and the result is scanned for leaks before it is accepted.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from minimodel.implementation import REPO_ROOT

EXCLUDED_DIRS = ("solutions/", "grader/", ".ci/", "build/", "site/", ".github/")
EXCLUDED_FILES = ("benchmarks/grading.py",)
KEPT_TESTS = ("tests/student/", "tests/conftest.py")
LEAK_MARKERS = ("### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS", "grader.hidden",
                "grader/references", "grader.references", "grader/samples")


class LeakError(RuntimeError):
    """Something instructor-only would reach students."""


def tracked_files(root: Path = REPO_ROOT) -> list[str]:
    """The repository's files: tracked or new, never ignored (``.venv``, ``build``...)."""
    try:
        listing = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=root, capture_output=True, check=True).stdout.decode()
        names = [n for n in listing.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".venv", "build", "site", "__pycache__", ".pytest_cache", ".ruff_cache"}
        names = [str(p.relative_to(root)) for p in root.rglob("*")
                 if p.is_file() and not skip & set(p.relative_to(root).parts)]
    return sorted(n for n in names if (root / n).is_file())


def released(name: str) -> bool:
    if name.startswith(EXCLUDED_DIRS) or name in EXCLUDED_FILES:
        return False
    if name.startswith("tests/"):
        return name.startswith(KEPT_TESTS)
    return True


def student_pyproject(text: str) -> str:
    """Only the ``minimodel`` package, no grader command, no comment about the grader."""
    lines = []
    source = text.splitlines()
    comment_about_grader = set()
    start = None
    for index, line in enumerate([*source, ""]):  # whole comment blocks that mention it
        if line.lstrip().startswith("#"):
            start = index if start is None else start
            continue
        if start is not None and any(re.search(r"\bgrader\b", source[k])
                                     for k in range(start, index)):
            comment_about_grader |= set(range(start, index))
        start = None
    for index, line in enumerate(source):
        if index in comment_about_grader:
            continue
        if re.match(r"\s*minimodel-grader\s*=", line):
            continue
        line = line.replace('include = ["minimodel*", "grader*"]', 'include = ["minimodel*"]')
        line = line.replace('where = ["src", "."]', 'where = ["src"]')
        lines.append(line)
    return "\n".join(lines) + "\n"


def student_makefile(text: str) -> str:
    """Drop recipe lines that need the grader (and targets left empty); labs run on ``src``."""
    lines = text.splitlines()
    out: list[str] = []
    dropped_targets: set[str] = set()
    i = 0
    while i < len(lines):
        line = lines[i]
        match = re.match(r"^([A-Za-z][\w-]*):", line)
        if match and not line.startswith(".PHONY"):
            recipe = []
            j = i + 1
            while j < len(lines) and lines[j].startswith("\t"):
                recipe.append(lines[j])
                j += 1
            kept = [r for r in recipe if not re.search(r"\bgrader\b|minimodel-grader", r)]
            if recipe and not kept:
                dropped_targets.add(match.group(1))
            else:
                out.append(line)
                out += [r.replace("--impl reference", "--impl src") for r in kept]
            i = j
            continue
        out.append(line)
        i += 1
    result = []
    for line in out:
        if line.startswith(".PHONY"):
            names = [n for n in line.split()[1:] if n not in dropped_targets]
            line = ".PHONY: " + " ".join(names)
        elif any(re.search(rf'"make {re.escape(t)}\b', line) for t in dropped_targets):
            continue
        line = line.replace("run every lab against the reference and grade the samples",
                            "run every lab against your code")
        result.append(line)
    return "\n".join(result) + "\n"


def leaks(folder: Path) -> list[str]:
    """Instructor-only material found in a released folder."""
    found = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        name = str(path.relative_to(folder))
        if not released(name):
            found.append(f"{name}: instructor-only path")
        if path.suffix in (".npz", ".npy"):
            found.append(f"{name}: array file")
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for marker in LEAK_MARKERS:
            if marker in text:
                found.append(f"{name}: contains {marker!r}")
    return found


def release(out: Path, *, force: bool = False, root: Path = REPO_ROOT) -> list[Path]:
    """Write the student repository into ``out``; returns the files written."""
    out = out.resolve()
    if out == root or root in out.parents and not str(out.relative_to(root)).startswith(
            ("build/", "build")):
        raise LeakError(f"{out}: choose a folder outside the course repository (or in build/)")
    if out.exists():
        if not force and any(out.iterdir()):
            raise LeakError(f"{out} is not empty (use --force to replace it)")
        shutil.rmtree(out)
    written = []
    for name in tracked_files(root):
        if not released(name):
            continue
        source, target = root / name, out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if name == "pyproject.toml":
            target.write_text(student_pyproject(source.read_text(encoding="utf-8")),
                              encoding="utf-8")
        elif name == "Makefile":
            target.write_text(student_makefile(source.read_text(encoding="utf-8")),
                              encoding="utf-8")
        else:
            shutil.copy2(source, target)
        written.append(target)
    problems = leaks(out)
    if problems:
        shutil.rmtree(out)
        raise LeakError("refusing to release:\n" + "\n".join(problems))
    return written
