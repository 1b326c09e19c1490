"""What student code says, made safe for feedback: the one way text from a submission gets there.

Exception messages of module probes and notebook records, notebook cell errors and import errors
are all produced by student code while the hidden inputs are within its reach (the module is
imported by the process that holds them; a notebook's cells run around the recorder cells that
name them), and anything it says can carry those inputs back: the message, a quoted literal it
picks, the line it raises from, the class's name, an exit code, a dtype. So the feedback on a
run says only words from fixed sets, whatever the run reported:

- an exception's class name only if it is one of Python's built-in exceptions, else
  :data:`OWN_CLASS` ("an exception of a class defined in your code");
- no message, no line and no quoted literal, with two exceptions that owe nothing to a hidden
  input: the released stubs' own ``NotImplementedError`` messages (course text the student has,
  :func:`stub_words`), and a syntax error's line and message, found by the grader parsing the
  file itself (:meth:`Sources.syntax_error`), never taken from the run;
- dtypes only NumPy's and PyTorch's own names (:func:`known_name`).

Where and why their code failed, students see with ``make check``, which runs the visible cases
and shows the whole traceback. Exit codes and signals are said in words by
``grader.trusted.findings``, and no number measured on a hidden input (an error's size, how much
was printed) is ever shown.

The judges still read a message's words (a device mismatch, an overflow) to choose among their
fixed findings; :class:`Sources` keeps for them only what the submission's own code or Python's
fixed sets could have written (used by ``grader.trusted.safe_io`` and ``grader.trusted.nbexec``).
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field
from functools import cache, lru_cache

import numpy as np

from grader.child.probe_runner import BLOCKED, OUT_OF_TIME, forbidden, refusal
from minimodel.implementation import STUBS_DIR
from minimodel.messages import split_bilingual
from minimodel.own_work import refused_call

BLANK = "…"  # what a field of a format string held, in the words a judge reads
_FIELD = re.compile(r"\{[^{}]*\}|%[-#0 +]*(?:\d+|\*)?(?:\.\d+)?[sdifgGeExXroc]")
MAX_TEMPLATES = 5000


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


@cache
def _stub_halves() -> tuple[tuple[str, str], ...]:
    """Each stub message as its Spanish and English halves, whitespace normalised."""
    return tuple(tuple(" ".join(half.split()) for half in
                       split_bilingual(message.replace(" [en] ", "\n[en] ")))
                 for message in sorted(course_messages()))


def stub_words(message: str) -> tuple[str, str] | None:
    """The released stub's ``NotImplementedError`` message that ``message`` holds, as ``(es,
    en)`` (given code that calls a stub says what needed it, then what the stub said: only the
    stub's words are kept); ``None`` when it holds none."""
    text = " ".join(str(message).split())
    return next(((es, en) for es, en in _stub_halves() if es in text and en in text), None)


# --- the fixed sets ----------------------------------------------------------------------------

SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError")
OWN_CLASS = "<own class>"  # an exception class that is not Python's: not a name, never shown
BUILTIN_EXCEPTIONS = frozenset(name for name, value in vars(builtins).items()
                               if isinstance(value, type) and issubclass(value, BaseException))


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
    """A submission's own text (file name -> source): the only place the words a judge reads in a
    run's messages, and the syntax errors the feedback states, may come from (see the module's
    docstring)."""

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
        """``text`` if a stub's own message or the sandbox's refusal, else as the string literal
        of the sources it instantiates, each field a blank (the literal that keeps most of it);
        else ``""``. What the judges read, never what the student does."""
        if " ".join(text.split()) in course_messages() or _refused_import(text):
            return text
        best = None
        for pieces in self.templates:
            if _instantiates(text, pieces) and (
                    best is None or sum(map(len, pieces)) > sum(map(len, best))):
                best = pieces
        return BLANK.join(best) if best else ""

    def syntax_error(self, file: str) -> tuple[int | None, str] | None:
        """The syntax error Python finds in ``file`` (its line and message), parsed here."""
        return _syntax_error(self.files.get(file))

    def clean_error(self, error: dict) -> dict:
        """An exception a run reported, with only what the fixed sets allow: its type, its
        message as :meth:`message` keeps it, the submission's file it came from, and, for a
        syntax error, the line and message the grader finds in that file (none when the file
        parses: the run said so, not Python)."""
        clean = {"type": error["type"] if error["type"] in BUILTIN_EXCEPTIONS or
                 error["type"] in OUT_OF_TIME else OWN_CLASS,
                 "message": self.message(error["message"])}
        file = error.get("file")
        if file in self.files:
            clean["file"] = file
        if clean["type"] in SYNTAX_ERRORS:
            found = self.syntax_error(file) if file in self.files else None
            clean["message"] = found[1] if found else ""
            if found and found[0] is not None:
                clean["lineno"] = found[0]
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
