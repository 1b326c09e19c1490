"""Take the student-editable files out of a submission, wherever the archive put them.

A submission is a folder, a ``.zip`` or a tar of the student's copy of the repository, whole or
partial, in whatever shape a real archive has (see :mod:`grader.trusted.archive`). Only these
files are taken:

- ``<module>.py`` for each encoding the course lists (usually in ``src/minimodel/positional/``);
- ``<slug>.ipynb`` for each lab (usually in ``labs/``).

Each is recognised by its name and its content: found in its usual place (under any wrapping
folders, ``labs/**`` for a notebook) it is taken as it is; found elsewhere (at the top level,
in another folder, inside an archive in the archive) it is taken only when its content is that
file's (a module defines one of the names the released stub defines; a notebook holds the lab's
graded cells, which also recognises a renamed notebook), and the student is told where it was
found.
The usual place wins over any other copy.

Everything else comes from the pristine course. Nothing is extracted: the files are read into
memory under size caps. Entries that climb out, links, special files and files that are
not valid text each give a clear message in both languages, and the file counts as missing.

A submission the grader cannot read as a whole (a damaged or truncated archive, an empty one,
nothing recognisable, a file over a limit, encrypted entries, too much to decompress, a name
twice, a type of file the grader does not take) is **flagged**: its
:attr:`Submission.flags` say why, in both languages, and what to send again; the record's status
says ``flagged``, so that no such submission ends as a silent zero.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tokenize
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path, PurePosixPath

from grader.trusted.archive import (
    TOO_MUCH_DATA,
    Entry,
    OverBudget,
    Unreadable,
    archive_stem,
    listing,
    shown,
)
from grader.trusted.verdicts import Finding
from minimodel.course import LABS, encoding_modules
from minimodel.implementation import REPO_ROOT, STUBS_DIR

MAX_PY_BYTES = 1 << 20
MAX_NOTEBOOK_BYTES = 16 << 20
MAX_NOTEBOOKS_OPENED = 64  # .ipynb files with other names opened to recognise a renamed lab
POSITIONAL = "src/minimodel/positional"
RESUBMIT = Finding(
    "resubmit",
    "Qué hacer: vuelve a entregar un .zip de tu copia del repositorio (o de las carpetas "
    "src/minimodel/positional/ y labs/) hecho de nuevo desde tus archivos; no hace falta "
    "incluir .venv/ ni .git/.",
    "What to do: submit again a .zip of your copy of the repository (or of the folders "
    "src/minimodel/positional/ and labs/), made afresh from your files; .venv/ and .git/ are not "
    "needed.")

NOTHING_USABLE = Finding(
    "nothing-usable",
    "Ninguno de los archivos del curso que hay en la entrega se pudo usar (los motivos están "
    "arriba).",
    "None of the course's files in the submission could be used (the reasons are above).")


@dataclass
class Submission:
    """The editable files of one student, and what was wrong with the rest."""

    student_id: str
    source: Path
    files: dict[str, bytes] = field(default_factory=dict)  # "src/.../sinusoidal.py", "labs/x.ipynb"
    messages: list[Finding] = field(default_factory=list)
    flags: list[Finding] = field(default_factory=list)  # why it needs an instructor's look
    found: dict[str, str] = field(default_factory=dict)  # canonical path -> where it was found

    def module(self, name: str) -> bytes | None:
        return self.files.get(f"{POSITIONAL}/{name}.py")

    def notebook(self, slug: str) -> bytes | None:
        return self.files.get(f"labs/{slug}.ipynb")

    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for name in sorted(self.files):
            digest.update(name.encode() + b"\0" + hashlib.sha256(self.files[name]).digest())
        for message in [*self.messages, *self.flags]:
            digest.update(message.code.encode())
        return digest.hexdigest()[:24]


@dataclass(frozen=True)
class Target:
    """One file the course takes: its canonical path, size cap and how to recognise it."""

    path: str
    cap: int
    names: frozenset[str]  # a module's top-level definitions, a notebook's graded cell ids

    @property
    def filename(self) -> str:
        return PurePosixPath(self.path).name

    @property
    def notebook(self) -> bool:
        return self.path.endswith(".ipynb")


@cache
def targets() -> tuple[Target, ...]:
    """Every file the course takes, with what recognises it (from the released stubs and
    notebooks, read once)."""
    found = []
    for module in encoding_modules():
        stub = STUBS_DIR / f"{module}.py"
        text = stub.read_text(encoding="utf-8") if stub.exists() else ""
        names = frozenset(re.findall(r"^(?:def|class)\s+([A-Za-z_]\w*)", text, re.MULTILINE))
        found.append(Target(f"{POSITIONAL}/{module}.py", MAX_PY_BYTES, names))
    for lab in LABS:
        released = REPO_ROOT / "labs" / f"{lab.slug}.ipynb"
        ids = _grade_ids(released.read_bytes()) if released.exists() else frozenset()
        found.append(Target(f"labs/{lab.slug}.ipynb", MAX_NOTEBOOK_BYTES, ids or frozenset()))
    return tuple(found)


def discover(folder: Path) -> list[tuple[str, Path]]:
    """The submissions in ``folder``: (student_id, path), one per folder, archive or other file
    (which :func:`unpack` flags with its reason, so that none is lost in silence), sorted. The
    id is the name without its archive suffix, or the whole name when another took that id
    (:func:`printable_id`)."""
    entries: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        student_id = (None if path.is_dir() else archive_stem(path.name)) or path.name
        entries[path.name if student_id in entries else student_id] = path
    return [(printable_id(student_id), path) for student_id, path in entries.items()]


def printable_id(name: str) -> str:
    """``name`` as a student id: itself when every character prints; else with the others
    escaped (a line break, a tab, a direction mark) and a hash of the name added, so that an id
    can neither forge a line of ``grading.log`` nor hide among its classmates' ids."""
    if name.isprintable():
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()
    return f"{shown(name)}-{digest[:8]}"


def unpack(student_id: str, path: Path) -> Submission:
    """Read one submission; never raises for anything the student controls."""
    submission = Submission(student_id, path)
    with listing(path) as found:
        submission.messages += found.notes
        submission.flags += found.flags
        files = found.entries
        for entry in files:
            if entry.kind == "link":
                submission.messages.append(Finding(
                    "symlink", f"«{shown(entry.where)}» es un enlace simbólico; no se sigue.",
                    f"'{shown(entry.where)}' is a symbolic link; it is not followed."))
        taken_from: dict[Target, Entry] = {}
        refused = False  # a file the course takes, refused as a link or a special file
        for target in targets():
            candidates = _candidates(target, files)
            refused = refused or any(c.kind != "file" for c in candidates)
            entry = _take(submission, target, candidates)
            if entry is not None:
                taken_from[target] = entry
        _take_renamed_notebooks(submission, files, taken_from)
        _check_text(submission)
        if found.budget.spent and TOO_MUCH_DATA not in submission.flags:
            submission.flags.append(TOO_MUCH_DATA)
        for target, entry in taken_from.items():
            if target.path in submission.files and not _usual_place(entry, target):
                submission.found[target.path] = entry.where
                submission.messages.append(Finding(
                    "found-elsewhere",
                    f"{target.path} se tomó de «{shown(entry.where)}», que no es su sitio "
                    "habitual.",
                    f"{target.path} was taken from '{shown(entry.where)}', which is not its usual "
                    "place.", scoring=False))
    if not submission.files and not submission.flags:
        submission.flags.append(NOTHING_USABLE if taken_from or refused
                                else _nothing_found(found.entries, found.skipped))
    if submission.flags:
        submission.flags.append(RESUBMIT)
    return submission


def flag_reason(submission: Submission) -> str:
    """The short English reason for ``grades.csv`` (``flagged: <reason>``)."""
    codes = [f.code for f in submission.flags if f.code != "resubmit"]
    return ", ".join(dict.fromkeys(codes))


def _plain_name(name: str) -> str:
    """A file name without the marks of a copy: ``rope (1).py``, ``17_01-Copy1.ipynb``."""
    stem, dot, suffix = name.rpartition(".")
    stem = re.sub(r"(\s*\(\d+\)|[-_ ](copy|copia)\d*)$", "", stem, flags=re.IGNORECASE)
    return f"{stem}{dot}{suffix}".lower()


def _usual_place(entry: Entry, target: Target) -> bool:
    """Where the course keeps it, under any wrapping folders, and not inside an archive in the
    submission (the archive a student put in their folder is the submission itself)."""
    if entry.nested:
        return False
    parts = PurePosixPath(entry.name).parts
    if parts[-1] != target.filename:
        return False
    if target.notebook:  # labs/**/<slug>.ipynb, or nbgrader's <slug>/<slug>.ipynb
        return "labs" in parts[:-1] or (len(parts) >= 2 and parts[-2] == target.filename[:-6])
    return tuple(parts[-4:-1]) == ("src", "minimodel", "positional")


def _candidates(target: Target, entries: list[Entry]) -> list[Entry]:
    """Entries that may be ``target``, the most likely first (usual place, shallowest)."""
    matching = [e for e in entries if _plain_name(PurePosixPath(e.name).name) == target.filename]

    def rank(entry: Entry):
        parts = PurePosixPath(entry.name).parts
        return (not _usual_place(entry, target), len(entry.inside),
                parts[-1] != target.filename, len(parts), entry.where)

    return sorted(matching, key=rank)


def _take(submission: Submission, target: Target, candidates: list[Entry]) -> Entry | None:
    """Read the first candidate that can be read and is what it says it is."""
    for entry in candidates:
        if entry.kind == "link":
            continue  # said once for every link
        if entry.kind == "special":
            submission.messages.append(Finding(
                "not-a-file", f"«{shown(entry.where)}» no es un archivo normal; se ignora.",
                f"'{shown(entry.where)}' is not a regular file; it is ignored."))
            continue
        if entry.kind == "encrypted":
            submission.flags.append(Finding(
                "encrypted", f"«{shown(entry.where)}» está cifrado (zip con contraseña).",
                f"'{shown(entry.where)}' is encrypted (a zip with a password)."))
            continue
        if entry.size > target.cap:
            _too_large(submission, entry.where, entry.size, target.cap)
            continue
        try:
            data = entry.read(target.cap)
        except OverBudget:
            continue  # flagged once for the whole submission
        except Unreadable as error:
            submission.flags.append(Finding(
                "unreadable",
                f"«{shown(entry.where)}» no se pudo leer del archivo comprimido ({error}): ¿está "
                "dañado?",
                f"'{shown(entry.where)}' could not be read from the archive ({error}): is it "
                "damaged?"))
            continue
        if len(data) > target.cap:
            _too_large(submission, entry.where, len(data), target.cap)
            continue
        if not _usual_place(entry, target) and not _looks_like(data, target):
            continue
        submission.files[target.path] = data
        return entry
    return None


def _looks_like(data: bytes, target: Target) -> bool:
    """Content that is ``target``'s: a module defining one of the stub's names, a notebook with
    the lab's graded cells (or, without nbgrader metadata, any notebook of that name)."""
    if target.notebook:
        ids = _grade_ids(data)
        return ids is not None and (not ids or bool(ids & target.names))
    text = data.decode("utf-8", "replace")
    return any(re.search(rf"^\s*(def|class)\s+{re.escape(name)}\b", text, re.MULTILINE)
               for name in target.names)


def _grade_ids(data: bytes) -> frozenset[str] | None:
    """The nbgrader grade ids of a notebook's cells (``None``: not a notebook)."""
    try:
        notebook = json.loads(data.decode("utf-8"))
        cells = notebook["cells"]
        return frozenset(str(c["metadata"]["nbgrader"]["grade_id"]) for c in cells
                         if isinstance(c, dict) and "grade_id" in
                         c.get("metadata", {}).get("nbgrader", {}))
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError,
            RecursionError):
        return None


def _take_renamed_notebooks(submission: Submission, entries: list[Entry],
                            taken_from: dict[Target, Entry]) -> None:
    """A lab notebook saved under another name (``Untitled.ipynb``), known by its graded cells."""
    missing = [t for t in targets() if t.notebook and t.path not in submission.files and t.names]
    if not missing:
        return
    known = {t.filename for t in targets()}
    others = [e for e in entries if e.kind == "file" and e.name.lower().endswith(".ipynb")
              and _plain_name(PurePosixPath(e.name).name) not in known
              and e.size <= MAX_NOTEBOOK_BYTES][:MAX_NOTEBOOKS_OPENED]
    for entry in sorted(others, key=lambda e: e.where):
        try:
            data = entry.read(MAX_NOTEBOOK_BYTES)
        except Unreadable:
            continue
        ids = _grade_ids(data) or frozenset()
        best = max(missing, key=lambda t: len(ids & t.names))
        if len(ids & best.names) * 2 > len(best.names) and best.path not in submission.files:
            submission.files[best.path] = data
            taken_from[best] = entry


def _nothing_found(entries: list[Entry], skipped: int) -> Finding:
    names = ", ".join(shown(e.where) for e in entries[:5]) + (", ..." if len(entries) > 5 else "")
    if not entries:
        extra_es = f" (solo {skipped} archivos de carpetas que no se corrigen, como .venv/)" \
            if skipped else ""
        extra_en = f" (only {skipped} files in folders that are not graded, like .venv/)" \
            if skipped else ""
        return Finding("empty", f"La entrega está vacía{extra_es}.",
                       f"The submission is empty{extra_en}.")
    return Finding(
        "nothing-recognised",
        f"En la entrega no hay ningún archivo del curso (módulos de "
        f"src/minimodel/positional/ o cuadernos de labs/); contiene: {names}.",
        f"The submission holds none of the course's files (modules of src/minimodel/positional/ "
        f"or notebooks of labs/); it contains: {names}.")


def _too_large(submission: Submission, name: str, size: int, cap: int) -> None:
    submission.flags.append(Finding(
        "too-large",
        f"«{shown(name)}» es demasiado grande ({size / 2**20:.1f} MB; máximo "
        f"{cap / 2**20:.0f} MB); cuenta como ausente.",
        f"'{shown(name)}' is too large ({size / 2**20:.1f} MB; at most {cap / 2**20:.0f} MB); "
        "it counts as missing."))


def _check_text(submission: Submission) -> None:
    """Drop source files Python could not read and notebooks that are not JSON text."""
    for name in list(submission.files):
        data = submission.files[name]
        if name.endswith(".py"):
            try:
                encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
                data.decode(encoding)
            except (SyntaxError, UnicodeDecodeError, LookupError):
                del submission.files[name]
                submission.messages.append(Finding(
                    "not-utf8",
                    f"«{name}» no es texto UTF-8 válido; cuenta como ausente. Guárdalo como "
                    "UTF-8.",
                    f"'{name}' is not valid UTF-8 text; it counts as missing. Save it as UTF-8."))
        else:
            try:
                notebook = json.loads(data.decode("utf-8"))
                if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
                    raise ValueError("no cells")
            except (UnicodeDecodeError, ValueError, RecursionError):
                del submission.files[name]
                submission.messages.append(Finding(
                    "bad-notebook",
                    f"«{name}» no es un cuaderno de Jupyter válido; cuenta como ausente.",
                    f"'{name}' is not a valid Jupyter notebook; it counts as missing."))
