"""What student code says, made safe for feedback: the one way text from a submission gets there.

Exception messages of module probes and notebook records, notebook cell errors and import errors
are all produced by student code while it runs on hidden inputs, and a message can carry those
inputs back (``raise RuntimeError(f"{q_len=} {slopes.tolist()}")``). Before any of it reaches a
finding, :func:`from_student` splits it into Spanish and English, blanks out every number in any
notation (``37``, ``-1``, ``0.30000001192092896``, ``1e-05``, ``0x25``, digits inside words like
``LEAK_37``), collapses what is left of lists, arrays, tensors and shapes (``tensor([[…]])``,
``torch.Size([…])``) and cuts it to a few hundred characters.

Kept as they are: dtype names (``float32``, ``bfloat16``, ``int64``), lab ids (``17.01``) and the
released stubs' own ``NotImplementedError`` messages (course text, with their hints), which the
student sees anyway.
"""

from __future__ import annotations

import ast
import re
from functools import cache

from minimodel.course import LABS
from minimodel.implementation import STUBS_DIR
from minimodel.messages import split_bilingual

BLANK = "…"
_KEEP = re.compile(r"\b(?:b?float|u?int|complex)(?:8|16|32|64|128)\b|\b\d\d\.\d\d\b")
_NUMBER = re.compile(
    r"(?:(?<![\w)\]])[-+])?"  # a sign that is not a subtraction
    r"(?:0[xX][0-9a-fA-F]+|(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?[jJ]?)")
_RUN = re.compile(rf"{BLANK}(?:(?:[\s,;:]|\.\.\.)*{BLANK})+")  # "…, …, …" or "…\n …"
_LIST = re.compile(rf"\[\s*{BLANK}\s*,?\s*\]")  # "[…]" inside a longer list or array
_LAB_IDS = frozenset(lab.id for lab in LABS)


@cache
def course_messages() -> frozenset[str]:
    """The messages the released stubs raise (whitespace normalised)."""
    found = set()
    for path in sorted(STUBS_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == \
                    "NotImplementedError":
                for arg in node.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        found.add(" ".join(arg.value.split()))
    return frozenset(found)


def redact(text: str) -> str:
    """``text`` with every number blanked out (dtype names and lab ids kept), lists collapsed."""
    parts, last = [], 0
    for match in _KEEP.finditer(text):
        if match.group().count(".") and match.group() not in _LAB_IDS:
            continue
        parts += [_NUMBER.sub(BLANK, text[last:match.start()]), match.group()]
        last = match.end()
    parts.append(_NUMBER.sub(BLANK, text[last:]))
    text = "".join(parts)
    previous = None
    while previous != text:
        previous = text
        text = _LIST.sub(BLANK, _RUN.sub(BLANK, text))
    return text


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + BLANK


def from_student(message: str, limit: int = 300) -> tuple[str, str]:
    """A message from student code as ``(es, en)``: split, redacted, each cut to ``limit``.

    Split first, then cut, so that a long Spanish part never leaves the English side empty.
    """
    message = str(message)
    if " ".join(message.split()) not in course_messages():
        message = redact(message)
    es, en = split_bilingual(message)
    return _short(es, limit), _short(en, limit)
