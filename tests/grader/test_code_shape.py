"""The side that judges reads top to bottom: every function of ``grader/trusted/`` is short and
takes few positional parameters (what would be more is a dataclass or keywords), so that a
grading run is a sequence of named steps with return values, not arguments filled in."""

from __future__ import annotations

import ast

import pytest

from minimodel.implementation import REPO_ROOT

MAX_LINES = 60
MAX_POSITIONAL = 6  # ``self`` and ``cls`` not counted
TRUSTED = REPO_ROOT / "grader" / "trusted"


def functions(source: str) -> list[tuple[str, int, int]]:
    """``(name, lines, positional parameters)`` of every function and method in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            positional = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
            if positional[:1] in (["self"], ["cls"]):
                positional = positional[1:]
            found.append((node.name, node.end_lineno - node.lineno + 1, len(positional)))
    return found


def test_a_long_function_is_measured():
    body = "".join(f"    x{i} = {i}\n" for i in range(3))
    source = f"def f(a, b, *, c):\n{body}\nclass A:\n    def g(self, a):\n        return a\n"
    assert functions(source) == [("f", 4, 2), ("g", 2, 1)]


@pytest.mark.parametrize("path", sorted(TRUSTED.glob("*.py")), ids=lambda p: p.name)
def test_functions_are_short_with_few_positional_parameters(path):
    too_big = [(name, lines, positional)
               for name, lines, positional in functions(path.read_text(encoding="utf-8"))
               if lines > MAX_LINES or positional > MAX_POSITIONAL]
    assert not too_big, (f"{path.name}: (function, lines, positional parameters) over "
                         f"{MAX_LINES} lines or {MAX_POSITIONAL} positional: {too_big}")
