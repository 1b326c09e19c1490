"""Read what a sandboxed child wrote, without trusting it, and write results atomically.

The child owns its item folder and can put anything there: symbolic links (to the reference
outputs, to ``/etc/shadow``, to ``/dev/zero``, to a classmate's records, in place of a folder as
well as of a file), FIFOs that block a reader, gigabyte files, pickles, object arrays, arrays that
claim one dtype and hold another. Every file the trusted side opens under a scratch folder is named
by a :class:`Beneath` (a folder the grader made, then plain names) and opened by
:func:`open_beneath`, the one reader: beneath that folder, following no symbolic link at any
component (``openat2`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS``, or, where the kernel lacks
it, a walk that opens each folder with ``O_NOFOLLOW`` relative to the one before), non-blocking,
a regular file only (``fstat``), read under a size cap. Arrays are loaded with
``allow_pickle=False`` into a plain ``numpy.ndarray`` whose dtype is checked. Anything odd is
refused (``UnsafeData``), which costs that output only and is said to the student as a finding.
What a lab's probe groups leave is read under an :class:`OutputCap`, counted on apparent size
before a byte is read, so that no submission makes the grader hold more than that at once.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import io
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path, PurePosixPath

import numpy as np

from grader.trusted.redact import Sources, known_name

MAX_JSON_BYTES = 1 << 20
MAX_ARRAY_BYTES = 256 << 20
OUTPUTS_PER_CASE = 32 << 20  # a probe case's output files, by apparent size (sparse holes count)
OUTPUTS_PER_LAB = 128 << 20  # those of all of a lab's probe groups, every variant together
MAX_NDIM = 8
ALLOWED_KINDS = "biuf"


class UnsafeData(ValueError):
    """A file from the child that is not plain data of the expected kind."""


SAFE_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # no link, no FIFO wait
_FOLDER_OPEN = SAFE_OPEN | os.O_DIRECTORY

# openat2(2), Linux 5.6 and later: the same number on every architecture
SYS_OPENAT2 = 437
RESOLVE_NO_MAGICLINKS, RESOLVE_NO_SYMLINKS, RESOLVE_BENEATH = 0x02, 0x04, 0x08


@dataclass(frozen=True)
class Beneath:
    """A file or folder the sandbox may have written: a folder the grader made (``root``,
    trusted) and plain names below it (``parts``, no ``..``), as ``Beneath(items) / "nb-x" /
    "kernel-output.log"``. Opened only by :func:`open_beneath`."""

    root: Path
    parts: tuple[str, ...] = ()

    def __truediv__(self, name: str) -> Beneath:
        parts = PurePosixPath(name).parts
        if not parts or any(p in ("/", ".", "..") or "\0" in p for p in parts):
            raise ValueError(f"not a plain relative name: {name!r}")
        return Beneath(self.root, self.parts + parts)

    @property
    def name(self) -> str:
        return self.parts[-1] if self.parts else self.root.name


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


@cache
def _syscall():
    """libc's ``syscall``, or ``None`` where there is no such thing (not Linux)."""
    try:
        return ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None


_openat2_missing: list[bool] = []  # set once openat2 answered ENOSYS (or a filter's EPERM)


def _openat2(root_fd: int, relative: str, flags: int) -> int | None:
    """``openat2`` beneath ``root_fd`` following no link; ``None`` where the kernel lacks it."""
    syscall = _syscall()
    if syscall is None or _openat2_missing:
        return None
    how = _OpenHow(flags, 0, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
    fd = syscall(ctypes.c_long(SYS_OPENAT2), ctypes.c_long(root_fd),
                 ctypes.c_char_p(os.fsencode(relative)), ctypes.byref(how),
                 ctypes.c_size_t(ctypes.sizeof(how)))
    if fd >= 0:
        return fd
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EPERM):  # an old kernel, or a seccomp filter that says no
        _openat2_missing.append(True)
        return None
    raise OSError(code, os.strerror(code), relative)


def _walk_open(root_fd: int, parts: tuple[str, ...], flags: int) -> int:
    """The same without ``openat2``: each folder opened with ``O_NOFOLLOW`` relative to the one
    before, so that no component can be a link and none can be swapped while walking."""
    fd = os.dup(root_fd)
    try:
        for part in parts[:-1]:
            inner = os.open(part, _FOLDER_OPEN, dir_fd=fd)
            os.close(fd)
            fd = inner
        return os.open(parts[-1], flags, dir_fd=fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def open_beneath(where: Beneath) -> Iterator[int | None]:
    """The one reader of what the sandbox wrote: a descriptor of the regular file ``where``
    names, or ``None`` when it does not exist (closed on leaving).

    Raises ``UnsafeData`` for a link at any component, a folder, a FIFO, a socket, a device, or
    a name that leads out of ``where.root``; never blocks, never follows anything.
    """
    if not where.parts:
        raise UnsafeData(f"{where.name}: a folder, not a file")
    try:
        root_fd = os.open(where.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        yield None
        return
    try:
        fd = _openat2(root_fd, "/".join(where.parts), SAFE_OPEN)
        if fd is None:
            fd = _walk_open(root_fd, where.parts, SAFE_OPEN)
    except FileNotFoundError:
        fd = None
    except OSError as error:  # ELOOP: a link; EXDEV: out of the root; ENOTDIR, ENXIO, ...
        raise UnsafeData(f"{where.name}: cannot open safely "
                         f"({errno.errorcode.get(error.errno, error.errno)})") from None
    finally:
        os.close(root_fd)
    if fd is None:
        yield None
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeData(f"{where.name}: not a regular file")
        yield fd
    finally:
        os.close(fd)


def read_capped(fd: int, cap: int) -> bytes:
    """At most ``cap + 1`` bytes of ``fd``: more than ``cap`` tells a file over the cap."""
    chunks, size = [], 0
    while size <= cap:
        chunk = os.read(fd, min(1 << 20, cap + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


Charge = Callable[[str, int], None]  # (file name, apparent size): UnsafeData when over a cap


def read_bytes(where: Beneath, limit: int, charge: Charge | None = None) -> bytes | None:
    """The bytes of a regular file the sandbox wrote, or ``None`` when it does not exist.

    Raises ``UnsafeData`` for what :func:`open_beneath` refuses, for files over ``limit``, and
    for what ``charge`` refuses (given the file's apparent size before anything is read).
    """
    with open_beneath(where) as fd:
        if fd is None:
            return None
        if charge is not None:
            charge(where.name, os.fstat(fd).st_size)
        data = read_capped(fd, limit)
    if len(data) > limit:
        raise UnsafeData(f"{where.name}: over the limit of {limit} bytes")
    return data


def read_head(where: Beneath, limit: int) -> bytes | None:
    """At most the first ``limit`` bytes of a regular file the sandbox wrote (a log), or
    ``None`` when it does not exist; ``UnsafeData`` as :func:`open_beneath`."""
    with open_beneath(where) as fd:
        return None if fd is None else read_capped(fd, limit)[:limit]


def read_json(where: Beneath):
    """Parsed JSON from a child's file (at most ``MAX_JSON_BYTES``), or ``None`` when absent;
    ``UnsafeData`` for anything that does not parse."""
    data = read_bytes(where, MAX_JSON_BYTES)
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise UnsafeData(f"{where.name}: not valid JSON ({error})") from None
    except RecursionError:  # "[[[[…": a few KB nested deeper than the parser goes
        raise UnsafeData(f"{where.name}: JSON nested too deep") from None


def load_array(where: Beneath, charge: Charge | None = None) -> np.ndarray | None:
    """A plain numeric ndarray from a child's ``.npy`` file (at most ``MAX_ARRAY_BYTES``, and
    what ``charge`` allows), or ``None`` when absent: a base-class ndarray of plain numbers,
    ``UnsafeData`` for anything else."""
    data = read_bytes(where, MAX_ARRAY_BYTES, charge)
    if data is None:
        return None
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise UnsafeData(f"{where.name}: not a plain .npy array ({error})") from None
    if type(array) is not np.ndarray:
        raise UnsafeData(f"{where.name}: not a plain ndarray ({type(array).__name__})")
    if array.dtype.kind not in ALLOWED_KINDS or array.dtype.fields is not None \
            or array.dtype.hasobject or array.dtype.subdtype is not None:
        raise UnsafeData(f"{where.name}: dtype {array.dtype} is not plain numbers")
    if array.ndim > MAX_NDIM:
        raise UnsafeData(f"{where.name}: {array.ndim} dimensions")
    return array


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` so that readers see the old file or the new one, never
    half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_json(path: Path, data) -> None:
    atomic_write_text(path, json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n")


# --- what a probe group wrote ------------------------------------------------------------------

@dataclass
class OutputCap:
    """What one lab's probe groups may leave to be read: ``OUTPUTS_PER_CASE`` for each case's
    files and ``OUTPUTS_PER_LAB`` for all of them, counted on apparent size (a sparse file's
    holes too) before a byte is read. A file over either is not read (``UnsafeData``, a finding
    against the submission); ``refused`` names them."""

    lab_left: int = OUTPUTS_PER_LAB
    case_left: int = OUTPUTS_PER_CASE
    refused: list[str] = field(default_factory=list)

    def next_case(self) -> None:
        self.case_left = OUTPUTS_PER_CASE

    def charge(self, name: str, size: int) -> None:
        if size > min(self.case_left, self.lab_left):
            self.refused.append(name)
            raise UnsafeData(f"{name}: over the cap on what a case or a lab leaves to read")
        self.case_left -= size
        self.lab_left -= size


def read_outputs(folder: Beneath, prefix: str, metas: object,
                 cap: OutputCap | None = None) -> list[dict]:
    """Validate the output descriptions a child wrote and load their arrays safely.

    Each returned dict has ``kind``, ``dtype``, ``shape``, ``device``, ``value`` (strings) and
    ``array`` (a checked ndarray or ``None``); an output that is not plain, consistent data gets
    ``kind = "invalid"`` and a ``problem``.
    """
    return [_read_output(folder, f"{prefix}_{index}.npy", meta, cap)
            for index, meta in enumerate(metas[:16])] if isinstance(metas, list) else []


def _read_output(folder: Beneath, filename: str, meta: object, cap: OutputCap | None) -> dict:
    if not isinstance(meta, dict):
        return {"kind": "invalid", "problem": "description is not an object"}
    out = {
        "kind": str(meta.get("kind", "unsupported"))[:32],
        "dtype": str(meta.get("dtype", ""))[:32],
        "device": str(meta.get("device", "cpu"))[:16],
        "exact_type": bool(meta.get("exact_type", True)),
        "type": str(meta.get("type", ""))[:64],
        "value": str(meta["value"])[:4000] if "value" in meta else None,
        "array": None,
    }
    if out["dtype"] and not known_name(out["dtype"]):  # only NumPy's and PyTorch's own
        return {**{k: v for k, v in out.items() if k != "dtype"}, "kind": "invalid",
                "problem": "not a dtype"}
    shape = meta.get("shape", [])
    if not (isinstance(shape, list) and len(shape) <= 8 and
            all(isinstance(s, int) and 0 <= s < 2**40 for s in shape)):
        return {**out, "kind": "invalid", "problem": "bad shape"}
    out["shape"] = tuple(shape)
    if "file" not in meta:
        return out
    try:
        array = load_array(folder / filename, cap and cap.charge)
    except UnsafeData as error:
        return {**out, "kind": "invalid", "problem": str(error)}
    if array is None:
        return {**out, "kind": "invalid", "problem": "array file missing"}
    expected_shape = out["shape"] + ((2,) if meta.get("complex") else ())
    if array.shape != expected_shape:
        return {**out, "kind": "invalid", "problem": "array does not match its description"}
    declared = out["dtype"]
    if declared == "bfloat16":
        ok = array.dtype == np.float32 and not np.any(array.view(np.uint32) & 0xFFFF)
    elif meta.get("complex"):
        ok = array.dtype.kind == "f"
    else:
        ok = array.dtype.name == declared or out["kind"] == "scalar" or declared not in (
            "float16", "float32", "float64", "int64", "int32", "bool", "uint8", "int8", "int16")
    if not ok:
        return {**out, "kind": "invalid", "problem": "dtype does not match its description"}
    out["array"] = array
    return out


def read_group(folder: Beneath, n_cases: int, sources: Sources | None = None,
               cap: OutputCap | None = None) -> dict:
    """Everything one probe group's worker left: import error, cases, completion marker; the
    exceptions with only what ``sources`` (the submission's own text) allows, when given; the
    outputs under ``cap`` (its lab's), when given."""
    cap = cap or OutputCap()
    refused = len(cap.refused)
    result: dict = {"import_error": None, "cases": [None] * n_cases, "done": False,
                    "problems": []}
    try:
        result["done"] = read_json(folder / "done.json") is not None
        error = read_json(folder / "import_error.json")
        if isinstance(error, dict):
            result["import_error"] = _clean_error(error, sources=sources)
    except UnsafeData as error:
        result["problems"].append(str(error))
    for index in range(n_cases):
        prefix = f"case_{index:03d}"
        try:
            record = read_json(folder / f"{prefix}.json")
        except UnsafeData as error:
            result["problems"].append(str(error))
            continue
        if not isinstance(record, dict):
            continue
        cap.next_case()
        result["cases"][index] = read_entry(folder, prefix, record, sources=sources,
                                            outputs=cap)
    result["problems"] += cap.refused[refused:]
    return result


def read_entry(folder: Beneath, prefix: str, record: dict, cap: int = 4000, *,
               located: bool = True, sources: Sources | None = None,
               outputs: OutputCap | None = None) -> dict:
    """One case's (or one recorded value's) outputs (under ``outputs``, when given), or the
    exception it raised."""
    if record.get("ok"):
        return {"ok": True, "error": None,
                "outputs": read_outputs(folder, prefix, record.get("outputs"), outputs)}
    return {"ok": False, "error": _clean_error(record.get("error"), cap, located, sources),
            "outputs": []}


def _clean_error(error: object, cap: int = 4000, located: bool = True,
                 sources: Sources | None = None) -> dict:
    if not isinstance(error, dict):
        return {"type": "Error", "message": ""}
    clean = {"type": str(error.get("type", "Error"))[:80],
             "message": str(error.get("message", ""))[:cap]}
    if located and isinstance(error.get("file"), str):
        clean["file"] = os.path.basename(error["file"])[:120]
    return sources.clean_error(clean) if sources is not None else clean
