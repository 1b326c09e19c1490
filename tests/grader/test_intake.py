"""Submissions as students really send them: every archive shape finds the same files, and what
cannot be read is flagged with a reason, never a silent zero.

The unit tests read archives without grading; ``test_real_archives_grade_like_clean_work``
grades a small class (lab 17.01 only) of the reference work packed in each shape.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import nbformat
import pytest

from grader.trusted import nbexec
from grader.trusted.archive import MAX_ENTRIES
from grader.trusted.grading import Options, grade
from grader.trusted.sandbox import Limits
from grader.trusted.unpack import MAX_PY_BYTES, unpack
from minimodel.implementation import REFERENCE_DIR

SLUG = "17_01_sinusoidal"
MODULE = "src/minimodel/positional/sinusoidal.py"
NOTEBOOK = f"labs/{SLUG}.ipynb"
TEST_LIMITS = Limits(wall_s=5, cpu_s=5, memory_mb=1024, cell_timeout_s=40, notebook_wall_s=120)


def reference_work(notebook: bool = True) -> dict[str, bytes]:
    """The files a student who solved lab 17.01 edits, as the course lays them out."""
    files = {MODULE: (REFERENCE_DIR / "sinusoidal.py").read_bytes()}
    if notebook:
        files[NOTEBOOK] = nbformat.writes(nbexec.source_notebook(SLUG)).encode()
    return files


class _Cp437Name(zipfile.ZipInfo):
    """An entry written as old tools do: UTF-8 bytes in the name, without the UTF-8 flag."""

    def _encodeFilenameFlags(self):  # noqa: N802 - zipfile's own name
        return self.filename.encode("utf-8"), self.flag_bits & ~0x800


def zip_bytes(entries: dict[str, bytes], *, flagless: bool = False) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            info = _Cp437Name(name) if flagless else zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


def wrapped(prefix: str, files: dict[str, bytes], sep: str = "/") -> dict[str, bytes]:
    return {(f"{prefix}{sep}" if prefix else "") + name.replace("/", sep): data
            for name, data in files.items()}


def virtual_environment(files: int) -> dict[str, bytes]:
    """A ``.venv/`` as students zip it: many files, a big library, an installed copy of the
    course (an old ``sinusoidal.py`` that must not be taken), and a ``pyvenv.cfg``."""
    venv = {".venv/pyvenv.cfg": b"home = /usr/bin\n",
            ".venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so": b"\0" * (64 << 20)}
    for index in range(files):
        venv[f".venv/lib/python3.11/site-packages/pkg{index // 100}/m{index}.py"] = b"x = 1\n"
    venv[".venv/lib/python3.11/site-packages/minimodel/positional/sinusoidal.py"] = b"OLD = 1\n"
    return venv


def shapes() -> dict[str, bytes]:
    """Every archive shape of the issue, each holding the reference work (name -> zip bytes)."""
    work = reference_work()
    module_only = reference_work(notebook=False)
    github = zip_bytes(wrapped("minimodel-positional-main", work))
    cut = zip_bytes({**work, "README.md": os.urandom(200_000)})
    return {
        "venv": zip_bytes({**wrapped("repo", work), **wrapped("repo", virtual_environment(
            MAX_ENTRIES + 500)), "repo/.git/objects/ab/cdef": b"\0" * 1000,
            "repo/node_modules/x/sinusoidal.py": b"def sinusoidal_pe(): return 0\n"}),
        "powershell": zip_bytes(wrapped("minimodel", work, sep="\\")),
        "top_level": zip_bytes({"sinusoidal.py": module_only[MODULE],
                                f"{SLUG}.ipynb": work[NOTEBOOK]}),
        "zip_in_zip": zip_bytes({"entrega.zip": github, "__MACOSX/._entrega.zip": b"\0\5"}),
        "truncated": cut[: len(cut) // 2],
        "macos": zip_bytes({**wrapped("Entrega", work), "Entrega/.DS_Store": b"\0\0\0\1Bud1",
                            "__MACOSX/Entrega/src/minimodel/positional/._sinusoidal.py":
                            b"\0\5\26\7", "__MACOSX/Entrega/._labs": b"\0\5"}),
        "github": github,
        "non_ascii": zip_bytes(wrapped("Tarea_Núñez_añadida", work), flagless=True),
    }


def submission(tmp_path: Path, name: str, data: bytes):
    path = tmp_path / f"{name}.zip"
    path.write_bytes(data)
    return unpack(name, path)


def codes(sub) -> set[str]:
    return {m.code for m in [*sub.messages, *sub.flags]}


# --- reading archives (no grading) ---------------------------------------------------------------

@pytest.fixture(scope="module")
def archives() -> dict[str, bytes]:
    return shapes()


@pytest.mark.parametrize("shape", ["venv", "powershell", "top_level", "zip_in_zip", "macos",
                                   "github", "non_ascii"])
def test_every_shape_finds_the_reference_work(tmp_path, archives, shape):
    sub = submission(tmp_path, shape, archives[shape])
    assert sub.files == reference_work(), sorted(sub.files)
    assert not sub.flags, [f.en for f in sub.flags]


def test_files_out_of_place_are_taken_and_said(tmp_path, archives):
    sub = submission(tmp_path, "top", archives["top_level"])
    notes = {m.en for m in sub.messages if m.code == "found-elsewhere"}
    assert any(MODULE in n and "'sinusoidal.py'" in n for n in notes), notes
    assert sub.found == {MODULE: "sinusoidal.py", NOTEBOOK: f"{SLUG}.ipynb"}
    nested = submission(tmp_path, "nested", archives["zip_in_zip"])
    assert nested.found[MODULE] == f"entrega.zip/minimodel-positional-main/{MODULE}"
    assert all(m.es and m.en for m in nested.messages)


def test_usual_places_say_nothing(tmp_path, archives):
    for shape in ("venv", "powershell", "macos", "github", "non_ascii"):
        sub = submission(tmp_path, shape, archives[shape])
        assert sub.messages == [] and sub.found == {}, (shape, [m.en for m in sub.messages])


def test_a_big_virtual_environment_is_never_read(tmp_path, archives, monkeypatch):
    read = []
    original = zipfile.ZipFile.open

    def spy(self, name, *args, **kwargs):
        read.append(getattr(name, "filename", name))
        return original(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", spy)
    sub = submission(tmp_path, "venv", archives["venv"])
    assert sorted(read) == ["repo/" + NOTEBOOK, "repo/" + MODULE]
    assert not sub.flags


def test_the_usual_place_wins_and_lookalikes_are_not_taken(tmp_path):
    work = reference_work(notebook=False)
    sub = submission(tmp_path, "copies", zip_bytes({
        **wrapped("repo", work), "repo/old/sinusoidal.py": b"def sinusoidal_pe(T, d):\n  0\n",
        "repo/build/lib/minimodel/positional/sinusoidal.py": b"def sinusoidal_pe(): 1\n"}))
    assert sub.files == work and sub.messages == []
    other = submission(tmp_path, "other", zip_bytes({
        "proyecto/sinusoidal.py": b"# another project's file\nprint('hola')\n",
        "proyecto/notes.txt": b"x"}))
    assert other.files == {} and "nothing-recognised" in codes(other)


def test_a_renamed_notebook_is_known_by_its_graded_cells(tmp_path):
    notebook = reference_work()[NOTEBOOK]
    sub = submission(tmp_path, "renamed", zip_bytes({"Untitled (1).ipynb": notebook,
                                                     "otro.ipynb": b'{"cells": []}'}))
    assert sub.files == {NOTEBOOK: notebook}
    assert sub.found == {NOTEBOOK: "Untitled (1).ipynb"}
    copy = submission(tmp_path, "copy", zip_bytes({f"labs/{SLUG}-Copy1.ipynb": notebook}))
    assert copy.files == {NOTEBOOK: notebook}


def test_the_nbgrader_layout_is_a_usual_place(tmp_path):
    notebook = reference_work()[NOTEBOOK]
    sub = submission(tmp_path, "nbgrader", zip_bytes({f"{SLUG}/{SLUG}.ipynb": notebook}))
    assert sub.files == {NOTEBOOK: notebook} and sub.messages == []


@pytest.mark.parametrize(("shape", "code"), [
    ("truncated", "unreadable"), ("empty", "empty"), ("only_venv", "empty"),
    ("nothing", "nothing-recognised"), ("not_a_zip", "unreadable"), ("huge", "too-large"),
    ("encrypted", "encrypted")])
def test_what_cannot_be_read_is_flagged_with_what_to_resubmit(tmp_path, archives, shape, code):
    data = {
        "truncated": archives.get("truncated"),
        "empty": zip_bytes({}),
        "only_venv": zip_bytes(virtual_environment(10)),
        "nothing": zip_bytes({"tarea/README.md": b"hola", "tarea/main.py": b"print(1)\n"}),
        "not_a_zip": b"%PDF-1.4 this is a PDF renamed to .zip",
        "huge": zip_bytes({MODULE: b"#" * (MAX_PY_BYTES + 1)}),
        "encrypted": _encrypted(zip_bytes(reference_work(notebook=False))),
    }[shape]
    sub = submission(tmp_path, shape, data)
    flagged = [f.code for f in sub.flags]
    assert code in flagged and flagged[-1] == "resubmit", flagged
    assert all(f.es and f.en and f.es != f.en for f in sub.flags)


def _encrypted(data: bytes) -> bytes:
    """The same zip with every entry marked encrypted (what a password-protected zip says)."""
    raw = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (start := raw.find(signature, start)) >= 0:
            raw[start + offset] |= 0x1
            start += 4
    return bytes(raw)


def test_folders_skip_environments_and_find_misplaced_files(tmp_path):
    root = tmp_path / "ana"
    (root / "mis cosas").mkdir(parents=True)
    (root / "mis cosas/sinusoidal.py").write_bytes(reference_work()[MODULE])
    env = root / "entorno"
    (env / "lib").mkdir(parents=True)
    (env / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (env / "lib/sinusoidal.py").write_bytes(b"def sinusoidal_pe(): pass\n")
    (root / "proyecto.zip").write_bytes(zip_bytes(wrapped("p", {NOTEBOOK: reference_work()[
        NOTEBOOK]})))
    sub = unpack("ana", root)
    assert sub.files == reference_work()
    assert sub.found == {MODULE: "mis cosas/sinusoidal.py", NOTEBOOK: f"proyecto.zip/p/{NOTEBOOK}"}


# --- grading: the same points as the same work submitted cleanly --------------------------------

def test_real_archives_grade_like_clean_work(tmp_path, archives):
    submissions, out = tmp_path / "submissions", tmp_path / "out"
    clean = submissions / "clean"
    for name, data in reference_work().items():
        (clean / name).parent.mkdir(parents=True, exist_ok=True)
        (clean / name).write_bytes(data)
    for shape, data in archives.items():
        (submissions / f"{shape}.zip").write_bytes(data)
    log = io.StringIO()
    summary = grade(submissions, out, Options(workers=2, limits=TEST_LIMITS, progress=False,
                                              labs=["17.01"]), stream=log)
    run = {"out": out, "log": log.getvalue()}
    assert summary["flagged"] == ["truncated"]
    records = {r["student_id"]: r for r in summary["records"]}
    clean = records["clean"]
    auto = [v for v in clean["labs"]["17.01"]["items"] if v["kind"] == "auto"]
    assert auto and all(v["status"] == "passed" for v in auto) and clean["status"] == "ok"

    def scores(record):
        return {v["key"]: v["score"] for v in record["labs"]["17.01"]["items"]}

    for shape in archives:
        record = records[shape]
        if shape == "truncated":
            continue
        assert scores(record) == scores(clean), shape
        assert record["status"] == "ok", (shape, record["status"])
    flagged = records["truncated"]
    assert flagged["status"] == "flagged: unreadable"
    rows = (run["out"] / "grades.csv").read_text().splitlines()
    assert any(r.startswith("truncated,") and r.endswith(",flagged: unreadable") for r in rows)
    feedback = run["out"] / "feedback" / "truncated"
    es = (feedback / "feedback.es.md").read_text()
    en = (feedback / "feedback.en.md").read_text()
    assert "dañado" in es and "vuelve a entregar" in es
    assert "damaged" in en and "submit again" in en
    assert "flagged" in run["log"] and "1 flagged" in run["log"]
    assert "truncated: unreadable" in run["log"]
    top = (run["out"] / "feedback" / "top_level" / "feedback.en.md").read_text()
    assert "was taken from" in top
    assert json.loads((run["out"] / "records" / "top_level.json").read_text())["found"]
