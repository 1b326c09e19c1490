"""The lab notebooks' locked cells (read-only, graded tests) speak to the student.

- Every name a locked cell reads that a student cell must define is named where the student
  writes it: in the markdown just before that cell, or in what the student sees of the cell
  (its code and comments outside the solution).
- Every ``assert`` of a locked cell that the student sees carries a message in both languages
  (``"es / en"``), so that a failure never reads ``AssertionError:`` alone.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
from pathlib import Path

import jupytext
import pytest

from minimodel.course import LABS
from minimodel.implementation import REPO_ROOT

SOURCES = REPO_ROOT / "solutions" / "labs"
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", re.S)
SOLUTION = re.compile(r"### BEGIN SOLUTION.*?### END SOLUTION", re.S)
MAGIC = re.compile(r"^\s*[%!].*$", re.M)

pytestmark = pytest.mark.skipif(not SOURCES.is_dir(), reason="the course repository only")


def grading(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def code(source: str) -> ast.Module:
    """A cell's code as the student's notebook runs it (hidden tests removed)."""
    return ast.parse(MAGIC.sub("", HIDDEN.sub("", source)))


def bound(tree: ast.AST) -> set[str]:
    """Names a cell defines: assignments, functions, classes, imports, loop variables."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def read(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def names_to_define(path: Path) -> list[tuple[str, str, str]]:
    """``(locked cell, name, what the student reads where they write it)`` for each name a
    locked cell reads that only a student cell defines."""
    cells = jupytext.read(path).cells
    found, by_locked, by_student = [], set(), {}
    for index, cell in enumerate(cells):
        meta = grading(cell)
        if cell.cell_type != "code":
            continue
        tree = code(cell.source)
        if meta.get("solution"):
            by_student.update(dict.fromkeys(bound(tree), index))
            continue
        needed = read(tree) - bound(tree) - by_locked - set(dir(builtins))
        for name in sorted(needed & set(by_student)):
            where = by_student[name]
            text = SOLUTION.sub("", cells[where].source)
            before = where - 1
            while before >= 0 and cells[before].cell_type == "markdown":
                text += cells[before].source
                before -= 1
            found.append((meta.get("grade_id", str(index)), name, text))
        by_locked |= bound(tree)
    return found


def locked_asserts(path: Path) -> list[tuple[str, ast.Assert, str]]:
    """``(cell, assert node, its code)`` for every assert the student sees in a locked cell."""
    found = []
    for cell in jupytext.read(path).cells:
        meta = grading(cell)
        if cell.cell_type != "code" or not meta.get("locked"):
            continue
        source = MAGIC.sub("", HIDDEN.sub("", cell.source))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Assert):
                found.append((meta["grade_id"], node, ast.get_source_segment(source, node)))
    return found


def bilingual_message(node: ast.expr | None) -> bool:
    """A string (or f-string) ``"es / en"`` with words on both sides."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    else:
        return False
    es, _, en = text.partition(" / ")
    return bool(re.search(r"[a-zA-Z]{2}", es) and re.search(r"[a-zA-Z]{2}", en))


LAB_SOURCES = [REPO_ROOT / lab.source for lab in LABS]


@pytest.mark.parametrize("path", LAB_SOURCES, ids=[lab.id for lab in LABS])
def test_every_name_a_locked_cell_needs_is_named_where_the_student_writes_it(path):
    unnamed = [
        f"{cell}: {name}"
        for cell, name, text in names_to_define(path)
        if not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text)
    ]
    assert not unnamed, f"{path.name}: names never given to the student: {unnamed}"


@pytest.mark.parametrize("path", LAB_SOURCES, ids=[lab.id for lab in LABS])
def test_every_visible_assert_of_a_locked_cell_has_a_bilingual_message(path):
    bare = [f"{cell}: {text}" for cell, node, text in locked_asserts(path)
            if not bilingual_message(node.msg)]  # fmt: skip
    assert not bare, f"{path.name}: asserts without an 'es / en' message:\n" + "\n".join(bare)


def test_the_checks_find_what_they_look_for():
    """The finders see 17.01's `closed_form` and its asserts (a test that cannot fail is none)."""
    path = SOURCES / "17_01_sinusoidal" / "notebook.py"
    assert ("test-dots", "closed_form") in {(cell, name) for cell, name, _ in names_to_define(path)}
    asserts = locked_asserts(path)
    assert len(asserts) >= 8 and all(bilingual_message(node.msg) for _, node, _ in asserts)
    assert not bilingual_message(ast.parse('assert x, "(3, 5)"').body[0].msg)
    assert not bilingual_message(ast.parse("assert x, (m, n)").body[0].msg)
    assert not bilingual_message(None)


@pytest.mark.parametrize("lab", LABS, ids=[lab.id for lab in LABS])
def test_every_lab_reloads_edited_modules_and_says_so(lab):
    notebook = json.loads((REPO_ROOT / "labs" / f"{lab.slug}.ipynb").read_text())
    first = next(cell for cell in notebook["cells"] if cell["cell_type"] == "code")
    source = "".join(first["source"])
    assert "\nreload_edited_modules()" in source
    assert "no hace\n#      falta reiniciar el núcleo" in source and "no need to restart" in source


def test_an_edited_module_is_picked_up_without_restarting_the_kernel(tmp_path):
    """What a student does: run a cell, edit their file, run the next cell."""
    import nbformat
    from nbclient import NotebookClient

    module = tmp_path / "student_module.py"
    module.write_text("def answer():\n    return 1\n")
    edit = "def answer():\n    return 2\n"
    cells = [
        f"import os, sys, time\nsys.path.insert(0, {str(tmp_path)!r})\n"
        "from minimodel.labkit import reload_edited_modules\n"
        "from student_module import answer\nassert answer() == 1\n"
        "reload_edited_modules()",  # last, as in the labs' setup cells
        f"time.sleep(1.1)\nopen({str(module)!r}, 'w').write({edit!r})",
        "assert answer() == 2, answer()",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    assert notebook.cells[0].outputs == []  # no stray value (it showed True) under the setup


def test_outside_ipython_reloading_is_left_alone():
    import sys

    from minimodel.labkit import reload_edited_modules

    reload_edited_modules()
    assert "IPython.extensions.autoreload" not in sys.modules


@pytest.mark.parametrize("lab", LABS, ids=[lab.id for lab in LABS])
def test_locked_cells_are_read_only_in_jupyterlab(lab):
    """What the notebook calls locked (text, given code, tests) cannot be edited or deleted in
    JupyterLab; the cells a student writes in can."""
    notebook = json.loads((REPO_ROOT / "labs" / f"{lab.slug}.ipynb").read_text())
    cells = [cell["metadata"] for cell in notebook["cells"]]
    locked = [meta for meta in cells if meta.get("nbgrader", {}).get("locked")]
    assert locked and all(meta.get("editable") is False and meta.get("deletable") is False
                          for meta in locked)
    assert all("editable" not in meta and "deletable" not in meta
               for meta in cells if not meta.get("nbgrader", {}).get("locked"))
