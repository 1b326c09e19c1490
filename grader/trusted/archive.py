"""List the files of a submission (a folder, a ``.zip`` or a tar, archives inside it too) without
extracting.

Real submissions come in many shapes: a GitHub "Download ZIP" (``repo-main/``), a zip made by
Windows PowerShell's ``Compress-Archive`` (entry names with backslashes), a macOS zip
(``__MACOSX/``, ``._*`` and ``.DS_Store``), a ``.tar.gz`` from a terminal, a student's whole
working copy with its ``.venv/`` and ``.git/``, a zip inside the zip, a folder per student that
holds what the student uploaded (an LMS download). :func:`listing` turns any of them into one flat
list of :class:`Entry` (a relative POSIX name, a size, a kind, and a way to read at most ``cap``
bytes), which :mod:`grader.trusted.unpack` searches for the files the course takes.

Folders the course never takes (virtual environments, version control, caches, build output,
``node_modules``) are skipped by name, and a folder holding ``pyvenv.cfg`` or ``conda-meta`` is a
virtual environment whatever its name: none of their files is listed or read, so a big
environment costs nothing and trips no limit. Nothing is extracted: entries that climb out
(``../``, absolute paths, drive letters), links and special files are listed as such (never
followed), reading never trusts a declared size, and every byte decompressed, at every nesting
level, counts against one cap per submission (``MAX_TOTAL_BYTES``; a tar's sparse members at
their declared size), and every entry listed against another (``MAX_LISTED``; a zip's central
directory counted before it is read). An archive inside the submission is spooled to an
unnamed temporary file under its own cap, never held in memory. A name that appears twice in one
archive (under any spelling that extracting folds into one), a file of a type the grader does
not take, and going over a cap each flag the submission with a reason.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import os
import re
import stat
import tarfile
import tempfile
import unicodedata
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO

from grader.trusted.safe_io import SAFE_OPEN
from grader.trusted.verdicts import Finding

MAX_ENTRIES = 20_000  # files that are not skipped, over the whole submission
# archive entries listed over the whole submission, every level and skipped ones included: a
# tar's members, and for a zip the most entries its central directory can hold, counted before
# it is read (about 600 bytes of memory each)
MAX_LISTED = 400_000
SMALLEST_CENTRAL_ENTRY = 46  # bytes of a zip's central-directory entry with an empty name
MAX_INNER_BYTES = 64 << 20  # one archive inside the submission, decompressed
MAX_TOTAL_BYTES = 256 << 20  # decompressed over the whole submission, every level together
MAX_DEPTH = 2  # an archive in an archive in the submission, no deeper
ARCHIVES = {".zip": "zip", ".tar": "tar", ".tar.gz": "tar.gz", ".tgz": "tar.gz"}
SKIPPED_FOLDERS = frozenset({
    ".venv", "venv", ".env", "env", "virtualenv", ".conda", "site-packages", "dist-packages",
    ".git", ".hg", ".svn", "__pycache__", ".ipynb_checkpoints", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".tox", ".nox", ".cache", ".eggs", "node_modules", "build", "dist", "_build",
    "htmlcov", "__MACOSX", ".idea", ".vscode", ".Trash", "$RECYCLE.BIN"})
SKIPPED_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini", "Icon\r"})
ENVIRONMENT_MARKERS = ("pyvenv.cfg", "conda-meta")
BROKEN = (zipfile.BadZipFile, zipfile.LargeZipFile, tarfile.TarError, OSError, EOFError,
          ValueError, RuntimeError, zlib.error, NotImplementedError)  # what a bad archive raises

Reader = Callable[..., bytes]  # read(cap, sink=None): at most cap + 1 bytes, or into sink


class Unreadable(Exception):
    """An entry whose bytes cannot be read (damaged data, a file that vanished)."""


class OverBudget(Unreadable):
    """The submission's budget of decompressed bytes is spent (``TOO_MUCH_DATA``)."""


def archive_kind(name: str) -> str | None:
    """``zip``, ``tar`` or ``tar.gz`` for an archive the grader takes, by its name; else
    ``None``."""
    lower = name.lower()
    return next((kind for suffix, kind in ARCHIVES.items() if lower.endswith(suffix)), None)


def archive_stem(name: str) -> str | None:
    """``name`` without its archive suffix (``ana.tar.gz`` -> ``ana``), or ``None``."""
    lower = name.lower()
    return next((name[: -len(suffix)] for suffix in ARCHIVES if lower.endswith(suffix)), None)


@dataclass
class Entry:
    """One file (or link, or special file) of a submission."""

    name: str  # relative POSIX path inside its container, as the student would read it
    size: int  # declared size (never trusted when reading)
    kind: str  # file | link | special | encrypted
    inside: tuple[str, ...] = ()  # the archives it sits in, outermost first
    read: Reader | None = field(default=None, repr=False)
    nested: int = 0  # of ``inside``, the archives in the submission (not the upload itself)

    @property
    def where(self) -> str:
        """Where the student would find it: ``inner.zip/repo/src/.../rope.py``."""
        return "/".join((*self.inside, self.name))


@dataclass
class Budget:
    """The bytes a submission may still decompress, every nesting level together."""

    left: int = MAX_TOTAL_BYTES
    spent: bool = False  # a read stopped on it
    listed: int = MAX_LISTED  # the archive entries it may still list
    crowded: bool = False  # a listing stopped on it

    def charge(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            self.spent = True
            raise OverBudget(f"over {MAX_TOTAL_BYTES >> 20} MB decompressed")

    def count(self, entries: int) -> None:
        self.listed -= entries
        if self.listed < 0:
            self.crowded = True
            raise OverBudget(f"over {MAX_LISTED} archive entries")


def copy(source: IO[bytes], cap: int, sink: IO[bytes] | None = None,
         budget: Budget | None = None) -> bytes:
    """At most ``cap + 1`` bytes of ``source``, returned or written to ``sink``; each byte
    charged to ``budget`` (decompressed bytes), if given."""
    chunks, size = [], 0
    while size <= cap:
        chunk = source.read(min(1 << 20, cap + 1 - size))
        if not chunk:
            break
        size += len(chunk)
        if budget is not None:
            budget.charge(len(chunk))
        if sink is None:
            chunks.append(chunk)
        else:
            sink.write(chunk)
    return b"".join(chunks)


@dataclass
class Listing:
    entries: list[Entry] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)  # entries refused (zip-slip, links)
    flags: list[Finding] = field(default_factory=list)  # the submission cannot be fully read
    skipped: int = 0  # files in skipped folders, never read
    budget: Budget = field(default_factory=Budget)
    opened: list = field(default_factory=list, repr=False)  # archives and spools to close

    def __enter__(self) -> Listing:
        return self

    def __exit__(self, *exc) -> None:
        """The entries can be read until the listing is closed."""
        for thing in reversed(self.opened):
            with contextlib.suppress(*BROKEN):
                thing.close()

    def flag(self, finding: Finding) -> None:
        """Flag the submission (once for each reason and name)."""
        if all((f.code, f.en) != (finding.code, finding.en) for f in self.flags):
            self.flags.append(finding)


TOO_MUCH_DATA = Finding(
    "too-much-data",
    f"La entrega, descomprimida, pasa de {MAX_TOTAL_BYTES >> 20} MB (contando los archivos "
    "comprimidos que hay dentro); no se leyó entera.",
    f"The submission, decompressed, holds more than {MAX_TOTAL_BYTES >> 20} MB (counting the "
    "archives inside it); it was not read in full.")
TOO_MANY_LISTED = Finding(
    "too-many-listed",
    f"Los archivos comprimidos de la entrega tienen más de {MAX_LISTED} entradas en total "
    "(contando carpetas como .venv y los comprimidos que hay dentro); no se leyó entera.",
    f"The submission's archives hold more than {MAX_LISTED} entries in all (counting folders "
    "like .venv and the archives inside it); it was not read in full.")


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
    """An archive entry name that would climb out of the submission if it were extracted."""
    return (name.startswith("/") or ".." in PurePosixPath(name).parts or "\0" in name or
            re.match(r"^[A-Za-z]:", name) is not None)


def listing(path: Path) -> Listing:
    """Every entry of the submission at ``path`` (a folder or an archive); never raises.

    Use it as a context manager: its entries can be read until it is closed (reading one may
    still spend the budget: ``result.budget.spent``)."""
    result = Listing()
    kind = archive_kind(path.name)
    try:
        if path.is_dir() and not path.is_symlink():
            _walk(path, result)
        elif kind is None:
            result.flags.append(Finding(
                "unsupported-type",
                f"«{shown(path.name)}» no es un tipo de archivo que el corrector acepte (acepta "
                "una carpeta, un .zip, un .tar, un .tar.gz o un .tgz); no se corrigió nada.",
                f"'{shown(path.name)}' is not a type of file the grader takes (it takes a "
                "folder, a .zip, a .tar, a .tar.gz or a .tgz); nothing was graded."))
        elif kind == "tar.gz":
            with gzip.open(path) as stream:
                spool = _spool(result, MAX_TOTAL_BYTES,
                               lambda sink: copy(stream, MAX_TOTAL_BYTES, sink, result.budget))
            _archive(spool, "tar", (), 0, result)
        else:
            _archive(path, kind, (), 0, result)
    except OverBudget:
        pass  # flagged below
    except (Unreadable, *BROKEN) as error:
        result.flags.append(damaged(path.name, error))
    if result.budget.spent:
        result.flag(TOO_MUCH_DATA)
    if result.budget.crowded:
        result.flag(TOO_MANY_LISTED)
    return result


def damaged(name: str, error: BaseException) -> Finding:
    return Finding(
        "unreadable",
        f"«{shown(name)}» está dañado o no es un archivo comprimido (zip o tar) que se pueda "
        f"leer ({type(error).__name__}): ¿se cortó la subida?",
        f"'{shown(name)}' is damaged or is not a readable archive (zip or tar) "
        f"({type(error).__name__}): was the upload cut short?")


def _too_many(result: Listing) -> bool:
    if len(result.entries) < MAX_ENTRIES:
        return False
    result.flag(Finding(
        "too-many-entries",
        f"La entrega tiene más de {MAX_ENTRIES} archivos (sin contar entornos virtuales ni "
        "carpetas como .git); solo se miraron los primeros.",
        f"The submission has more than {MAX_ENTRIES} files (not counting virtual "
        "environments or folders like .git); only the first ones were looked at."))
    return True


def _spool(result: Listing, cap: int, fill: Callable[[IO[bytes]], object]) -> IO[bytes]:
    """An unnamed temporary file (closed with the listing) that ``fill`` writes: at most
    ``cap`` bytes, else ``Unreadable``; rewound."""
    spool = tempfile.TemporaryFile()  # noqa: SIM115 - closed with the listing
    result.opened.append(spool)
    fill(spool)
    if spool.tell() > cap:
        raise Unreadable(f"over {cap >> 20} MB decompressed")
    spool.seek(0)
    return spool


# --- archives ------------------------------------------------------------------------------------

def _entry_name(name: str, utf8: bool = True) -> str:
    """The entry's name as its author wrote it: UTF-8 names written without the UTF-8 flag
    (older Windows and macOS tools) decoded again, backslashes (PowerShell) made slashes."""
    if not utf8:
        with contextlib.suppress(UnicodeEncodeError, UnicodeDecodeError):
            name = name.encode("cp437").decode("utf-8")
    name = name.replace("\\", "/")
    while name.startswith("./"):
        name = name[2:]
    return name


def _archive(source: Path | IO[bytes], kind: str, inside: tuple[str, ...], nested: int,
             result: Listing) -> None:
    """List the members of one archive (``kind`` zip or tar; a path or a seekable file)."""
    members = []  # (name, is a folder, kind, declared size, reader)
    if kind == "zip":
        result.budget.count(_most_entries(source))
        archive = zipfile.ZipFile(source)  # noqa: SIM115 - closed with the listing
        result.opened.append(archive)
        for info in archive.infolist():
            kind = _kind(info.external_attr >> 16)
            members.append((_entry_name(info.filename, bool(info.flag_bits & 0x800)),
                            info.is_dir(), "encrypted" if kind == "file" and info.flag_bits & 1
                            else kind, info.file_size,
                            _reader(functools.partial(archive.open, info), result.budget)))
    else:
        archive = tarfile.TarFile(**{"name" if isinstance(source, Path) else "fileobj": source})
        result.opened.append(archive)
        for info in archive:
            result.budget.count(1)
            kind = "link" if info.issym() or info.islnk() else "file" if info.isreg() \
                else "special"
            # a sparse member's holes read as zeros: its bytes count, up to its declared size
            members.append((_entry_name(info.name), info.isdir(), kind, info.size,
                            _reader(functools.partial(archive.extractfile, info),
                                    result.budget if info.issparse() else None)))
    _members(members, inside, nested, result)


def _most_entries(source: Path | IO[bytes]) -> int:
    """The most entries a zip's central directory can hold (its size over the smallest entry's,
    or its declared count if more), read from its end record as ``zipfile`` reads it; 0 when
    there is none (``zipfile`` then says the zip is damaged)."""
    with contextlib.ExitStack() as stack:
        handle = stack.enter_context(open(source, "rb")) if isinstance(source, Path) else source
        end = zipfile._EndRecData(handle)  # noqa: SLF001 - the record ZipFile reads first
    if not end:
        return 0
    return max(end[zipfile._ECD_ENTRIES_TOTAL],  # noqa: SLF001
               end[zipfile._ECD_SIZE] // SMALLEST_CENTRAL_ENTRY)  # noqa: SLF001


def _inside(name: str, folders: set[str]) -> bool:
    """Whether ``name`` lies under one of ``folders`` (its own folders looked up, one by one)."""
    parts = name.split("/")[:-1]
    return any("/".join(parts[:depth]) in folders for depth in range(1, len(parts) + 1))


def _members(members: list[tuple], inside: tuple[str, ...], nested: int,
             result: Listing) -> None:
    """List an archive's members; a name written twice (compared as :func:`extracted_as`)
    keeps its last copy (what extracting leaves) and flags the submission."""
    environments = set()  # folders that are virtual environments
    for name, *_ in members:
        parts = name.rstrip("/").split("/")
        if parts[-1] in ENVIRONMENT_MARKERS and len(parts) > 1:
            environments.add("/".join(parts[:-1]))
    listed: dict[str, int] = {}  # extracted_as(name) -> its place in result.entries
    for name, folder, kind, size, reader in members:
        if folder or name.endswith("/") or not name:
            continue
        parts = PurePosixPath(name).parts
        if unsafe(name):
            result.notes.append(Finding(
                "zip-slip",
                f"La entrada «{shown(name)}» apunta fuera de la entrega; se ignora.",
                f"Entry '{shown(name)}' points outside the submission; it is ignored."))
            continue
        if skipped(parts) or _inside(name, environments):
            result.skipped += 1
            continue
        entry = Entry(name, size, kind, inside, reader, nested)
        key = extracted_as(name)
        if key in listed:
            result.flag(_duplicate(result.entries[listed[key]], entry))
            result.entries[listed[key]] = entry
            continue
        if _too_many(result):
            return
        _add(entry, result)
        listed[key] = len(result.entries) - 1


def _duplicate(first: Entry, last: Entry) -> Finding:
    """A file twice in one archive (also spelt another way: ``src//a.py``, ``SRC/a.py``)."""
    where = shown(last.where)
    also_es = also_en = ""
    if first.name != last.name:
        also_es = f" (también como «{shown(first.where)}», que al descomprimirlo es el mismo)"
        also_en = f" (also as '{shown(first.where)}', the same file once extracted)"
    return Finding(
        "duplicate-entry",
        f"«{where}» está más de una vez en el archivo comprimido{also_es}; se tomó la última "
        "copia (la que queda al descomprimirlo). Entrega un archivo con una sola.",
        f"'{where}' is more than once in the archive{also_en}; the last copy was taken (the one "
        "extracting it leaves). Submit an archive with only one.")


def extracted_as(name: str) -> str:
    """The file an entry named ``name`` becomes when extracted, as a file system that folds
    case and Unicode forms (Windows, macOS) compares it: ``src//a/./b.py`` and ``SRC/a/b.py``
    are ``src/a/b.py``, ``café`` is one name in NFC or NFD."""
    parts = [part for part in name.split("/") if part not in ("", ".")]
    return unicodedata.normalize("NFC", "/".join(parts)).casefold()


def _kind(mode: int) -> str:
    """``link``, ``special`` or ``file`` (a zip entry with no file type is a file)."""
    if stat.S_ISLNK(mode):
        return "link"
    return "special" if stat.S_IFMT(mode) not in (0, stat.S_IFREG) else "file"


def _reader(open_member: Callable[[], IO[bytes]], budget: Budget | None) -> Reader:
    """Read a member through ``open_member``, counting what is decompressed against ``budget``
    (``None``: stored bytes, not decompressed)."""
    def read(cap: int, sink: IO[bytes] | None = None) -> bytes:
        try:
            with open_member() as handle:  # never trust the declared size
                return copy(handle, cap, sink, budget)
        except BROKEN as error:
            raise Unreadable(type(error).__name__) from error

    return read


def _add(entry: Entry, result: Listing, upload: bool = False) -> None:
    """List ``entry``, after the entries of the archive it is, if it is one (``upload``: the
    archive a student put in their own folder, which is the submission itself)."""
    kind = archive_kind(entry.name)
    if entry.kind == "file" and kind is not None:
        _inner(entry, kind, result, upload)
    result.entries.append(entry)


def _inner(entry: Entry, kind: str, result: Listing, upload: bool) -> None:
    """List an archive found in the submission, spooled to a temporary file under its cap."""
    nested = entry.nested + (not upload)
    if nested > MAX_DEPTH or entry.size > MAX_INNER_BYTES:
        return
    inner = Listing(budget=result.budget, opened=result.opened)
    try:
        spool = _spool(inner, MAX_INNER_BYTES, lambda sink: entry.read(MAX_INNER_BYTES, sink))
        if kind == "tar.gz":
            with gzip.open(spool) as stream:
                spool = _spool(inner, MAX_INNER_BYTES,
                               lambda sink: copy(stream, MAX_INNER_BYTES, sink, inner.budget))
        _archive(spool, kind.removesuffix(".gz"), (*entry.inside, entry.name), nested, inner)
    except (Unreadable, *BROKEN) as error:
        result.notes.append(Finding(
            "inner-zip-unreadable",
            f"El archivo comprimido «{shown(entry.where)}» que hay dentro de la entrega no se "
            f"pudo leer ({type(error).__name__}); se ignora.",
            f"The archive '{shown(entry.where)}' inside the submission could not be read "
            f"({type(error).__name__}); it is ignored.", scoring=False))
        return
    result.entries += inner.entries
    result.notes += inner.notes
    for finding in inner.flags:
        result.flag(finding)
    result.skipped += inner.skipped


# --- folders -------------------------------------------------------------------------------------

def _walk(root: Path, result: Listing) -> None:
    """Walk ``root`` without following links, pruning skipped folders before entering them.
    A folder that holds one archive and nothing else is what a student uploaded (an LMS
    download: a folder per student): the archive is the submission itself."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        relative = os.path.relpath(dirpath, root)
        base = () if relative == "." else PurePosixPath(Path(relative).as_posix()).parts
        kept = [name for name in filenames if not skipped((*base, name))]
        upload = not base and not dirnames and len(kept) == 1
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
            _add(Entry("/".join(parts), info.st_size, _kind(info.st_mode), (),
                       _reader(functools.partial(_open_regular, full), None)),
                 result, upload)


def _open_regular(path: Path) -> IO[bytes]:
    """``path`` opened without following a link or waiting on a FIFO, if it is a regular file
    (else ``OSError``)."""
    fd = os.open(path, SAFE_OPEN)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path.name}: not a regular file")
    return os.fdopen(fd, "rb")
