"""``minimodel-grader release OUT``: write the student repository.

The student gets only what a student uses (``SHIPPED``): the lessons, the labs (already stripped
of solutions and hidden tests by nbgrader), the library with the stubs, the visible tests
(``tests/student/``), what installs them, and the lessons' site built from the commit (``SITE``,
every figure, interactive figure, quiz and the search working from the file system). Everything
else stays: ``solutions/``, the whole ``grader/`` package, the benchmarks, the site's sources,
the project's own tests, CI. ``pyproject.toml``, the ``Makefile`` and ``.gitignore`` are
rewritten so that they no longer mention what was left out, the lessons' passages about the
course repository say what the student repository has instead (``student_page``), the README is
the students' own (``STUDENT_README``), and the result is scanned for leaks before it is accepted:
instructor-only files, any callable that computes a graded function's answers on the hidden
inputs (``grader.build.leaks``), and figure data that shows a hidden case's answer.

The release is built from the last commit, never from the working tree, and only after checking
that the commit's stubs and notebooks are exactly what its ``solutions/`` generate.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

from grader.build import sync
from minimodel.implementation import REPO_ROOT
from minimodel.messages import bilingual

STUDENT_README = "grader/student_readme.md"

# What a student uses, and nothing else: the lessons, the labs, the library, the visible tests,
# what installs them and JupyterLab's settings. Anything else in the course repository (the
# solutions, the grader, the benchmarks, the site's sources, the project's own tests, CI) stays.
SHIPPED = (".gitignore", ".jupyter/", "Makefile", "README.md", "environment.yml",
           "pyproject.toml", "docs_es/", "docs_en/", "labs/", "src/", "tests/student/",
           "tests/conftest.py")
# The self-check's stored answers on the visible inputs (minimodel.selfcheck.snapshots) ship.
SNAPSHOTS = "src/minimodel/selfcheck/snapshots/"
LEAK_MARKERS = ("### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS", "grader.hidden",
                "references.npz", "grader.build.references", "grader.trusted.references",
                "grader/samples")


# The lessons' site, built at release time from the commit (figures, interactive figures,
# quizzes and search, all working from the file system): students have no solutions/ to draw the
# figures from, so they get the site itself.
SITE = "site/"

REFUSED = "No publico / refusing to release:\n"


class ReleaseError(RuntimeError):
    """The student repository cannot be written."""


class LeakError(ReleaseError):
    """Something instructor-only would reach students."""


def refused(problems: list[str]) -> LeakError:
    """The error that refuses a release for ``problems``."""
    return LeakError(REFUSED + "\n".join(problems))


def released(name: str) -> bool:
    """Whether the file ``name`` (a path relative to the repository) reaches students: one of
    the commit's files a student uses, or the site the release builds."""
    folders = tuple(s for s in (*SHIPPED, SITE) if s.endswith("/"))
    return name in SHIPPED or name.startswith(folders)


INSTRUCTOR_ONLY = re.compile(r"\bgrader\b|(?<![\w/])solutions/")  # named in pyproject.toml


def student_pyproject(text: str) -> str:
    """Only the ``minimodel`` package, no grader command, no setting for and no comment about
    what stays with the instructors (the grader, ``solutions/``)."""
    lines = []
    source = text.splitlines()
    dropped = set()
    start = None
    for index, line in enumerate([*source, ""]):  # whole comment blocks that mention it
        if line.lstrip().startswith("#"):
            start = index if start is None else start
            continue
        block = range(start if start is not None else index, index)
        if any(INSTRUCTOR_ONLY.search(source[k]) for k in block) or \
                INSTRUCTOR_ONLY.search(line) and re.match(r'\s*"[^"]*"\s*=', line):
            dropped |= set(block)  # with the setting a comment is about
            if INSTRUCTOR_ONLY.search(line):
                dropped.add(index)
        start = None
    for index, line in enumerate(source):
        if index in dropped:
            continue
        if re.match(r"\s*minimodel-grader\s*=", line):
            continue
        line = line.replace('include = ["minimodel*", "grader*"]', 'include = ["minimodel*"]')
        line = line.replace('where = ["src", "."]', 'where = ["src"]')
        lines.append(line)
    return "\n".join(lines) + "\n"


STUDENT_TEST = "\t@$(BIN)/minimodel check --all --jobs $(JOBS)"
# The course's own commands that the student repository has no use for: `make test-quick` runs the
# project's tests, and a student's are the visible ones, which `make test` reports lab by lab.
COURSE_ONLY_TARGETS = ("test-quick",)
STUDENT_HELP = {  # what a command does in the student's repository, said as in the Makefile
    "instala y ejecuta todas las pruebas (referencia, labs, copias, docs, estilo)":
        "instala y comprueba cada laboratorio, una línea por laboratorio (hecho, sin empezar o "
        "con fallos)",
    "install, then run all tests (reference, labs, drift, docs, lint)":
        "install, then check every lab, one line each (done, not started or failing)",
    "ejecuta cada laboratorio con la referencia y califica los ejemplos":
        "ejecuta cada laboratorio con tu código",
    "run every lab against the reference and grade the samples": "run every lab against your code",
    "construye los sitios en español e inglés en site/":
        "abre las lecciones (site/es/index.html, site/en/index.html)",
    "build the Spanish and English sites into site/":
        "open the lessons (site/es/index.html, site/en/index.html)",
}

# The student's `make docs` opens the site the release built (``SITE``): it prints where the
# lessons are and, on a desktop, opens them in the browser. Nothing to install, nothing to build.
STUDENT_DOCS = [
    '\t@test -f site/es/index.html || { echo "[es] Falta site/: vuelve a copiar el repositorio '
    'del curso"; echo "[en] site/ is missing: copy the course repository again"; exit 1; }',
    '\t@echo "[es] Lecciones: file://$(CURDIR)/site/es/index.html"',
    '\t@echo "[en] Lessons: file://$(CURDIR)/site/en/index.html"',
    '\t@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ] || [ "$$(uname)" = Darwin ]; then '
    '$(PYTHON) -m webbrowser -t "file://$(CURDIR)/site/$(if $(filter en,$(MINIMODEL_LANG)),en,es)'
    '/index.html" >/dev/null 2>&1 || true; fi',
]


# A lesson passage that speaks of the course repository (its reference solutions, its tests, how
# its site is built) is followed by what the student repository says instead, in a comment:
#     <!-- course -->
#     ...the course repository's text...
#     <!-- student
#     ...the student repository's text (or nothing)...
#     -->
# The course's site shows the first (a comment is not shown); the release keeps the second.
COURSE_PASSAGE = re.compile(r"<!-- course -->\n(.*?)<!-- student\n(.*?)-->\n", re.S)
PASSAGE_MARKERS = ("<!-- course", "<!-- student")


def student_page(text: str, name: str = "page") -> str:
    """The lesson page ``text`` as the student repository says it: each course passage replaced
    by its student text. A marker left unpaired refuses the release."""
    result = COURSE_PASSAGE.sub(lambda match: match.group(2), text)
    left = [marker for marker in PASSAGE_MARKERS if marker in result]
    if left:
        raise refused([f"{name}: {marker!r} without its pair" for marker in left])
    return result


def student_pages(tree: Path) -> None:
    """Rewrite the lessons of the exported ``tree`` (``docs_es/``, ``docs_en/``) as
    :func:`student_page` says, before they are copied and built into the site."""
    for page in sorted(tree.glob("docs_*/**/*.md")):
        text = page.read_text(encoding="utf-8")
        if any(marker in text for marker in PASSAGE_MARKERS):
            name = str(page.relative_to(tree))
            page.write_text(student_page(text, name), encoding="utf-8")


def student_gitignore(text: str) -> str:
    """The course ignores its built site; the student repository ships it."""
    return "".join(line for line in text.splitlines(keepends=True) if line.strip() != SITE)


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
            elif match.group(1) == "docs":
                line, kept = "docs:", STUDENT_DOCS
            elif match.group(1) == "clean":  # the shipped site is not a build product there
                kept = [r.replace(" site ", " ") for r in kept]
            if recipe and not kept or match.group(1) in COURSE_ONLY_TARGETS:
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


def leaks(folder: Path, root: Path = REPO_ROOT, prefix: str = "") -> list[str]:
    """Instructor-only material found in a released folder (at ``prefix`` in the release):
    instructor-only paths and markers, array files, and the code of a lab notebook's solution
    copied into a Python file."""
    found = []
    runs = solution_runs(root)
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        name = prefix + str(path.relative_to(folder))
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
            raise refused(problems)
        student_pages(tree)
        if out.exists() and any(out.iterdir()):
            saved = keep_previous(out)
            say(bilingual(f"La publicación anterior está en {saved}",
                          f"The previous release is kept in {saved}"))
        written = _write(tree, out)
        problems = scan(out, root, say)
        if not problems:  # the site takes a minute: built once the code is known clean
            written += build_site(tree, out / SITE, root, say)
            problems = leaks(out / SITE, root, prefix=SITE) + site_answers(out / SITE)
    if problems:
        shutil.rmtree(out)
        raise refused(problems)
    return written


def build_site(tree: Path, site: Path, root: Path, say=print) -> list[Path]:
    """Build the lessons of the exported commit ``tree`` into ``site`` (``docs_site/build.py``,
    with the commit's library and reference code); return the files written.

    The npm packages the site serves come from ``root``'s cache (``build/npm``, checked against
    their pinned hashes), so a release needs the network only when that cache is empty.
    """
    say(bilingual("Construyendo las lecciones (site/)…", "Building the lessons (site/)…"))
    cache = root / "build" / "npm"
    cache.mkdir(parents=True, exist_ok=True)
    (tree / "build").mkdir(exist_ok=True)
    (tree / "build" / "npm").symlink_to(cache, target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINIMODEL_")}
    env["PYTHONPATH"] = str(tree / "src")  # the commit's minimodel, not the working tree's
    run = subprocess.run([sys.executable, str(tree / "docs_site" / "build.py"), "--out",
                          str(site)], cwd=tree, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise ReleaseError(bilingual(
            "No se pudieron construir las lecciones de la publicación:",
            "The release's lessons could not be built:") + "\n" + (run.stdout + run.stderr)[-3000:])
    return sorted(path for path in site.rglob("*") if path.is_file())


SITE_RUN = 8  # consecutive numbers of a hidden case's answer that, found in figure data, are a leak
SITE_DECIMALS = 3  # numbers are compared at this precision (the figures round theirs to 4)


def _number_runs(values, found: set) -> None:
    """Add to ``found`` every run of ``SITE_RUN`` consecutive numbers of ``values`` (JSON: lists
    of numbers, and lists of records read column by column), as integers at ``SITE_DECIMALS``."""
    if isinstance(values, dict):
        for value in values.values():
            _number_runs(value, found)
        return
    if not isinstance(values, list):
        return
    columns: dict[str, list] = {}
    numbers = []
    for value in values:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            numbers.append(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, (int, float)) and not isinstance(item, bool):
                    columns.setdefault(key, []).append(item)
        _number_runs(value, found)
    for sequence in (numbers, *columns.values()):
        found.update(_informative_runs(np.asarray(sequence, dtype=np.float64)))


def _informative_runs(values: np.ndarray) -> list[tuple[int, ...]]:
    """The runs of ``SITE_RUN`` consecutive values (rounded to integers at ``SITE_DECIMALS``)
    with at least half of them not whole numbers: positions, counts and constants match
    anything."""
    scaled = np.round(values[np.isfinite(values)] * 10 ** SITE_DECIMALS).astype(np.int64)
    fraction = scaled % 10 ** SITE_DECIMALS != 0
    return [tuple(scaled[i:i + SITE_RUN]) for i in range(len(scaled) - SITE_RUN + 1)
            if fraction[i:i + SITE_RUN].sum() * 2 >= SITE_RUN
            and len(set(scaled[i:i + SITE_RUN])) > 1]  # one value repeated is one number


def figure_data(site: Path) -> dict[str, object]:
    """Every interactive figure's data in the built ``site``: ``page#figure`` -> its spec."""
    found = {}
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        for figure, spec in re.findall(
                r'<script type="application/json" id="spec-([^"]+)">(.*?)</script>', text, re.S):
            found[f"{page.relative_to(site)}#{figure}"] = json.loads(spec.replace("<\\/", "</"))
    return found


# Graded functions whose hidden answers the lessons' figures may show: ALiBi's slopes and biases
# depend on the number of heads only (the paper prints them), and 17.04's explorer draws them
# for every number of heads its slider offers. What is graded there is the code (and in 18.03's
# chunk of a cached sequence, which rows of that bias the chunk takes).
SHOWN_BY_THE_LESSONS = ("17.04/slopes/alibi_slopes", "17.04/bias/alibi_bias",
                        "17.04/notebook:test-slopes/", "17.04/notebook:test-bias/",
                        "18.03/notebook:test-chunk-bias/alibi")


def notebook_answers() -> dict[tuple[int, ...], str]:
    """The informative runs of every value a graded notebook cell records (what its checks
    compare: the notebook's ``ratios`` of 18.02, say) -> ``lab/notebook:cell/record``. These are
    answers too, whether or not a function computes them from arguments of its own."""
    from grader.trusted.references import References
    from minimodel.course import LABS

    answers: dict[tuple[int, ...], str] = {}
    for lab in LABS:
        references = References(lab.id)
        for grade_id in references.meta.get("notebook", {}):
            for record, outputs in references.cell(grade_id).items():
                label = f"{lab.id}/notebook:{grade_id}/{record}"
                if label.startswith(SHOWN_BY_THE_LESSONS):
                    continue
                for output in outputs:
                    if output.get("array") is not None:
                        values = np.asarray(output["array"], dtype=np.float64)
                        for row in values.reshape(-1, values.shape[-1]) if values.ndim else []:
                            answers.update(dict.fromkeys(_informative_runs(row), label))
    return answers


def site_answers(site: Path) -> list[str]:
    """The interactive figures of the built ``site`` whose data show a graded answer
    (:func:`figure_answers`)."""
    return [f"{SITE}{where}" for where in figure_answers(figure_data(site))]


def figure_answers(specs: dict[str, object]) -> list[str]:
    """``where: shows the hidden answer ...`` for each figure of ``specs`` (name -> its data)
    that holds ``SITE_RUN`` consecutive numbers of a hidden case's reference output (the
    targets of ``grader.build.leaks``, less ``SHOWN_BY_THE_LESSONS``) or of a value a graded
    notebook cell records."""
    from grader.build.leaks import targets

    answers: dict[tuple[int, ...], str] = notebook_answers()
    for target in [t for t in targets() if t.id not in SHOWN_BY_THE_LESSONS]:
        for index, outputs in enumerate(target.outputs):
            for output in outputs:
                if output.get("array") is not None:
                    values = np.asarray(output["array"], dtype=np.float64).ravel()
                    answers.update(dict.fromkeys(_informative_runs(values),
                                                 f"{target.id} case {index}"))
    found = []
    for where, spec in specs.items():
        runs: set[tuple[int, ...]] = set()
        _number_runs(spec, runs)
        shown = sorted({answers[run] for run in runs if run in answers})
        found += [f"{where}: shows the hidden answer {answer}" for answer in shown]
    return found


def answers(out: Path, say=print, labs: list[str] | None = None) -> list[str]:
    """The callables of the release that compute a graded function (``grader.build.leaks``; of
    ``labs``, default all)."""
    from grader.build.leaks import search

    say(bilingual("Buscando en la publicación código que calcule una respuesta calificada…",
                  "Searching the release for code that computes a graded answer…"))
    found = search(out, labs)
    return [f"{leak} · con ella se saca la nota entera / a student could call it for full marks"
            for leak in found.leaks]


def scan(out: Path, root: Path = REPO_ROOT, say=print, labs: list[str] | None = None) -> list[str]:
    """Why the written release ``out`` is refused: its instructor-only material
    (:func:`leaks`), else its callables that compute a graded answer (:func:`answers`)."""
    return leaks(out, root) or answers(out, say, labs)


REWRITTEN = {"pyproject.toml": student_pyproject, "Makefile": student_makefile,
             ".gitignore": student_gitignore}


def _write(tree: Path, out: Path) -> list[Path]:
    """Copy the released files of the exported ``tree`` to ``out``, rewriting what must be."""
    written = []
    for name in sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file()):
        if not released(name) or name.startswith(SITE):  # the site is built, never copied
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
