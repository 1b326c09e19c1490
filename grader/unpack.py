"""Take the student-editable files out of a submission, safely.

A submission is a folder or a ``.zip`` of the student's copy of the repository, whole or partial,
possibly wrapped in one top-level folder. Only these files are taken from it:

- ``src/minimodel/positional/<module>.py`` for each encoding the course lists;
- ``labs/**/<slug>.ipynb`` for each lab (``labs/<slug>.ipynb`` preferred).

Everything else comes from the pristine course. Nothing is extracted to disk: the files are read
into memory under size caps. Entries that climb out (``../``, absolute paths), symbolic links
(in a zip or in a folder, also linked folders), special files, files over the caps, archives
that are not zips or are encrypted, and source files that are not valid text each give a clear
message in both languages for that student, and the file counts as missing; the batch goes on.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import stat
import tokenize
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from grader.verdicts import Finding
from minimodel.course import LABS, encoding_modules

MAX_PY_BYTES = 1 << 20
MAX_NOTEBOOK_BYTES = 16 << 20
MAX_ZIP_ENTRIES = 20_000
MAX_ZIP_BYTES = 512 << 20
POSITIONAL = "src/minimodel/positional"


@dataclass
class Submission:
    """The editable files of one student, and what was wrong with the rest."""

    student_id: str
    source: Path
    files: dict[str, bytes] = field(default_factory=dict)  # "src/.../sinusoidal.py", "labs/x.ipynb"
    messages: list[Finding] = field(default_factory=list)

    def module(self, name: str) -> bytes | None:
        return self.files.get(f"{POSITIONAL}/{name}.py")

    def notebook(self, slug: str) -> bytes | None:
        return self.files.get(f"labs/{slug}.ipynb")

    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for name in sorted(self.files):
            digest.update(name.encode() + b"\0" + hashlib.sha256(self.files[name]).digest())
        for message in self.messages:
            digest.update(message.code.encode())
        return digest.hexdigest()[:24]


def wanted_paths() -> dict[str, int]:
    """Canonical editable path -> size cap."""
    paths = {f"{POSITIONAL}/{m}.py": MAX_PY_BYTES for m in encoding_modules()}
    paths.update({f"labs/{lab.slug}.ipynb": MAX_NOTEBOOK_BYTES for lab in LABS})
    return paths


def canonical(relative: str) -> str | None:
    """The canonical editable path a relative path stands for, if any."""
    wanted = wanted_paths()
    if relative in wanted:
        return relative
    parts = PurePosixPath(relative).parts
    if len(parts) >= 2 and parts[0] == "labs" and relative.endswith(".ipynb"):
        candidate = f"labs/{parts[-1]}"
        if candidate in wanted:
            return candidate
    return None


def _shown(name: str) -> str:
    """A file name safe to print (control characters escaped, length capped)."""
    text = name.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
    return text if len(text) <= 120 else text[:117] + "..."


def discover(folder: Path) -> list[tuple[str, Path]]:
    """The submissions in ``folder``: (student_id, path), one per folder or ``.zip``, sorted."""
    entries = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        if path.is_dir():
            entries.append((path.name, path))
        elif path.suffix.lower() == ".zip" and path.is_file():
            entries.append((path.name[: -len(".zip")], path))
    return entries


def unpack(student_id: str, path: Path) -> Submission:
    """Read one submission; never raises for anything the student controls."""
    submission = Submission(student_id, path)
    try:
        if path.is_dir():
            _from_folder(submission, path)
        else:
            _from_zip(submission, path)
    except (OSError, zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError, ValueError) as error:
        submission.messages.append(Finding(
            "unreadable",
            f"No se pudo leer la entrega ({type(error).__name__}); se corrige como vacía.",
            f"The submission could not be read ({type(error).__name__}); it is graded as "
            "empty."))
    _check_text(submission)
    return submission


def _root_prefix(names: list[str]) -> str:
    """The folder the repository sits in: "" or one wrapping folder (``repo-main/``)."""
    best = None
    for name in names:
        parts = PurePosixPath(name).parts
        for depth in (0, 1, 2):
            rest = "/".join(parts[depth:])
            if canonical(rest) is not None:
                prefix = "/".join(parts[:depth])
                if best is None or len(prefix) < len(best):
                    best = prefix
    return best or ""


def _unsafe_name(name: str) -> bool:
    path = PurePosixPath(name)
    return (name.startswith("/") or "\\" in name or ".." in path.parts or
            re.match(r"^[A-Za-z]:", name) is not None or "\0" in name)


def _from_zip(submission: Submission, path: Path) -> None:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        submission.messages.append(Finding(
            "bad-zip", "El archivo .zip está dañado o no es un zip; se corrige como vacío.",
            "The .zip file is damaged or is not a zip; it is graded as empty."))
        return
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_ZIP_ENTRIES:
            submission.messages.append(Finding(
                "too-many-entries",
                f"El zip tiene {len(infos)} entradas (máximo {MAX_ZIP_ENTRIES}); se ignora.",
                f"The zip has {len(infos)} entries (at most {MAX_ZIP_ENTRIES}); it is ignored."))
            return
        safe = []
        for info in infos:
            name = info.filename
            mode = info.external_attr >> 16
            if _unsafe_name(name):
                submission.messages.append(Finding(
                    "zip-slip",
                    f"La entrada «{_shown(name)}» apunta fuera de la entrega; se ignora.",
                    f"Entry '{_shown(name)}' points outside the submission; it is ignored."))
            elif stat.S_ISLNK(mode):
                submission.messages.append(Finding(
                    "symlink",
                    f"La entrada «{_shown(name)}» es un enlace simbólico; se ignora.",
                    f"Entry '{_shown(name)}' is a symbolic link; it is ignored."))
            elif not info.is_dir():
                safe.append(info)
        prefix = _root_prefix([i.filename for i in safe])
        total = 0
        for info in safe:
            name = info.filename
            if prefix and not name.startswith(prefix + "/"):
                continue
            relative = name[len(prefix) + 1:] if prefix else name
            target = canonical(relative)
            if target is None:
                continue
            cap = wanted_paths()[target]
            if target in submission.files and relative != target:
                continue  # labs/<slug>.ipynb wins over a copy deeper in labs/
            if info.flag_bits & 0x1:
                submission.messages.append(Finding(
                    "encrypted", f"«{_shown(relative)}» está cifrado; se ignora.",
                    f"'{_shown(relative)}' is encrypted; it is ignored."))
                continue
            if info.file_size > cap or total + info.file_size > MAX_ZIP_BYTES:
                _too_large(submission, relative, info.file_size, cap)
                continue
            with archive.open(info) as handle:
                data = handle.read(cap + 1)  # never trust the declared size
            if len(data) > cap:
                _too_large(submission, relative, len(data), cap)
                continue
            total += len(data)
            submission.files[target] = data


def _too_large(submission: Submission, name: str, size: int, cap: int) -> None:
    submission.messages.append(Finding(
        "too-large",
        f"«{_shown(name)}» es demasiado grande ({size / 2**20:.1f} MB; máximo "
        f"{cap / 2**20:.0f} MB); cuenta como ausente.",
        f"'{_shown(name)}' is too large ({size / 2**20:.1f} MB; at most {cap / 2**20:.0f} MB); "
        "it counts as missing."))


def _from_folder(submission: Submission, root: Path) -> None:
    base = root
    for candidate in [root, *sorted(p for p in root.iterdir() if p.is_dir()
                                    and not p.is_symlink())]:
        if (candidate / "src").exists() or (candidate / "labs").exists():
            base = candidate
            break
    seen_links: set[str] = set()
    for target, cap in wanted_paths().items():
        found = _find_in_folder(submission, base, target, seen_links)
        if found is None:
            continue
        relative, path = found
        data = _read_regular(submission, path, relative, cap)
        if data is not None:
            submission.files[target] = data


def _find_in_folder(submission: Submission, base: Path, target: str,
                    seen_links: set[str]) -> tuple[str, Path] | None:
    """The file for ``target`` under ``base``, walking without following any link."""
    candidates = [target]
    if target.startswith("labs/"):
        labs = base / "labs"
        if labs.is_dir() and not labs.is_symlink():
            for dirpath, _dirnames, filenames in os.walk(labs, followlinks=False):
                for filename in filenames:
                    relative = os.path.relpath(os.path.join(dirpath, filename), base)
                    if canonical(relative.replace(os.sep, "/")) == target:
                        candidates.append(relative.replace(os.sep, "/"))
    for relative in candidates:
        current = base
        parts = PurePosixPath(relative).parts
        linked = False
        for index, part in enumerate(parts):
            current = current / part
            try:
                info = os.lstat(current)
            except OSError:
                break
            if stat.S_ISLNK(info.st_mode):
                shown = "/".join(parts[: index + 1])
                if shown not in seen_links:
                    seen_links.add(shown)
                    submission.messages.append(Finding(
                        "symlink",
                        f"«{_shown(shown)}» es un enlace simbólico; no se sigue.",
                        f"'{_shown(shown)}' is a symbolic link; it is not followed."))
                linked = True
                break
        else:
            return relative, current
        if linked:
            continue
    return None


def _read_regular(submission: Submission, path: Path, relative: str, cap: int) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            submission.messages.append(Finding(
                "not-a-file", f"«{_shown(relative)}» no es un archivo normal; se ignora.",
                f"'{_shown(relative)}' is not a regular file; it is ignored."))
            return None
        if info.st_size > cap:
            _too_large(submission, relative, info.st_size, cap)
            return None
        data = os.read(fd, cap + 1)
        while len(data) <= cap:
            chunk = os.read(fd, cap + 1 - len(data))
            if not chunk:
                break
            data += chunk
        if len(data) > cap:
            _too_large(submission, relative, len(data), cap)
            return None
        return data
    finally:
        os.close(fd)


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
