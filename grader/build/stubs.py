"""Generate the student stubs in ``src/minimodel/positional/`` from the reference solutions.

Every ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` block of ``solutions/positional/<name>.py``
becomes a marked block that raises ``NotImplementedError`` with a bilingual hint. The hint comes
from the block's ``### HINT es:`` and ``### HINT en:`` lines (repeat a line to continue it).
Signatures, docstrings and the given code around the blocks are copied unchanged.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from minimodel import generated
from minimodel.course import LABS, lab_of
from minimodel.generated import END_MARK, START_MARK

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
HINT = re.compile(r"###\s*HINT\s+(es|en):\s*(.*)")
DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)")
CLASS = re.compile(r"^(\s*)class\s+(\w+)")

# The stubs ship as they are: their header speaks to a student, and names nothing that only the
# course repository has (the stamp says the file is generated; minimodel.generated says how).
HEADER = """\
# ---------------------------------------------------------------------------------------------
# [es] Completa los bloques marcados "TU CÓDIGO" (lección {lesson}). Este archivo es tuyo: una
#      vez que lo editas, ninguna orden del curso lo sobrescribe.
# [en] Fill in the blocks marked "YOUR CODE" (lesson {lesson}). This file is yours: once you
#      edit it, no course command overwrites it.
# {stamp}
# ---------------------------------------------------------------------------------------------
"""


class StubError(ValueError):
    """A solution file whose markers cannot be turned into a stub."""


def _lesson_of(module: str) -> str:
    lab = lab_of(module)
    if lab is None:
        raise StubError(f"{module}.py is not listed in minimodel.course.LABS")
    return lab.id


def _owner(lines: list[str], index: int) -> str:
    """Qualified name of the function that contains line ``index`` (``Class.method``)."""
    indent = len(lines[index]) - len(lines[index].lstrip())
    names: list[str] = []
    for line in reversed(lines[:index]):
        match = DEF.match(line) or CLASS.match(line)
        if match and len(match.group(1)) < indent:
            names.append(match.group(2))
            indent = len(match.group(1))
            if indent == 0:
                break
    if not names:
        raise StubError(f"solution block at line {index + 1} is not inside a function")
    return ".".join(reversed(names))


def make_stub(source: str, module: str) -> str:
    """The stub text for one solution file (``module`` is its name without ``.py``)."""
    lesson = _lesson_of(module)
    lines = source.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip() != BEGIN:
            if line.strip() == END:
                raise StubError(f"{module}.py:{i + 1}: {END} without {BEGIN}")
            out.append(line)
            i += 1
            continue
        indent = line[: len(line) - len(line.lstrip())]
        name = _owner(lines, i)
        hints = {"es": "", "en": ""}
        labels = {"es": "Pista", "en": "Hint"}
        j = i + 1
        while j < len(lines) and lines[j].strip() != END:
            if lines[j].strip() == BEGIN:
                raise StubError(f"{module}.py:{j + 1}: nested {BEGIN}")
            match = HINT.search(lines[j])
            if match:
                lang = match.group(1)
                text = match.group(2).strip()
                hints[lang] = f"{hints[lang]} {text}" if hints[lang] else f" {labels[lang]}: {text}"
            j += 1
        if j == len(lines):
            raise StubError(f"{module}.py:{i + 1}: {BEGIN} without {END}")
        message = (
            f"[es] Falta implementar {name} (lección {lesson}).{hints['es']}\n"
            f"[en] {name} is not implemented yet (lesson {lesson}).{hints['en']}"
        )
        out += [f"{indent}{START_MARK}", f"{indent}raise NotImplementedError("]
        out += [f"{indent}    {chunk}" for chunk in _string_lines(message, 90 - len(indent))]
        out += [f"{indent})", f"{indent}{END_MARK}"]
        i = j + 1
    header = HEADER.format(lesson=lesson, stamp=generated.BLANK)
    return generated.stamped(header + "\n".join(out) + "\n", ".py")


def _string_lines(text: str, width: int) -> list[str]:
    """``text`` as implicitly concatenated string literals of at most ``width`` characters."""
    words = re.findall(r"\S+\s*", text)
    chunks, current = [], ""
    for word in words:
        if current and len(json.dumps(current + word, ensure_ascii=False)) > width:
            chunks.append(current)
            current = ""
        current += word
    chunks.append(current)
    return [json.dumps(chunk, ensure_ascii=False) for chunk in chunks]


def generate(solutions_dir: Path, stubs_dir: Path) -> dict[Path, str]:
    """Map each stub path to the text ``make sync`` writes there."""
    result = {}
    for lab in LABS:
        for module in lab.modules:
            source = (solutions_dir / f"{module}.py").read_text(encoding="utf-8")
            result[stubs_dir / f"{module}.py"] = make_stub(source, module)
    return result
