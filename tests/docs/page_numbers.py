"""Check the numbers of a lesson page: numeric formulas, rounded values, code blocks and output.

Used by the numbers tests of lessons 17.04-17.06. ``check_statement`` evaluates every ``=`` and
``\\approx`` between two numeric sides of a formula (numbers, ``\\frac``, powers, ``e^{x}``,
``\\sqrt``, ``\\log_2``, ``\\pi``, byte units); a side with a symbol is skipped. A number written
with ``\\approx`` may be off by half a unit in its last digit. ``run_code_blocks`` runs each
``python`` block of a page against the reference and compares its output with the ``text`` block
that follows it.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys

from docs_pages import ROOT, decimals

RELATION = re.compile(r"\\approx|=|<|>|\\le|\\ge|\\iff|\\gg|\\ll|\\propto")
_FUNCTIONS = {
    "pi": math.pi,
    "sqrt": math.sqrt,
    "exp": math.exp,
    "log": math.log,
    "log2": math.log2,
    "log10": math.log10,
    "floor": math.floor,
    "sin": math.sin,
    "cos": math.cos,
}


def statements(math_list: list[str]) -> list[str]:
    """Formulas split at ``\\qquad`` (several statements on one line)."""
    return [part.strip() for m in math_list for part in re.split(r",?\s*\\qquad\s*", m)]


def to_python(tex: str) -> str | None:
    """A Python expression for a numeric LaTeX expression, or None if it is not numeric."""
    s = tex.strip().rstrip(",.;:")
    s = s.replace("\\ \\text{GiB}", "*2**30").replace("\\ \\text{B}", "")
    s = s.replace("\\left", "").replace("\\right", "").replace("\\big", "").replace("\\Big", "")
    s = re.sub(r"(?<=\d)\\,(?=\d{3}(?!\d))", "", s)  # thousands: 47\,117, 4\,194\,304
    s = s.replace("\\,", " ").replace("\\cdot", "*").replace("\\times", "*").replace("\\pi", " pi ")
    s = s.replace("\\tfrac", "\\frac").replace("\\dfrac", "\\frac").replace("−", "-")
    s = re.sub(r"\\log_2\s*([\d.]+)", r"log2(\1)", s)
    s = re.sub(r"\\ln\s*([\d.]+)", r"log(\1)", s)
    s = re.sub(r"\\ln\s*\(", "log(", s)
    s = s.replace("\\lfloor", " floor(").replace("\\rfloor", ")")
    s = re.sub(r"\\(sin|cos)\s*([\d.]+)", r"\1(\2)", s)
    s = re.sub(r"(?<![A-Za-z\\])e\^\{", r"exp{", s)
    while True:  # innermost braces first
        new = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"((\1)/(\2))", s)
        new = re.sub(r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)", new)
        new = re.sub(r"exp\{([^{}]*)\}", r"exp(\1)", new)
        new = re.sub(r"\^\{([^{}]*)\}", r"**(\1)", new)
        if new == s:
            break
        s = new
    s = re.sub(r"\^(\d)", r"**\1", s)
    s = re.sub(
        r"((?<![A-Za-z\d])[\d.]+|\))\s*(pi|sqrt|exp|log2|log10|log|floor|sin|cos|\()", r"\1*\2", s
    )
    s = re.sub(r"(\d|\))\s+(\d)", r"\1*\2", s)
    allowed = r"(?:\d+(?:\.\d*)?|pi|sqrt|exp|log2|log10|log|floor|sin|cos|\*\*|[\s+\-*/()])*"
    return s if s.strip() and re.fullmatch(allowed, s) else None


def evaluate(expression: str) -> float:
    return float(eval(expression, {"__builtins__": {}}, dict(_FUNCTIONS)))  # noqa: S307


def value_and_tolerance(tex: str, rounded: bool) -> tuple[float, float] | None:
    """``(value, tolerance)``; the tolerance covers the rounding of written decimals."""
    expression = to_python(tex)
    if expression is None:
        return None
    value = evaluate(expression)
    if not rounded:
        return value, 0.0
    tolerance = 0.0
    for literal in re.finditer(r"(?<![\w.])\d+\.\d+", expression):
        half = 0.5 * 10.0 ** -decimals(literal.group())
        start, end = literal.span()
        bumped = f"{expression[:start]}({literal.group()}+{half!r}){expression[end:]}"
        tolerance += abs(evaluate(bumped) - value)
    bare = re.fullmatch(r"\s*(\d+)\s*", expression)
    if bare and "\\approx" in tex:
        tolerance = 0.5
    return value, tolerance


def check_statement(tex: str) -> int:
    """Assert every ``=``/``\\approx`` between numeric sides of ``tex``; return how many."""
    parts = RELATION.split(tex)
    relations = RELATION.findall(tex)
    checked = 0
    for left, right, relation in zip(parts, parts[1:], relations, strict=False):
        if relation not in ("=", "\\approx"):
            continue
        rounded = relation == "\\approx"
        a, b = value_and_tolerance(left, rounded), value_and_tolerance(right, rounded)
        if a is None or b is None:
            continue
        slack = a[1] + b[1] + 1e-9 * max(abs(a[0]), abs(b[0]), 1.0)
        claim = f"{left.strip()} {relation} {right.strip()}"
        assert abs(a[0] - b[0]) <= slack, f"{claim}: {a[0]:.6g} vs {b[0]:.6g} (± {slack:.2g})"
        checked += 1
    return checked


def check_all_statements(math_list: list[str], not_numeric: set[str]) -> int:
    """Check every formula; one with ``\\approx`` must be numeric or listed in ``not_numeric``."""
    total = 0
    for statement in statements(math_list):
        if statement in not_numeric:
            continue
        checked = check_statement(statement)
        if "\\approx" in statement:
            assert checked, f"cannot check `{statement}`: make it numeric or check it apart"
        total += checked
    return total


def run_code_blocks(page) -> int:
    """Run each ``python`` block in a fresh interpreter against the reference; compare output.

    Returns the number of blocks whose output was compared with a following ``text`` block.
    """
    env = {**os.environ, "MINIMODEL_IMPL": "reference", "PYTHONHASHSEED": "0"}
    compared = 0
    blocks = page.code
    for index, (info, source) in enumerate(blocks):
        if info != "python":
            continue
        run = subprocess.run(
            [sys.executable, "-c", source],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert run.returncode == 0, f"code block #{index} failed:\n{run.stderr}"
        following = blocks[index + 1] if index + 1 < len(blocks) else ("", "")
        if following[0] == "text":
            assert run.stdout == following[1], (
                f"output of code block #{index}:\n{run.stdout}\n--- the page shows ---\n"
                f"{following[1]}"
            )
            compared += 1
    return compared


def cell_number(cell: str) -> float:
    """A table cell as a number (``−`` and ``$...$`` allowed)."""
    return float(cell.replace("−", "-").strip("$ "))
