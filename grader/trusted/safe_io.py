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


SAFE_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # no link, no FIFO wait


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


def read_bytes(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file, or ``None`` when it does not exist.

    Raises ``UnsafeData`` for links, FIFOs, devices, folders and files over ``limit``.
    """
    try:
        fd = os.open(path, SAFE_OPEN)
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
        data = read_capped(fd, limit)
        if len(data) > limit:
            raise UnsafeData(f"{path.name}: grew over the limit of {limit} bytes")
        return data
    finally:
        os.close(fd)


def read_json(path: Path):
    """Parsed JSON from a child's file (at most ``MAX_JSON_BYTES``), or ``None`` when absent."""
    data = read_bytes(path, MAX_JSON_BYTES)
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise UnsafeData(f"{path.name}: not valid JSON ({error})") from None


def load_array(path: Path) -> np.ndarray | None:
    """A plain numeric ndarray from a child's ``.npy`` file (at most ``MAX_ARRAY_BYTES``), or
    ``None`` when absent: a base-class ndarray of plain numbers, ``UnsafeData`` for anything
    else."""
    data = read_bytes(path, MAX_ARRAY_BYTES)
    if data is None:
        return None
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise UnsafeData(f"{path.name}: not a plain .npy array ({error})") from None
    if type(array) is not np.ndarray:
        raise UnsafeData(f"{path.name}: not a plain ndarray ({type(array).__name__})")
    if array.dtype.kind not in ALLOWED_KINDS or array.dtype.fields is not None \
            or array.dtype.hasobject or array.dtype.subdtype is not None:
        raise UnsafeData(f"{path.name}: dtype {array.dtype} is not plain numbers")
    if array.ndim > MAX_NDIM:
        raise UnsafeData(f"{path.name}: {array.ndim} dimensions")
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

def read_outputs(folder: Path, prefix: str, metas: object) -> list[dict]:
    """Validate the output descriptions a child wrote and load their arrays safely.

    Each returned dict has ``kind``, ``dtype``, ``shape``, ``device``, ``value`` (strings) and
    ``array`` (a checked ndarray or ``None``); an output that is not plain, consistent data gets
    ``kind = "invalid"`` and a ``problem``.
    """
    return [_read_output(folder, f"{prefix}_{index}.npy", meta)
            for index, meta in enumerate(metas[:16])] if isinstance(metas, list) else []


def _read_output(folder: Path, filename: str, meta: object) -> dict:
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
    shape = meta.get("shape", [])
    if not (isinstance(shape, list) and len(shape) <= 8 and
            all(isinstance(s, int) and 0 <= s < 2**40 for s in shape)):
        return {**out, "kind": "invalid", "problem": "bad shape"}
    out["shape"] = tuple(shape)
    if "file" not in meta:
        return out
    try:
        array = load_array(folder / filename)
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


def read_group(folder: Path, n_cases: int) -> dict:
    """Everything one probe group's worker left: import error, cases, completion marker."""
    result: dict = {"import_error": None, "cases": [None] * n_cases, "done": False,
                    "problems": []}
    try:
        result["done"] = read_json(folder / "done.json") is not None
        error = read_json(folder / "import_error.json")
        if isinstance(error, dict):
            result["import_error"] = _clean_error(error)
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
        result["cases"][index] = read_entry(folder, prefix, record)
    return result


def read_entry(folder: Path, prefix: str, record: dict, cap: int = 4000,
               located: bool = True) -> dict:
    """One case's (or one recorded value's) outputs, or the exception it raised."""
    if record.get("ok"):
        return {"ok": True, "error": None,
                "outputs": read_outputs(folder, prefix, record.get("outputs"))}
    return {"ok": False, "error": _clean_error(record.get("error"), cap, located), "outputs": []}


def _clean_error(error: object, cap: int = 4000, located: bool = True) -> dict:
    if not isinstance(error, dict):
        return {"type": "Error", "message": ""}
    clean = {"type": str(error.get("type", "Error"))[:80],
             "message": str(error.get("message", ""))[:cap]}
    if not located:
        return clean
    if isinstance(error.get("lineno"), int):
        clean["lineno"] = error["lineno"]
    if isinstance(error.get("file"), str):
        clean["file"] = os.path.basename(error["file"])[:120]
    return clean
