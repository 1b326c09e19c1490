"""The student repository: nothing instructor-only leaks, and it installs and runs its tests."""

from __future__ import annotations

import html as htmllib
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mistaken_sources import MISTAKEN

from grader.build.release import (
    SOLUTION_RUN,
    STUDENT_README,
    LeakError,
    leaks,
    release,
    student_makefile,
    student_page,
)
from grader.build.sync import committed_text
from minimodel.course import LABS
from minimodel.implementation import REFERENCE_DIR, REPO_ROOT


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
    arrays = {p.parent.relative_to(released) for p in released.rglob("*.np[yz]")}
    assert arrays <= {Path("src/minimodel/selfcheck/snapshots")}, arrays
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


def course_paths() -> set[str]:
    """The first component of every committed file of the course (``benchmarks``, ``src``...)."""
    listed = subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    return {name.split("/")[0] for name in listed}


def make_targets(makefile: Path) -> set[str]:
    return set(re.findall(r"^([A-Za-z][\w-]*):", makefile.read_text(encoding="utf-8"), re.M))


def readable_texts(repo: Path):
    """``(file, text)`` of everything a student reads in ``repo`` (its lessons, README,
    notebooks' cells, Python files, Makefile and settings; the site repeats the lessons)."""
    for path in sorted(repo.rglob("*")):
        name = path.relative_to(repo).as_posix()
        if not path.is_file() or name.startswith("site/") or path.suffix in (".json", ".npz"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".ipynb":
            cells = json.loads(text)["cells"]
            text = "\n".join("".join(c["source"]) if isinstance(c["source"], list)
                             else c["source"] for c in cells)
        yield name, text


PATH = re.compile(r"(?<![\w./-])((?:[\w.-]+/)+[\w.<>*{}-]*)")


def names_of_absent_things(repo: Path) -> list[str]:
    """Where a text of ``repo`` (its files, and the pages of its site) names a course path
    (``benchmarks/``, ``solutions/labs/<slug>``), a ``make`` target of the course or a module of
    the grader that ``repo`` does not have."""
    top, course_targets = course_paths(), make_targets(REPO_ROOT / "Makefile")
    targets = make_targets(repo / "Makefile")
    found = []
    for name, text in [*readable_texts(repo), *site_texts(repo)]:
        for number, line in enumerate(text.splitlines(), 1):
            for path in PATH.findall(line):
                path = path.rstrip(".,;:")  # a sentence's end, where the site has no backticks
                parts = list(itertools.takewhile(lambda part: part and not re.search(
                    r"[<*{]", part), path.split("/")))
                if parts and parts[0] in top and not (repo / "/".join(parts)).exists():
                    found.append(f"{name}:{number}: {path}")
            found += [f"{name}:{number}: make {target}" for target in re.findall(
                r"\bmake ([a-z][\w-]*)", line) if target in course_targets - targets]
            found += [f"{name}:{number}: {module}" for module in re.findall(
                r"\bgrader\.[a-z_]\w*|minimodel-grader", line)]
    return found


def site_texts(repo: Path):
    """``(page, text)`` of every page of the site ``repo`` ships, as a reader sees it: the
    article's words, without tags, scripts or figure data."""
    for page in sorted((repo / "site").rglob("*.html")):
        html = page.read_text(encoding="utf-8")
        article = re.search(r"<article\b.*?</article>", html, re.S)
        if article is None:
            continue
        text = re.sub(r"<(script|style)\b.*?</\1>", " ", article.group(0), flags=re.S)
        text = re.sub(r"<br\s*/?>|</(p|li|tr|h\d|pre|div)>", "\n", text)
        yield page.relative_to(repo).as_posix(), htmllib.unescape(re.sub(r"<[^>]+>", "", text))


# What the student repository does not have, in the words a text would use to send a student to
# it: the reference solutions as an implementation, the npm packages the course's site is built
# with, the course's own tests.
ABSENT = re.compile(r"MINIMODEL_IMPL=reference|--impl reference|'reference'|\bnpm\b|Node\.js"
                    r"|soluciones de referencia|reference solutions|pruebas del proyecto"
                    r"|project's tests|<!-- (?:course|student)")


def instructor_words(texts) -> list[str]:
    """Where one of ``texts`` (``(name, text)``) says one of the ``ABSENT`` words."""
    return [f"{name}:{number}: {match}" for name, text in texts
            for number, line in enumerate(text.splitlines(), 1)
            for match in ABSENT.findall(line)]


def test_no_shipped_text_names_what_students_do_not_get(released, tmp_path):
    assert names_of_absent_things(released) == []
    # the Python files' docstrings may say how the instructors' repository differs
    assert instructor_words((name, text) for name, text in readable_texts(released)
                            if not name.endswith(".py")) == []
    assert instructor_words(site_texts(released)) == []
    repo = tmp_path / "repo"  # the check sees what it must
    shutil.copytree(released, repo)
    with (repo / "docs_en" / "setup.md").open("a", encoding="utf-8") as lesson:
        lesson.write("\nRaw output: `benchmarks/results/x.txt`; then `make sync`.\n")
    assert [line.split(": ", 1)[1] for line in names_of_absent_things(repo)] == [
        "benchmarks/results/x.txt", "make sync"]


def test_messages_offer_no_reference_where_there_is_none(released, tmp_path):
    """The self-check's and the lab runner's help, and the error for an implementation that is
    not there, name only what the student repository has."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MINIMODEL_", "PYTEST_"))}
    env["PYTHONPATH"] = str(released / "src")
    said = ""
    for command in (["-m", "minimodel.cli", "check", "--help"],
                    ["-m", "minimodel.labrun", "--help"],
                    ["-c", "from minimodel.implementation import resolve; resolve('reference')"]):
        run = subprocess.run([sys.executable, *command], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
        said += run.stdout + run.stderr
    assert "No encuentro la implementación 'reference'" in said, said[-2000:]
    assert "Use 'src' or the path of a folder" in said, said[-2000:]
    assert "| reference |" not in said and "'src', 'reference'" not in said, said[-2000:]


def test_lessons_say_what_the_repository_they_are_read_in_has():
    text = ("Intro.\n\n<!-- course -->\n\nCourse words.\n\n<!-- student\nStudent words.\n-->\n"
            "\nEnd.\n")
    assert student_page(text) == "Intro.\n\nStudent words.\n\nEnd.\n"
    assert student_page("<!-- course -->\nOnly here.\n<!-- student\n-->\nEnd.\n") == "End.\n"
    with pytest.raises(LeakError, match="without its pair"):
        student_page("<!-- course -->\nNo student text.\n")
    for lang in ("es", "en"):  # every page of the course pairs its passages
        for page in (REPO_ROOT / f"docs_{lang}").rglob("*.md"):
            student_page(page.read_text(encoding="utf-8"), str(page))


def test_the_released_makefile_needs_no_grader():
    makefile = student_makefile((REPO_ROOT / "Makefile").read_text())
    assert not re.search(r"(?<!\w)grader\b", makefile)
    assert "--impl reference" not in makefile
    assert "demo:" in makefile and "test:" in makefile
    test_recipe = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "minimodel check --all" in test_recipe and "ruff" not in test_recipe, \
        "one line per lab; style stays in make lint"
    for course_words in ("referencia, labs, copias", "reference, labs, drift"):
        assert course_words not in makefile
    assert "test-quick" not in makefile, "the project's quick tests are not a student's"


def make_test(repo: Path, tmp_path: Path, lang: str) -> subprocess.CompletedProcess:
    """``make test`` in the student's repository ``repo``, with this environment's packages."""
    stamp = tmp_path / "installed"
    stamp.touch()  # newer than pyproject.toml: make installs nothing
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MINIMODEL_", "PYTEST_"))}
    env.update(PYTHONPATH=str(repo / "src"), MINIMODEL_LANG=lang)
    return subprocess.run(["make", "-s", "test", f"STAMP={stamp}",
                           f"BIN={Path(sys.executable).parent}"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_test_halfway_through_the_course_says_one_line_per_lab(released, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(released, repo)
    positional = repo / "src" / "minimodel" / "positional"
    shutil.copy2(REFERENCE_DIR / "sinusoidal.py", positional)
    old, new = MISTAKEN["rope"]["direction"]
    rope = (REFERENCE_DIR / "rope.py").read_text(encoding="utf-8")
    (positional / "rope.py").write_text(rope.replace(old, new), encoding="utf-8")
    halfway = make_test(repo, tmp_path, "es")
    said = halfway.stdout
    assert "Error 1" in halfway.stderr and "Traceback" not in said + halfway.stderr, said
    assert len([line for line in said.splitlines() if line.startswith("  ")
                and line[4:9] in {lab.id for lab in LABS}]) == len(LABS), said
    assert "✔ 17.01 Codificación posicional sinusoidal: hecho" in said
    assert "✘ 17.03 RoPE: embeddings posicionales rotatorios: con fallos, en apply_rotary" in said
    assert "La rotación va en sentido contrario" in said  # the self-check's diagnosis
    assert "· 17.04 ALiBi: sesgos lineales en la atención: sin empezar" in said
    assert "1 laboratorio hecho de 12 · 1 con fallos · quedan 11." in said
    line = {lab: next(x for x in said.splitlines() if x[4:9] == lab) for lab in ("18.02", "19.01")}
    assert line["18.02"].endswith(": sin empezar (necesita antes 17.03)"), said  # failing, not done
    assert line["19.01"].endswith(": sin empezar (necesita antes 17.02, 17.03, 17.04, 17.05)"), said
    (positional / "rope.py").write_text(rope, encoding="utf-8")
    fixed = make_test(repo, tmp_path, "en")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "✔ 17.03 RoPE: rotary position embeddings: done" in fixed.stdout
    assert "· 17.04 ALiBi: attention with linear biases: not started" in fixed.stdout
    assert "2 labs of 12 done · 0 failing · 10 left." in fixed.stdout


def test_it_installs_without_the_grader(released, tmp_path):
    repo, target = tmp_path / "repo", tmp_path / "site"
    shutil.copytree(released, repo)  # setuptools builds in the tree (build/lib): not the shared one
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--no-compile", "--target", str(target),
                    str(repo)], check=True, capture_output=True, timeout=600)
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


def test_the_student_readme_explains_the_student_repository(released):
    readme = (released / "README.md").read_text(encoding="utf-8")
    assert readme == (REPO_ROOT / STUDENT_README).read_text(encoding="utf-8")
    for said in ("make lab", "make check LAB=", "make submit", "MINIMODEL_LANG", "--lang"):
        assert said in readme
    makefile = (released / "Makefile").read_text(encoding="utf-8")
    for target in re.findall(r"`make (\w+)", readme):
        assert re.search(rf"^{target}:", makefile, re.M), f"README names make {target}"
    assert "minimodel-grader" not in readme and "make sync" not in readme


def clone(tmp_path: Path) -> Path:
    """A clone of the course's last commit, as an instructor's checkout."""
    repo = tmp_path / "course"
    subprocess.run(["git", "clone", "-q", "--local", str(REPO_ROOT), str(repo)], check=True)
    return repo


def commit(repo: Path) -> None:
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["add", "-A"], [*who, "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_release_refuses_a_commit_whose_stub_drifted(tmp_path):
    repo = clone(tmp_path)
    stub = repo / "src/minimodel/positional/sinusoidal.py"
    stub.write_text((REFERENCE_DIR / "sinusoidal.py").read_text(encoding="utf-8"))
    commit(repo)
    with pytest.raises(LeakError, match="src/minimodel/positional/sinusoidal.py: out of date"):
        release(tmp_path / "out", root=repo)
    assert not (tmp_path / "out").exists()


PLANTED = """import numpy as np


def table(T, d, base=10000.0):
    angles = np.arange(T)[:, None] * base ** (-np.arange(0, d, 2) / d)
    out = np.empty((T, d), np.float32)
    out[:, 0::2], out[:, 1::2] = np.sin(angles), np.cos(angles)
    return out
"""


def test_release_refuses_a_commit_whose_given_code_computes_an_answer(tmp_path):
    repo = clone(tmp_path)
    (repo / "src/minimodel/tables.py").write_text(PLANTED, encoding="utf-8")
    commit(repo)
    said = []
    with pytest.raises(LeakError, match=r"minimodel\.tables\.table computes sinusoidal_pe"):
        release(tmp_path / "out", root=repo, say=said.append)
    assert not (tmp_path / "out").exists()
    assert any("Searching the release" in line for line in said)


def test_release_refuses_a_file_that_copies_a_notebook_solution(tmp_path):
    source = (REPO_ROOT / "solutions/labs/19_01_mini_gpt/notebook.py").read_text(encoding="utf-8")
    solution = source.split("### BEGIN SOLUTION\n")[1].split("### END SOLUTION")[0]
    repo = clone(tmp_path)
    helper = repo / "src/minimodel/helpers.py"
    helper.write_text("def helper(model, idx):\n" + solution, encoding="utf-8")
    commit(repo)
    with pytest.raises(LeakError, match=r"helpers\.py: holds the solution of 19_01_mini_gpt"):
        release(tmp_path / "out", root=repo)
    assert not (tmp_path / "out").exists()
    lines = [line for line in solution.splitlines() if line.strip()]
    helper.write_text("\n".join(lines[:SOLUTION_RUN - 1]) + "\n", encoding="utf-8")
    assert not [p for p in leaks(repo / "src", repo) if "solution" in p]  # a shorter run is not


def test_a_release_ships_the_commit_and_keeps_the_previous_one(released, tmp_path):
    """From a checkout whose working tree holds notes and uncommitted edits, into the folder of
    an earlier release a student wrote in: refused without --force; with it, the earlier folder
    is kept aside (and the release says where) and the new one holds the commit's files only."""
    repo = clone(tmp_path)
    (repo / "notes-for-me.md").write_text("answers: ...")
    stub = repo / "src/minimodel/positional/sinusoidal.py"
    stub.write_text((REFERENCE_DIR / "sinusoidal.py").read_text(encoding="utf-8"))
    lab = repo / "labs/17_01_sinusoidal.ipynb"
    ran = json.loads(lab.read_text(encoding="utf-8"))
    ran["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "42"}]
    lab.write_text(json.dumps(ran), encoding="utf-8")
    out = tmp_path / "student"
    shutil.copytree(released, out)
    (out / "labs" / "my-notes.md").write_text("mine")
    with pytest.raises(LeakError, match="not empty"):
        release(out, root=repo)
    said = []
    release(out, root=repo, force=True, say=said.append)
    saved = [p for p in tmp_path.iterdir() if p.name.startswith("student-saved-")]
    assert len(saved) == 1 and (saved[0] / "labs" / "my-notes.md").read_text() == "mine"
    assert str(saved[0]) in said[0] and not (out / "labs" / "my-notes.md").exists()
    assert not (out / "notes-for-me.md").exists()
    for name in ("src/minimodel/positional/sinusoidal.py", "labs/17_01_sinusoidal.ipynb"):
        assert (out / name).read_text(encoding="utf-8") == committed_text(repo / name, repo)


def test_a_release_inside_the_course_repository_goes_in_build_only(tmp_path):
    for name in ("release", "buildings", "."):
        with pytest.raises(LeakError, match=r"(?s)\[es\].*is inside the course repository"):
            release(tmp_path / name, root=tmp_path)
    assert list(tmp_path.iterdir()) == []
