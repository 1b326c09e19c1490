"""List the files of a submission (a folder or a ``.zip``, zips inside it too) without extracting.

Real submissions come in many shapes: a GitHub "Download ZIP" (``repo-main/``), a zip made by
Windows PowerShell's ``Compress-Archive`` (entry names with backslashes), a macOS zip
(``__MACOSX/``, ``._*`` and ``.DS_Store``), a student's whole working copy with its ``.venv/``
and ``.git/``, a zip inside the zip. :func:`listing` turns any of them into one flat list of
:class:`Entry` (a relative POSIX name, a size, a kind, and a way to read at most ``cap`` bytes),
which :mod:`grader.trusted.unpack` searches for the files the course takes.

Folders the course never takes (virtual environments, version control, caches, build output,
``node_modules``) are skipped by name, and a folder holding ``pyvenv.cfg`` or ``conda-meta`` is a
virtual environment whatever its name: none of their files is listed or read, so a big
environment costs nothing and trips no limit. Nothing is ever written to disk: entries that climb
out (``../``, absolute paths, drive letters), links and special files are listed as such (never
followed), and reading never trusts a declared size.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from grader.trusted.safe_io import SAFE_OPEN, read_capped
from grader.trusted.verdicts import Finding

MAX_ENTRIES = 20_000  # files that are not skipped, over the whole submission
MAX_LISTED = 2_000_000  # entries of one zip's central directory, skipped ones included
MAX_INNER_ZIP_BYTES = 64 << 20
MAX_DEPTH = 2  # a zip in a zip in the submission, no deeper
SKIPPED_FOLDERS = frozenset({
    ".venv", "venv", ".env", "env", "virtualenv", ".conda", "site-packages", "dist-packages",
    ".git", ".hg", ".svn", "__pycache__", ".ipynb_checkpoints", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".tox", ".nox", ".cache", ".eggs", "node_modules", "build", "dist", "_build",
    "htmlcov", "__MACOSX", ".idea", ".vscode", ".Trash", "$RECYCLE.BIN"})
SKIPPED_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini", "Icon\r"})
ENVIRONMENT_MARKERS = ("pyvenv.cfg", "conda-meta")


class Unreadable(Exception):
    """An entry whose bytes cannot be read (damaged zip data, a file that vanished)."""


@dataclass
class Entry:
    """One file (or link, or special file) of a submission."""

    name: str  # relative POSIX path inside its container, as the student would read it
    size: int  # declared size (never trusted when reading)
    kind: str  # file | link | special
    inside: tuple[str, ...] = ()  # the zips it sits in, outermost first (beyond the submission)
    read: Callable[[int], bytes] | None = field(default=None, repr=False)

    @property
    def where(self) -> str:
        """Where the student would find it: ``inner.zip/repo/src/.../rope.py``."""
        return "/".join((*self.inside, self.name))


@dataclass
class Listing:
    entries: list[Entry] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)  # entries refused (zip-slip, links)
    flags: list[Finding] = field(default_factory=list)  # the submission cannot be fully read
    skipped: int = 0  # files in skipped folders, never read
    archives: list[zipfile.ZipFile] = field(default_factory=list, repr=False)

    def __enter__(self) -> Listing:
        return self

    def __exit__(self, *exc) -> None:
        """The entries can be read until the listing is closed."""
        for archive in self.archives:
            archive.close()


def shown(name: str) -> str:
    """A file name safe to print (control characters escaped, length capped)."""
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in name)
    return text if len(text) <= 120 else text[:117] + "..."


def skipped(parts: tuple[str, ...]) -> bool:
    """A path inside a folder the course never takes, or a file of the operating system."""
    if any(part in SKIPPED_FOLDERS or part.endswith(".egg-info") for part in parts[:-1]):
        return True
    return bool(parts) and (parts[-1] in SKIPPED_FILES or parts[-1].startswith("._"))


def unsafe(name: str) -> bool:
    """A zip entry name that would climb out of the submission if it were extracted."""
    return (name.startswith("/") or ".." in PurePosixPath(name).parts or "\0" in name or
            re.match(r"^[A-Za-z]:", name) is not None)


def listing(path: Path) -> Listing:
    """Every entry of the submission at ``path`` (a folder or a zip); never raises.

    Use it as a context manager: its entries can be read until it is closed."""
    result = Listing()
    try:
        if path.is_dir() and not path.is_symlink():
            _walk(path, result)
        else:
            archive = zipfile.ZipFile(path)  # noqa: SIM115 - closed with the listing
            result.archives.append(archive)
            _zip(archive, (), result)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
            RuntimeError, zlib.error) as error:
        result.flags.append(damaged(path.name, error))
    return result


def damaged(name: str, error: BaseException) -> Finding:
    return Finding(
        "unreadable",
        f"«{shown(name)}» está dañado o no es un zip que se pueda leer ({type(error).__name__}): "
        "¿se cortó la subida?",
        f"'{shown(name)}' is damaged or is not a readable zip ({type(error).__name__}): was the "
        "upload cut short?")


def _too_many(result: Listing) -> bool:
    if len(result.entries) < MAX_ENTRIES:
        return False
    if not any(f.code == "too-many-entries" for f in result.flags):
        result.flags.append(Finding(
            "too-many-entries",
            f"La entrega tiene más de {MAX_ENTRIES} archivos (sin contar entornos virtuales ni "
            "carpetas como .git); solo se miraron los primeros.",
            f"The submission has more than {MAX_ENTRIES} files (not counting virtual "
            "environments or folders like .git); only the first ones were looked at."))
    return True


# --- zips ----------------------------------------------------------------------------------------

def _entry_name(info: zipfile.ZipInfo) -> str:
    """The entry's name as its author wrote it: UTF-8 names written without the UTF-8 flag
    (older Windows and macOS tools) decoded again, backslashes (PowerShell) made slashes."""
    name = info.filename
    if not info.flag_bits & 0x800:
        with contextlib.suppress(UnicodeEncodeError, UnicodeDecodeError):
            name = name.encode("cp437").decode("utf-8")
    name = name.replace("\\", "/")
    while name.startswith("./"):
        name = name[2:]
    return name


def _zip(archive: zipfile.ZipFile, inside: tuple[str, ...], result: Listing) -> None:
    infos = archive.infolist()
    if len(infos) > MAX_LISTED:
        raise ValueError(f"{len(infos)} entries")
    named = [(_entry_name(info), info) for info in infos]
    environments = []  # folders (with a trailing slash) that are virtual environments
    for name, _ in named:
        parts = name.rstrip("/").split("/")
        if parts[-1] in ENVIRONMENT_MARKERS and len(parts) > 1:
            environments.append("/".join(parts[:-1]) + "/")
    for name, info in named:
        if info.is_dir() or name.endswith("/") or not name:
            continue
        parts = PurePosixPath(name).parts
        if unsafe(name):
            result.notes.append(Finding(
                "zip-slip",
                f"La entrada «{shown(name)}» apunta fuera de la entrega; se ignora.",
                f"Entry '{shown(name)}' points outside the submission; it is ignored."))
            continue
        if skipped(parts) or any(name.startswith(root) for root in environments):
            result.skipped += 1
            continue
        if _too_many(result):
            return
        kind = _kind(info.external_attr >> 16)
        if kind == "file" and info.flag_bits & 0x1:
            kind = "encrypted"
        _add(Entry(name, info.file_size, kind, inside, _zip_reader(archive, info)), result)


def _kind(mode: int) -> str:
    """``link``, ``special`` or ``file`` (a zip entry with no file type is a file)."""
    if stat.S_ISLNK(mode):
        return "link"
    return "special" if stat.S_IFMT(mode) not in (0, stat.S_IFREG) else "file"


def _zip_reader(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Callable[[int], bytes]:
    def read(cap: int) -> bytes:
        try:
            with archive.open(info) as handle:
                return handle.read(cap + 1)  # never trust the declared size
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError,
                zlib.error, NotImplementedError) as error:
            raise Unreadable(type(error).__name__) from error

    return read


def _add(entry: Entry, result: Listing) -> None:
    """List ``entry``, after the entries of the zip it is, if it is one."""
    if entry.kind == "file" and entry.name.lower().endswith(".zip"):
        _inner_zip(entry, result)
    result.entries.append(entry)


def _inner_zip(entry: Entry, result: Listing) -> None:
    """List a zip found inside the submission (a re-zipped download), one level down."""
    if len(entry.inside) >= MAX_DEPTH or entry.size > MAX_INNER_ZIP_BYTES:
        return
    try:
        data = entry.read(MAX_INNER_ZIP_BYTES)
        if len(data) > MAX_INNER_ZIP_BYTES:
            return
        inner = zipfile.ZipFile(io.BytesIO(data))  # noqa: SIM115 - closed with the listing
        result.archives.append(inner)
        inner_result = Listing()
        _zip(inner, (*entry.inside, entry.name), inner_result)
    except (Unreadable, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError,
            RuntimeError, zlib.error) as error:
        result.notes.append(Finding(
            "inner-zip-unreadable",
            f"El zip «{shown(entry.where)}» que hay dentro de la entrega está dañado "
            f"({type(error).__name__}); se ignora.",
            f"The zip '{shown(entry.where)}' inside the submission is damaged "
            f"({type(error).__name__}); it is ignored.", scoring=False))
        return
    result.entries += inner_result.entries
    result.notes += inner_result.notes
    result.flags += inner_result.flags
    result.skipped += inner_result.skipped
    result.archives += inner_result.archives


# --- folders -------------------------------------------------------------------------------------

def _walk(root: Path, result: Listing) -> None:
    """Walk ``root`` without following links, pruning skipped folders before entering them."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        relative = os.path.relpath(dirpath, root)
        base = () if relative == "." else PurePosixPath(Path(relative).as_posix()).parts
        if base and (base[-1] in SKIPPED_FOLDERS or base[-1].endswith(".egg-info") or
                     any(marker in filenames or marker in dirnames
                         for marker in ENVIRONMENT_MARKERS)):
            result.skipped += len(filenames)
            dirnames[:] = []
            continue
        dirnames.sort()
        for name in list(dirnames):
            if os.path.islink(os.path.join(dirpath, name)):
                result.entries.append(Entry("/".join((*base, name)), 0, "link"))
                dirnames.remove(name)
        for name in sorted(filenames):
            parts = (*base, name)
            if skipped(parts):
                result.skipped += 1
                continue
            if _too_many(result):
                return
            full = Path(dirpath) / name
            try:
                info = os.lstat(full)
            except OSError:
                continue
            _add(Entry("/".join(parts), info.st_size, _kind(info.st_mode), (), _file_reader(full)),
                 result)


def _file_reader(path: Path) -> Callable[[int], bytes]:
    def read(cap: int) -> bytes:
        try:
            fd = os.open(path, SAFE_OPEN)
        except OSError as error:
            raise Unreadable(type(error).__name__) from error
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise Unreadable("not a regular file")
            return read_capped(fd, cap)
        finally:
            os.close(fd)

    return read
