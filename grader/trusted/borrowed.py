"""Refuse credit for values a submission borrows instead of computing them.

The released package holds modules that could give an answer (the self-check's oracles); the
list is ``FORBIDDEN_MODULES`` in ``grader/child/probe_runner.py``, where the sandbox also blocks
them at run time. Before a student's module is run, its source is read here (never executed): an
import of a forbidden module in any form a reader can see (``import``, ``from ... import``, a
relative import, ``importlib.import_module`` or ``__import__``, or any string naming one) makes
every item that depends on that module score 0, like the stub, with a finding that names what was
imported. A graded module that imports such a module of the submission (``two_d.py`` imports
``rope.py``) is refused too.
"""

from __future__ import annotations

import ast
import re

from grader.child.probe_runner import forbidden
from grader.trusted.findings import Finding, borrowed_finding

PACKAGE = "minimodel.positional"  # where the student's modules live
DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def _absolute(node: ast.ImportFrom) -> str:
    """The absolute module name of ``from <module> import ...`` in a module of ``PACKAGE``."""
    if not node.level:
        return node.module or ""
    parts = PACKAGE.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def imported_names(source: bytes) -> set[str]:
    """Every module name ``source`` imports or names in a string (``set()`` if it does not
    parse: the run then reports the syntax error)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node)
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                DOTTED.fullmatch(node.value):
            names.add(node.value)  # importlib.import_module("..."), __import__("..."), ...
    return names


def borrowed_modules(files: dict[str, bytes]) -> dict[str, Finding]:
    """Graded module -> why its items score 0, for each module of ``files`` (name -> source
    the student submitted) that imports a forbidden module, itself or through another."""
    imports = {module: imported_names(source) for module, source in files.items()}
    direct = {module: sorted(n for n in names if forbidden(n)) for module, names in imports.items()}
    found: dict[str, tuple[str, str | None]] = {
        module: (names[0], None) for module, names in direct.items() if names}
    changed = True
    while changed:  # a module that imports a refused module of the submission is refused too
        changed = False
        for module, names in imports.items():
            if module in found:
                continue
            for other in sorted(found):
                if f"{PACKAGE}.{other}" in names:
                    found[module] = (found[other][0], f"{other}.py")
                    changed = True
                    break
    return {module: borrowed_finding(name, f"{module}.py", via)
            for module, (name, via) in sorted(found.items())}
