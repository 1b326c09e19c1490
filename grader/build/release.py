"""``minimodel-grader release OUT``: write the student repository.

The student gets the lessons, the labs (already stripped of solutions and hidden tests by
nbgrader), the library with the stubs, the visible tests (``tests/student/``) and everything
needed to install and run them. Left out: ``solutions/``, the whole ``grader/`` package (hidden
checks, reference outputs, sample submissions, the sandbox), the project's own tests, CI and the
grading benchmark. ``pyproject.toml`` and the ``Makefile`` are rewritten so that they no longer
mention what was left out, the README is the students' own (``STUDENT_README``), and the
result is scanned for leaks before it is accepted: instructor-only files, and any callable that
computes a graded function's answers on the hidden inputs (``grader.build.leaks``).

The release is built from the last commit, never from the working tree, and only after checking
that the commit's stubs and notebooks are exactly what its ``solutions/`` generate.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from grader.build import sync
from minimodel.implementation import REPO_ROOT
from minimodel.messages import bilingual

STUDENT_README = "grader/student_readme.md"

EXCLUDED_DIRS = ("solutions/", "grader/", ".ci/", "build/", "site/", ".github/")
EXCLUDED_FILES = ("benchmarks/grading.py", "benchmarks/demo.py")  # they time the grader
KEPT_TESTS = ("tests/student/", "tests/conftest.py")
# The self-check's stored answers on the visible inputs (minimodel.selfcheck.snapshots) ship.
SNAPSHOTS = "src/minimodel/selfcheck/snapshots/"
LEAK_MARKERS = ("### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS", "grader.hidden",
                "references.npz", "grader.build.references", "grader.trusted.references",
                "grader/samples")


REFUSED = "No publico / refusing to release:\n"


class LeakError(RuntimeError):
    """Something instructor-only would reach students."""


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


STUDENT_TEST = "\t@$(BIN)/minimodel check --all --jobs $(JOBS)"
STUDENT_HELP = {  # what a command does in the student's repository, said as in the Makefile
    "instala y ejecuta todas las pruebas (referencia, labs, copias, docs, estilo)":
        "instala y comprueba cada laboratorio, una línea por laboratorio (hecho, sin empezar o "
        "con fallos)",
    "install, then run all tests (reference, labs, drift, docs, lint)":
        "install, then check every lab, one line each (done, not started or failing)",
    "ejecuta cada laboratorio con la referencia y califica los ejemplos":
        "ejecuta cada laboratorio con tu código",
    "run every lab against the reference and grade the samples": "run every lab against your code",
}


def student_makefile(text: str) -> str:
    """Drop recipe lines that need the grader (and targets left empty); labs run on ``src``.

    A student's ``make test`` is the self-check of every lab, one line per lab (``minimodel check
    --all``): halfway through the course, the labs not started yet are a word each, not pages of
    tracebacks. The style check stays in ``make lint``, so a long line in right work does not
    fail it.
    """
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
            if match.group(1) == "test":
                kept = [STUDENT_TEST]
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
        for course, student in STUDENT_HELP.items():
            line = line.replace(course, student)
        result.append(line)
    return "\n".join(result) + "\n"


SOLUTION_RUN = 3  # consecutive lines of a notebook's solution that, found in a file, are a copy


def _runs(text: str) -> list[tuple[str, ...]]:
    """Every ``SOLUTION_RUN`` consecutive lines of Python source that hold code, stripped
    (comments and blanks out)."""
    lines = [line.strip() for line in text.splitlines()
             if line.strip() and not line.strip().startswith("#")]
    return [tuple(lines[start:start + SOLUTION_RUN])
            for start in range(len(lines) - SOLUTION_RUN + 1)]


def solution_runs(root: Path = REPO_ROOT) -> dict[tuple[str, ...], str]:
    """Every run of ``SOLUTION_RUN`` code lines inside a solved notebook's ``### BEGIN SOLUTION``
    … ``### END SOLUTION`` blocks -> the notebook it comes from."""
    runs = {}
    for source in sorted((root / "solutions" / "labs").glob("*/notebook.py")):
        for block in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", source.read_text(
                encoding="utf-8"), flags=re.S):
            runs.update(dict.fromkeys(_runs(block), source.parent.name))
    return runs


def leaks(folder: Path, root: Path = REPO_ROOT) -> list[str]:
    """Instructor-only material found in a released folder: instructor-only paths and markers,
    array files, and the code of a lab notebook's solution copied into a Python file."""
    found = []
    runs = solution_runs(root)
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        name = str(path.relative_to(folder))
        if not released(name):
            found.append(f"{name}: instructor-only path")
        if path.suffix in (".npz", ".npy") and not name.startswith(SNAPSHOTS):
            found.append(f"{name}: array file")
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for marker in LEAK_MARKERS:
            if marker in text:
                found.append(f"{name}: contains {marker!r}")
        if path.suffix == ".py":
            copied = {runs[run] for run in _runs(text) if run in runs}
            found += [f"{name}: holds the solution of {lab}'s notebook" for lab in sorted(copied)]
    return found


def export_commit(root: Path, dest: Path) -> Path:
    """Write the files of the last commit (``HEAD``) of ``root`` into ``dest``; return ``dest``.

    The release is built from what is committed, so nothing untracked, unsaved or half-edited in
    the instructor's working tree reaches students.
    """
    try:
        archive = subprocess.run(["git", "archive", "--format=tar", "HEAD"], cwd=root,
                                 capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        raise LeakError(bilingual(
            f"La publicación se hace desde el último commit y {root} no es un repositorio git "
            f"con commits ({error}).",
            f"A release is built from the last commit, and {root} is not a git repository "
            f"with commits ({error}).")) from None
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def keep_previous(out: Path) -> Path:
    """Move an earlier release in ``out`` aside (``<out>-saved-<date-time>``); return where."""
    saved = out.with_name(f"{out.name}-saved-{time.strftime('%Y%m%d-%H%M%S')}")
    while saved.exists():
        saved = saved.with_name(saved.name + "+")
    shutil.move(out, saved)
    return saved


def release(out: Path, *, force: bool = False, root: Path = REPO_ROOT,
            say=print) -> list[Path]:
    """Write the student repository into ``out`` from the last commit; return the files written.

    Refuses (``LeakError``, nothing written) when a generated file of the commit drifted from
    ``solutions/`` or something instructor-only would be shipped. A non-empty ``out`` is never
    deleted: without ``force`` the release refuses, with it the old folder is moved aside.
    """
    out = out.resolve()
    if out == root or root in out.parents and out.relative_to(root).parts[0] != "build":
        raise LeakError(bilingual(
            f"{out} está dentro del repositorio del curso: elige una carpeta fuera de él (o en "
            "build/).",
            f"{out} is inside the course repository: choose a folder outside it (or in build/)."))
    if out.exists() and any(out.iterdir()) and not force:
        raise LeakError(bilingual(f"{out} no está vacía (con --force se aparta antes, no se borra)",
                                  f"{out} is not empty (--force moves it aside first, never "
                                  "deletes it)"))
    with tempfile.TemporaryDirectory() as scratch:
        tree = export_commit(root, Path(scratch))
        # generated files of the commit that differ from what its solutions/ generate
        problems = [f"{path.relative_to(tree)}: out of date (make sync, then commit)"
                    for path in sync.drifted(sync.generated_files(tree))]
        if problems:
            raise LeakError(REFUSED + "\n".join(problems))
        if out.exists() and any(out.iterdir()):
            saved = keep_previous(out)
            say(bilingual(f"La publicación anterior está en {saved}",
                          f"The previous release is kept in {saved}"))
        written = _write(tree, out)
    problems = leaks(out, root) or answers(out, say)
    if problems:
        shutil.rmtree(out)
        raise LeakError(REFUSED + "\n".join(problems))
    return written


def answers(out: Path, say=print) -> list[str]:
    """The callables of the release that compute a graded function (``grader.build.leaks``)."""
    from grader.build.leaks import search

    say(bilingual("Buscando en la publicación código que calcule una respuesta calificada…",
                  "Searching the release for code that computes a graded answer…"))
    found = search(out)
    return [f"{leak} · a student could call it for full marks" for leak in found.leaks]


REWRITTEN = {"pyproject.toml": student_pyproject, "Makefile": student_makefile}


def _write(tree: Path, out: Path) -> list[Path]:
    """Copy the released files of the exported ``tree`` to ``out``, rewriting what must be."""
    written = []
    for name in sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file()):
        if not released(name):
            continue
        source, target = tree / name, out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if name in REWRITTEN:
            target.write_text(REWRITTEN[name](source.read_text(encoding="utf-8")), encoding="utf-8")
        elif name == "README.md":
            shutil.copy2(tree / STUDENT_README, target)
        else:
            shutil.copy2(source, target)
        written.append(target)
    return written
