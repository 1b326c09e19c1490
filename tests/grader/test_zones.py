"""The grader's zones (``grader/ARCHITECTURE.md``), read from the imports of every file.

``build/`` may use the side that grades (it computes the references through the grading driver),
never the reverse: nothing that judges a student depends on how the course is built. The child
runs next to student code and imports nothing of the grader; the course's library ships to
students and imports nothing of it either. Imports inside functions count.
"""

from __future__ import annotations

import ast

import pytest

from minimodel.implementation import REPO_ROOT

# files -> the modules they must not import (a prefix, dotted)
RULES = {
    "grader/trusted": ("grader.build",),
    "grader/hidden": ("grader.build",),
    "solutions/labs": ("grader.build",),
    "grader/child": ("grader",),
    "src/minimodel": ("grader", "solutions"),
}


def imported(source: str) -> set[str]:
    """Every module ``source`` imports, at any depth (``from a import b`` gives ``a.b``)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def crossing(source: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(name for name in imported(source)
                  if any(name == f or name.startswith(f + ".") for f in forbidden))


def test_an_import_inside_a_function_is_seen():
    source = "import os\n\ndef f():\n    from grader.build.notebooks import nbgrader_on_path\n"
    assert crossing(source, ("grader.build",)) == ["grader.build.notebooks.nbgrader_on_path"]
    assert crossing("import grader\n", ("grader",)) == ["grader"]
    assert crossing("from graders import x\n", ("grader",)) == []


@pytest.mark.parametrize("folder", sorted(RULES))
def test_no_file_imports_across_its_zone(folder):
    found = {str(path.relative_to(REPO_ROOT)): names
             for path in sorted((REPO_ROOT / folder).rglob("*.py"))
             if (names := crossing(path.read_text(encoding="utf-8"), RULES[folder]))}
    assert not found, f"{folder} must not import {RULES[folder]}: {found}"
