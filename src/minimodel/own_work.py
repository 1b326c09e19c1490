"""What a graded module may use: one rule for ``make check``, ``make submit`` and the grader.

A graded module (``minimodel/positional/*.py``) computes its answers itself. It may use the
standard library, NumPy, PyTorch, the course's given code (``minimodel``) and the student's other
modules. It may not take its answers from elsewhere:

- ``self-check``: the self-check (``minimodel.selfcheck``) holds the answers of the visible
  checks;
- ``library``: another package (Hugging Face ``transformers`` and its ``apply_rotary_pos_emb``,
  ``rotate_half`` or ``ROPE_INIT_FUNCTIONS``, ``torchtune``, ...) or ``torch.onnx``, which holds a
  RoPE of its own;
- ``hidden``: switching off the watch below (``sys.setprofile``, ``sys.settrace``, the rule's
  own module), after which what the code calls cannot be seen.

Two nets apply the rule, the same everywhere:

1. :func:`refused_modules` reads the sources (never runs them): every import, in any form
   (relative, inside a function, ``importlib.import_module`` or ``__import__`` of a string, a
   string such as ``"transformers.models.llama"``, built with ``+``, ``"".join`` or an
   f-string too), and the attributes that lead to a library's RoPE (``torch.onnx``,
   ``modeling_*``, ``ROPE_INIT_FUNCTIONS``). A module that imports a refused module of the
   student's is refused too.
2. :class:`Watch`, while the student's code runs, records each function of a refused package or
   of the self-check that the student's code calls itself, however it was reached: a name
   computed at run time, ``getattr`` chains, ``exec``, a module the course's given code imported
   (``minimodel.hf_llama.modeling_llama``). Calls the given code makes for itself
   (``minimodel.hf_llama`` runs a Hugging Face Llama) are not the student's, and neither is an
   import (the reading judges those).

Dynamic imports themselves are not refused: the watch sees what they are used for. The watch
runs in the process of the student's code, so a student who sets out to switch it off could; the
reading refuses the names that do it, and a watch found switched off is itself a refusal. What is
left (copying a library's code into one's own file, say) is for a person to judge, as in any
course. The sandbox's own defences (``ctypes``, ``exec`` of stolen files, ...) are the
grader's business, not this rule's.
"""

from __future__ import annotations

import ast
import importlib.machinery
import os
import re
import sys
import sysconfig
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CODE = "borrowed-answer"  # the finding's code, in the self-check's report and the grader's
PACKAGE = "minimodel.positional"  # where the graded modules live
SELF_CHECK = "minimodel.selfcheck"
LIBRARIES = ("numpy", "torch")  # besides the standard library and the course's package
# parts of allowed packages that hold an implementation of what the labs grade
REFUSED_INSIDE = ("torch.onnx",)
# what switches the watch off: the rule's own module, and the hooks it uses
MACHINERY = ("minimodel.own_work",)
MACHINERY_ATTRIBUTES = frozenset({"settrace", "setprofile"})
LIBRARY_ATTRIBUTES = re.compile(r"onnx|modeling_\w+|ROPE_INIT_FUNCTIONS")
DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
TAMPERED = "sys.setprofile"  # what a watch found switched off reports
# the packages of the process the student's code runs in (a test runner, a kernel): what they do
# when the student's code prints or warns is not the student's choice
HARNESS = ("_pytest", "pytest", "pluggy", "hypothesis", "coverage", "xdist", "execnet",
           "ipykernel", "IPython", "zmq", "tornado", "traitlets", "jupyter_client")


@dataclass(frozen=True)
class Refusal:
    """Why a graded module's work is not its own: ``kind`` (``self-check``, ``library`` or
    ``hidden``), the ``name`` it uses, and ``via``, the student's module through which it does
    (``rope.py`` for ``two_d.py``), if not itself."""

    kind: str
    name: str
    via: str | None = None


def kind_of(name: str) -> str | None:
    """``self-check``, ``library`` or ``hidden`` for a module or function ``name`` a graded
    module may not use; ``None`` when it may."""
    top = name.split(".")[0]
    if _inside(name, (SELF_CHECK,)):
        return "self-check"
    if _inside(name, MACHINERY) or top in ("sys", "threading") and \
            name.split(".")[-1] in MACHINERY_ATTRIBUTES:
        return "hidden"
    if _inside(name, REFUSED_INSIDE):
        return "library"
    if top in ("minimodel", "__future__", *LIBRARIES) or top in sys.stdlib_module_names:
        return None
    return "library"


def _inside(name: str, modules: tuple[str, ...]) -> bool:
    return any(name == m or name.startswith(m + ".") for m in modules)


# --- reading the sources ------------------------------------------------------------------------

def _absolute(node: ast.ImportFrom) -> str:
    """The absolute module name of ``from <module> import ...`` in a module of ``PACKAGE``."""
    if not node.level:
        return node.module or ""
    parts = PACKAGE.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def constant_text(node: ast.AST) -> str | None:
    """The string ``node`` always evaluates to, when it is built from literals (``"a" + "b"``,
    ``"".join(["a", "b"])``, an f-string of literals); else ``None``."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = constant_text(node.left), constant_text(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.JoinedStr):
        parts = [constant_text(v) for v in node.values]
        return None if None in parts else "".join(parts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "join" and len(node.args) == 1 and \
            isinstance(node.args[0], (ast.List, ast.Tuple)):
        separator = constant_text(node.func.value)
        parts = [constant_text(e) for e in node.args[0].elts]
        return None if separator is None or None in parts else separator.join(parts)
    return None


def _named(tree: ast.AST) -> Iterator[str]:
    """Every module, watch hook or library attribute ``tree`` names, in the order it names them."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node)
            yield module
            yield from (f"{module}.{alias.name}" for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Attribute):
            if node.attr in MACHINERY_ATTRIBUTES:
                yield f"sys.{node.attr}"
            elif LIBRARY_ATTRIBUTES.fullmatch(node.attr):
                yield "torch.onnx" if node.attr == "onnx" else f"transformers.{node.attr}"
        elif isinstance(node, ast.Call) and node.args and _imports_by_name(node.func) and \
                (text := constant_text(node.args[0])) is not None:
            yield text  # importlib.import_module("transf" + "ormers")
        elif (text := constant_text(node)) is not None:
            yield from _named_in_text(text)


def _imports_by_name(func: ast.AST) -> bool:
    return isinstance(func, ast.Name) and func.id == "__import__" or \
        isinstance(func, ast.Attribute) and func.attr in ("import_module", "__import__")


def _named_in_text(text: str) -> Iterator[str]:
    """A string that names a refused module (``"transformers.models.llama"``) or a watch hook
    (``getattr(sys, "settrace")``)."""
    if text in MACHINERY_ATTRIBUTES:
        yield f"sys.{text}"
    elif DOTTED.fullmatch(text) and (_inside(text, (SELF_CHECK,)) or
                                     "." in text and _installed(text.split(".")[0])):
        yield text


@cache
def _installed(top: str) -> bool:
    """Whether ``top`` is a top-level module Python can find (without importing it)."""
    try:
        return importlib.machinery.PathFinder.find_spec(top) is not None or \
            top in sys.builtin_module_names
    except (ImportError, ValueError):
        return False


def refusal_in(source: str | bytes) -> Refusal | None:
    """The first thing ``source`` uses that a graded module may not (``None`` if nothing, or
    if it does not parse: then the run reports the syntax error)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found = [Refusal(kind, name) for name in _named(tree) if (kind := kind_of(name))]
    for kind in ("self-check", "library", "hidden"):  # the most telling first
        for refusal in found:
            if refusal.kind == kind:
                return refusal
    return None


def imported_modules(source: str | bytes) -> set[str]:
    """The modules of :data:`PACKAGE` that ``source`` imports, in any form."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    return {n.removeprefix(PACKAGE + ".").split(".")[0] for n in _named(tree)
            if n.startswith(PACKAGE + ".")}


def refused_modules(files: dict[str, str | bytes]) -> dict[str, Refusal]:
    """Graded module -> why it is refused, for each module of ``files`` (name -> source) that
    uses what it may not, itself or through another of ``files`` that it imports."""
    found = {m: r for m, source in files.items() if (r := refusal_in(source))}
    imports = {m: imported_modules(source) for m, source in files.items()}
    changed = True
    while changed:  # a module that imports a refused module is refused too
        changed = False
        for module in sorted(set(files) - set(found)):
            other = next((o for o in sorted(found) if o in imports[module]), None)
            if other is not None:
                found[module] = Refusal(found[other].kind, found[other].name, f"{other}.py")
                changed = True
    return dict(sorted(found.items()))


def read_folder(folder: Path) -> dict[str, bytes]:
    """The graded modules' sources in ``folder`` (a ``positional`` folder), by module name."""
    return {p.stem: p.read_bytes() for p in sorted(Path(folder).glob("*.py"))
            if p.name != "__init__.py"}


# --- the words ----------------------------------------------------------------------------------

def explain(refusal: Refusal, module_file: str | None = None) -> tuple[str, str]:
    """What the student reads, ``(es, en)``, in the self-check's report and the grader's
    feedback alike."""
    who_es, who_en = (module_file, module_file) if module_file else ("Tu código", "Your code")
    name, via = refusal.name, refusal.via
    through_es = f" (a través de {via}, que importa)" if via else ""
    through_en = f" (through {via}, which it imports)" if via else ""
    what_es, what_en = {
        "self-check": ("que es parte del curso (la autocomprobación) y no de tu trabajo",
                       "which is part of the course (the self-check), not your work"),
        "library": ("de otra biblioteca: un módulo calificado solo usa la biblioteca estándar de "
                    "Python, NumPy, PyTorch y el código del curso",
                    "from another library: a graded module uses only Python's standard library, "
                    "NumPy, PyTorch and the course's code"),
        "hidden": ("que desactiva la vigilancia de lo que llama tu código, y entonces no se "
                   "puede comprobar de quién es el trabajo",
                   "which switches off the watch on what your code calls, and then whose work "
                   "it is cannot be checked"),
    }[refusal.kind]
    return (f"{who_es} usa {name}{through_es}, {what_es}. El trabajo tiene que ser tuyo: el "
            "corrector da 0 a los apartados que dependen de él, como sin hacer. Escribe tú el "
            "cálculo (torch, numpy y math sí se pueden usar).",
            f"{who_en} uses {name}{through_en}, {what_en}. The work must be your own: the grader "
            "gives 0 to the items that depend on it, as if not done. Write the computation "
            "yourself (torch, numpy and math are fine).")


CALL_REFUSED = "The grader does not allow calling "  # the English half of a refused call


def call_refusal(name: str) -> str:
    """The message of a case whose student code called ``name``, a refused function."""
    return (f"[es] El corrector no deja llamar a {name}: el trabajo tiene que ser tuyo.\n"
            f"[en] {CALL_REFUSED}{name}: the work must be your own.")


def refused_call(text: str) -> str | None:
    """The function ``text`` says was refused, when ``text`` is, word for word,
    :func:`call_refusal` of a real function of a refused package (so that nothing else, a
    hidden value say, can pass for one); else ``None``."""
    found = re.search(re.escape(CALL_REFUSED) + r"([\w.]{1,200})", text)
    if not found or text != call_refusal(found.group(1)):
        return None
    name = found.group(1)
    return name if name == TAMPERED or kind_of(name) and _defined(name) else None


def _defined(name: str) -> bool:
    """Whether ``name`` is ``package.module.function`` (or ``...Class.method``) of an installed
    package, its module a file and each later part a word of that file."""
    parts = name.split(".")
    spec = importlib.machinery.PathFinder.find_spec(parts[0]) if DOTTED.fullmatch(name) else None
    if spec is None or not spec.origin or not spec.submodule_search_locations:
        return False
    path, rest = Path(spec.origin), parts[1:]
    while rest and (path.parent / rest[0]).is_dir():
        path, rest = path.parent / rest[0] / "__init__.py", rest[1:]
    if rest and (path.parent / f"{rest[0]}.py").is_file():
        path, rest = path.parent / f"{rest[0]}.py", rest[1:]
    if not rest or len(rest) > 2 or not path.is_file():
        return False
    text = path.read_text(encoding="utf-8", errors="replace")
    return all(re.search(rf"\b{re.escape(part)}\b", text) for part in rest)


# --- the watch ----------------------------------------------------------------------------------

class Watch:
    """While active (``with Watch(folder) as watch:``), record in ``watch.called`` each function
    of a refused package (:func:`kind_of`) or of the self-check that code in ``folder`` (the
    student's files) calls itself, directly or through the standard library.

    A profile function (``sys.setprofile``, new threads too) sees each Python call; the zone of
    each file (the student's, the course's, an allowed library, a refused one) is worked out once.
    """

    def __init__(self, folder: str | Path, checker: str | Path | None = None) -> None:
        """``checker``: the file of the checks that call the student's code (a lab's self-check
        module), whose own functions the student's code may call back (a layer handed to
        ``permutation_equivariance_gap``), as it calls the grader's in the sandbox."""
        self.student = os.path.realpath(folder) + os.sep
        self.called: list[str] = []
        self._zones: dict[str, str] = {os.path.realpath(checker): "allowed"} if checker else {}
        self._previous = None
        self._roots = _roots()
        self._hook = self._profile  # one bound method, to compare with sys.getprofile()
        self._forking = 0  # inside os.fork: what runs there are the libraries' at-fork hooks

    def __enter__(self) -> Watch:
        self._previous = sys.getprofile(), threading.getprofile()
        sys.setprofile(self._hook)
        threading.setprofile(self._hook)
        return self

    def __exit__(self, *exc) -> None:
        tampered = sys.getprofile() is not self._hook
        sys.setprofile(self._previous[0])
        threading.setprofile(self._previous[1])
        if tampered:
            self._add(TAMPERED)

    def take(self) -> list[str]:
        """The functions recorded since the last ``take``."""
        called, self.called = self.called, []
        return called

    def _add(self, name: str) -> None:
        if name not in self.called:
            self.called.append(name)

    def _profile(self, frame, event, arg) -> None:
        if event != "call":
            if arg is _FORK and event in ("c_call", "c_return", "c_exception"):
                self._forking += 1 if event == "c_call" else -1
            return
        if self._forking:
            return  # a hook a library registered with os.register_at_fork, not a call of ours
        code = frame.f_code
        zone = self._zones.get(code.co_filename) or self._zone(code.co_filename)
        if zone != "refused":
            return
        caller = frame.f_back
        while caller is not None and self._zone(caller.f_code.co_filename) == "through":
            if caller.f_code.co_filename.startswith("<frozen importlib"):
                return  # an import: the reading judges imports, in any form
            caller = caller.f_back
        if caller is not None and self._zone(caller.f_code.co_filename) == "student":
            qualname = code.co_qualname.split(".<locals>")[0]
            self._add(f"{frame.f_globals.get('__name__', '?')}.{qualname}")

    def _zone(self, filename: str) -> str:
        """``student``, ``through`` (the standard library, code with no file), ``refused``
        (another package, ``torch.onnx``, the self-check) or ``allowed`` (the course, NumPy,
        PyTorch, the grader's own code)."""
        zone = self._zones.get(filename)
        if zone is None:
            path = os.path.realpath(filename) if os.path.isabs(filename) else ""
            zone = "through" if not path else "student" if path.startswith(self.student) else \
                self._zones.get(path) or \
                next((z for root, z in self._roots if path.startswith(root)), "allowed")
            self._zones[filename] = zone
        return zone


_FORK = getattr(os, "fork", None)


@cache
def _roots() -> tuple[tuple[str, str], ...]:
    """``(folder, zone)`` pairs, the most specific first: where the course, the self-check, the
    allowed libraries and the standard library are; any other installed package is refused."""
    here = Path(__file__).resolve().parent
    roots = [(str(here / "selfcheck"), "refused"), (str(here), "allowed")]
    for library in LIBRARIES:
        spec = importlib.machinery.PathFinder.find_spec(library)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            real = os.path.realpath(folder)
            roots += [(os.path.join(real, *r.split(".")[1:]), "refused")
                      for r in REFUSED_INSIDE if r.split(".")[0] == library]
            roots.append((real, "allowed"))
    paths = sysconfig.get_paths()
    packages = {os.path.realpath(paths[k]) for k in ("purelib", "platlib")}
    roots += [(os.path.join(p, h), "allowed") for p in sorted(packages) for h in HARNESS]
    roots += [(p, "refused") for p in sorted(packages)]  # site-packages, under the stdlib's
    roots += [(os.path.realpath(paths[k]), "through") for k in ("stdlib", "platstdlib")]
    return tuple((root.rstrip(os.sep) + os.sep, zone) for root, zone in roots)
