"""What student code says, made safe for feedback: the one way text from a submission gets there.

Exception messages of module probes and notebook records, notebook cell errors and import errors
are all produced by student code while it runs on hidden inputs, and anything it says can carry
those inputs back: in the message, but also in the exception's class name, a line number, an exit
code, a dtype, digits written as words, or text taken from IPython's input history (where the
recorder cells name the hidden checks). So what comes from a run reaches the feedback only from
fixed sets, checked where the trusted side reads it (:class:`Sources`, used by
``grader.trusted.safe_io`` and ``grader.trusted.nbexec``):

- an exception's class name only if it is one of Python's built-in exceptions, else
  :data:`OWN_CLASS` ("an exception of a class defined in your code");
- a file name only if it is one of the submission's own files, and a line number only if it is a
  line of that file (a syntax error's line and message are the grader's own, found by parsing the
  file here, never the run's);
- a message only where it is written in the submission's own code: one string literal (an
  f-string or a format string, whose fields stand for what they held) or a released stub's own
  ``NotImplementedError`` message; any other message is dropped;
- dtypes only NumPy's and PyTorch's own names (:func:`known_name`).

Then :func:`from_student` splits the message into Spanish and English, blanks out every number in
any notation (``37``, ``0.30000001192092896``, ``1e-05``, ``0x25``, digits inside words like
``LEAK_37``), collapses what is left of lists, arrays, tensors and shapes and cuts it to a few
hundred characters. Kept as they are: dtype names (``float32``, ``bfloat16``, ``int64``), lab ids
(``17.01``) and the released stubs' own ``NotImplementedError`` messages (course text, with their
hints), which the student sees anyway. Exit codes and signals are said in words by
``grader.trusted.findings``, and no number measured on a hidden input (an error's size, how much
was printed) is ever shown.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field
from functools import cache, lru_cache

import numpy as np

from grader.child.probe_runner import BLOCKED, OUT_OF_TIME, forbidden, refusal
from minimodel.course import LABS
from minimodel.implementation import STUBS_DIR
from minimodel.messages import split_bilingual
from minimodel.own_work import refused_call

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

# --- the fixed sets ----------------------------------------------------------------------------

OWN_CLASS = "<own class>"  # an exception class that is not Python's: not a name, never shown
BUILTIN_EXCEPTIONS = frozenset(name for name, value in vars(builtins).items()
                               if isinstance(value, type) and issubclass(value, BaseException))
_FIELD = re.compile(r"\{[^{}]*\}|%[-#0 +]*(?:\d+|\*)?(?:\.\d+)?[sdifgGeExXroc]")
MAX_TEMPLATES = 5000


def exception_words(name: str) -> tuple[str, str]:
    """How the feedback names an exception class (``OWN_CLASS`` in words)."""
    if name == OWN_CLASS:
        return ("una excepción de una clase definida en tu código",
                "an exception of a class defined in your code")
    return name, name


# PyTorch's dtypes by name (``str(dtype)`` without ``torch.``), written out so that the grading
# process need not import PyTorch; tests/grader/test_redact.py checks them against the installed one
TORCH_DTYPES = frozenset({
    "bfloat16", "bits16", "bits1x8", "bits2x4", "bits4x2", "bits8", "bool", "complex128",
    "complex32", "complex64", "float16", "float32", "float4_e2m1fn_x2", "float64",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
    "int1", "int16", "int2", "int3", "int32", "int4", "int5", "int6", "int64", "int7", "int8",
    "qint32", "qint8", "quint2x4", "quint4x2", "quint8", "uint1", "uint16", "uint2", "uint3",
    "uint32", "uint4", "uint5", "uint6", "uint64", "uint7", "uint8"})


@cache
def _dtype_names() -> frozenset[str]:
    """NumPy's dtype names and PyTorch's (``float32``, ``bfloat16``, ``torch.bfloat16``)."""
    names = {np.dtype(kind).name for kind in set(np.sctypeDict.values())}
    return frozenset(names | TORCH_DTYPES | {f"torch.{name}" for name in TORCH_DTYPES})


def known_name(text: str) -> bool:
    """Whether ``text`` is a dtype of NumPy's or PyTorch's, or the name of a built-in type or of
    NumPy's and PyTorch's array types (what a judge may say a student's value is)."""
    return text in ("ndarray", "Tensor", "Parameter") or text in _BUILTIN_TYPES or \
        text in _dtype_names()


_BUILTIN_TYPES = frozenset(name for name, value in vars(builtins).items()
                           if isinstance(value, type)) | {"NoneType"}


@dataclass
class Sources:
    """A submission's own text (file name -> source): the only place the words and line numbers
    a run reports may come from (see the module's docstring)."""

    files: dict[str, str] = field(default_factory=dict)
    extra: tuple[str, ...] = ()  # more code the student sees (a notebook's given cells)

    @classmethod
    def of(cls, files: dict[str, bytes], extra: tuple[str, ...] = ()) -> Sources:
        return cls({name: data.decode("utf-8", "replace") for name, data in files.items()},
                   extra)

    @property
    def templates(self) -> list[tuple[str, ...]]:
        return _templates(tuple(self.files.values()) + self.extra)

    def message(self, text: str) -> str:
        """``text`` if a stub's own message, else as the string literal of the sources it
        instantiates, each field a blank (the literal that keeps most of it); else ``""``."""
        if " ".join(text.split()) in course_messages() or _refused_import(text):
            return text
        best = None
        for pieces in self.templates:
            if _instantiates(text, pieces) and (
                    best is None or sum(map(len, pieces)) > sum(map(len, best))):
                best = pieces
        return BLANK.join(best) if best else ""

    def line(self, file: object, lineno: object) -> bool:
        """Whether ``lineno`` is a line of the submission's file ``file``."""
        text = self.files.get(file) if isinstance(file, str) else None
        return text is not None and isinstance(lineno, int) and \
            1 <= lineno <= text.count("\n") + 1

    def syntax_error(self, file: str) -> tuple[int | None, str] | None:
        """The syntax error Python finds in ``file`` (its line and message), parsed here."""
        return _syntax_error(self.files.get(file))

    def clean_error(self, error: dict) -> dict:
        """An exception a run reported, with only what the fixed sets allow (type, message,
        file and line)."""
        clean = {"type": error["type"] if error["type"] in BUILTIN_EXCEPTIONS or
                 error["type"] in OUT_OF_TIME else OWN_CLASS,
                 "message": self.message(error["message"])}
        file = error.get("file")
        if file in self.files:
            clean["file"] = file
            found = self.syntax_error(file) if clean["type"] in (
                "SyntaxError", "IndentationError", "TabError") else None
            if found:
                lineno, clean["message"] = found
                if lineno is not None:
                    clean["lineno"] = lineno
            elif self.line(file, error.get("lineno")):
                clean["lineno"] = error["lineno"]
        return clean


def _refused_import(text: str) -> bool:
    """Whether ``text`` is, word for word, the sandbox's refusal of a forbidden import
    (``probe_runner.refusal``) or of a call (``own_work.call_refusal``): the grader's own words
    around a name from its fixed list, or of a function an installed package defines."""
    found = re.search(re.escape(BLOCKED) + r"([\w.]{1,200})", text)
    return bool(found) and forbidden(found.group(1)) and text == refusal(found.group(1)) or \
        refused_call(text) is not None  # the watch's refusal of a real library function


@lru_cache(maxsize=64)  # a worker's recent students, not all of them
def _syntax_error(text: str | None) -> tuple[int | None, str] | None:
    if text is None:
        return None
    try:
        ast.parse(text)
    except SyntaxError as error:
        return error.lineno, str(error.msg)
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


@lru_cache(maxsize=16)
def _templates(texts: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The literal pieces of every string literal of ``texts`` (Python sources), fields split
    out: ``f"T={T} d={d}"`` -> ``("T=", " d=", "")``."""
    found: set[tuple[str, ...]] = set()
    for text in texts:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                pieces, current = [], ""
                for part in node.values:
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        current += part.value
                    else:
                        pieces.append(current)
                        current = ""
                found.add((*pieces, current))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
                found.add(tuple(_FIELD.split(node.value)))
            if len(found) >= MAX_TEMPLATES:
                break
    return sorted(found)


def _instantiates(text: str, pieces: tuple[str, ...]) -> bool:
    """Whether ``text`` is ``pieces`` with anything in the fields between them."""
    if len(pieces) == 1:
        return text == pieces[0]
    first, *middle, last = pieces
    if not (text.startswith(first) and text.endswith(last)) or \
            len(text) < len(first) + len(last):
        return False
    position, end = len(first), len(text) - len(last)
    for piece in middle:  # leftmost placement leaves the most room for the rest
        position = text.find(piece, position, end)
        if position < 0:
            return False
        position += len(piece)
    return True
