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


@cache
def _course_text() -> re.Pattern:
    """Either language's half of any stub message, as found inside a longer message (given code
    that calls a stub says what needed it, then what the stub said)."""
    halves = {half for message in course_messages()
              for half in split_bilingual(message.replace(" [en] ", "\n[en] "))}
    return re.compile("(" + "|".join(map(re.escape, sorted(halves, key=len, reverse=True))) + ")")


def _redact_but_course_text(text: str) -> str:
    """``redact`` everything in ``text`` but the stubs' own words."""
    parts = _course_text().split(" ".join(text.split()))
    return "".join(part if index % 2 else redact(part) for index, part in enumerate(parts))


def from_student(message: str, limit: int = 300) -> tuple[str, str]:
    """A message from student code as ``(es, en)``: split, redacted, each cut to ``limit``.

    Split first, then cut, so that a long Spanish part never leaves the English side empty.
    """
    es, en = split_bilingual(str(message))
    return _short(_redact_but_course_text(es), limit), _short(_redact_but_course_text(en), limit)
