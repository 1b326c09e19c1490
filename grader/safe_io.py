"""Read what a sandboxed child wrote, without trusting it, and write results atomically.

The child owns its item folder and can put anything there: symbolic links to the reference
outputs, FIFOs that block a reader, gigabyte files, pickles, object arrays, arrays that claim one
dtype and hold another. Everything it wrote is read here with ``O_NOFOLLOW``, as a regular file,
under a size cap, and loaded with ``allow_pickle=False`` into a plain ``numpy.ndarray`` whose dtype
is checked. Anything odd is refused (``UnsafeData``), which costs that output only.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import tempfile
from pathlib import Path

import numpy as np

MAX_JSON_BYTES = 1 << 20
MAX_ARRAY_BYTES = 256 << 20
MAX_NDIM = 8
ALLOWED_KINDS = "biuf"


class UnsafeData(ValueError):
    """A file from the child that is not plain data of the expected kind."""


def read_bytes(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file, or ``None`` when it does not exist.

    Raises ``UnsafeData`` for links, FIFOs, devices, folders and files over ``limit``.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:  # ELOOP: a symbolic link
        raise UnsafeData(f"{path.name}: cannot open safely ({error.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeData(f"{path.name}: not a regular file")
        if info.st_size > limit:
            raise UnsafeData(f"{path.name}: {info.st_size} bytes, over the limit of {limit}")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise UnsafeData(f"{path.name}: grew over the limit of {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_json(path: Path, limit: int = MAX_JSON_BYTES):
    """Parsed JSON from a child's file, or ``None`` when absent."""
    data = read_bytes(path, limit)
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise UnsafeData(f"{path.name}: not valid JSON ({error})") from None


def load_array(path: Path, limit: int = MAX_ARRAY_BYTES) -> np.ndarray | None:
    """A plain numeric ndarray from a child's ``.npy`` file, or ``None`` when absent."""
    data = read_bytes(path, limit)
    if data is None:
        return None
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise UnsafeData(f"{path.name}: not a plain .npy array ({error})") from None
    return check_array(array, path.name)


def check_array(array: object, name: str) -> np.ndarray:
    """``array`` if it is a base-class ndarray of plain numbers; ``UnsafeData`` otherwise."""
    if type(array) is not np.ndarray:
        raise UnsafeData(f"{name}: not a plain ndarray ({type(array).__name__})")
    if array.dtype.kind not in ALLOWED_KINDS or array.dtype.fields is not None \
            or array.dtype.hasobject or array.dtype.subdtype is not None:
        raise UnsafeData(f"{name}: dtype {array.dtype} is not plain numbers")
    if array.ndim > MAX_NDIM:
        raise UnsafeData(f"{name}: {array.ndim} dimensions")
    return array


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, data) -> None:
    atomic_write_text(path, json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
