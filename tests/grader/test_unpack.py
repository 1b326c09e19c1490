"""Safe unpacking and safe reading of what a child wrote (no sandbox needed)."""

from __future__ import annotations

import io
import json
import os
import zipfile

import numpy as np
import pytest

from grader.trusted.safe_io import (
    OUTPUTS_PER_CASE,
    OUTPUTS_PER_LAB,
    Beneath,
    OutputCap,
    UnsafeData,
    load_array,
    read_bytes,
    read_group,
    read_json,
    read_outputs,
)
from grader.trusted.unpack import MAX_PY_BYTES, discover, unpack

MODULE = "src/minimodel/positional/sinusoidal.py"
NOTEBOOK = "labs/17_01_sinusoidal.ipynb"
SOURCE = b"def sinusoidal_pe(T, d, base=10000.0):\n    return None\n"
NB = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def make_zip(path, entries: dict[str, bytes], links: dict[str, str] = ()):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name, target in dict(links).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o120777 << 16
            archive.writestr(info, target)
    return path


def codes(submission):
    return {m.code for m in [*submission.messages, *submission.flags]}


def test_discover_folders_archives_and_anything_else(tmp_path):
    (tmp_path / "ana").mkdir()
    make_zip(tmp_path / "luis.zip", {MODULE: SOURCE})
    (tmp_path / "notes.txt").write_text("not a submission")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / "ana.tar.gz").write_bytes(b"")
    (tmp_path / "eva.TGZ").write_bytes(b"")
    assert [sid for sid, _ in discover(tmp_path)] == ["ana", "ana.tar.gz", "eva", "luis",
                                                       "notes.txt"]
    notes = unpack("notes.txt", tmp_path / "notes.txt")  # said, never a silent loss
    assert [f.code for f in notes.flags] == ["unsupported-type", "resubmit"]


def test_an_id_with_control_characters_is_escaped(tmp_path):
    """A line break in a submission's name cannot forge a line of ``grading.log``: the id
    escapes it, and a hash of the name keeps it apart from a classmate named like the escape."""
    for name in ("ana", "-2", "=1+1", "x\n  flagged: ana: plagiarism", "b\tc.zip",
                 "d\u202egnp.zip", "x\\x0a  flagged: ana: plagiarism"):
        (tmp_path / name).mkdir()
    ids = [sid for sid, _ in discover(tmp_path)]
    assert ids[:3] == ["-2", "=1+1", "ana"]  # printable ones, as they are
    assert all(sid.isprintable() for sid in ids) and len(set(ids)) == len(ids) == 7
    assert any(sid.startswith("x\\x0a  flagged: ana: plagiarism-") for sid in ids)


def test_zip_with_wrapping_folder_takes_only_editable_files(tmp_path):
    path = make_zip(tmp_path / "s.zip", {
        f"repo-main/{MODULE}": SOURCE, f"repo-main/{NOTEBOOK}": NB,
        "repo-main/solutions/positional/sinusoidal.py": b"x", "repo-main/src/minimodel/cli.py":
        b"print('given code is never taken')", "repo-main/README.md": b"hi"})
    submission = unpack("s", path)
    assert set(submission.files) == {MODULE, NOTEBOOK}
    assert submission.messages == []


def test_zip_slip_absolute_and_symlink_entries_are_refused(tmp_path):
    path = make_zip(tmp_path / "s.zip", {
        MODULE: SOURCE, "../../evil.py": b"x", "/etc/evil": b"x", "a/../../b": b"x",
        "C:/windows.py": b"x"}, links={"labs/17_01_sinusoidal.ipynb": "/etc/passwd"})
    submission = unpack("s", path)
    assert set(submission.files) == {MODULE}
    assert {"zip-slip", "symlink"} <= codes(submission)
    assert not (tmp_path.parent / "evil.py").exists()
    texts = " ".join(m.en for m in submission.messages)
    assert "../../evil.py" in texts


def test_huge_files_are_refused_without_trusting_the_header(tmp_path):
    path = make_zip(tmp_path / "s.zip", {MODULE: b"#" * (MAX_PY_BYTES + 10)})
    submission = unpack("s", path)
    assert submission.files == {} and "too-large" in codes(submission)
    # a zip bomb: small on disk, huge when inflated
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MODULE, b"\0" * (64 << 20))
    assert bomb.stat().st_size < 1 << 20
    assert "too-large" in codes(unpack("bomb", bomb))


def test_not_a_zip_and_bad_notebook(tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x03\x04 this is not a zip")
    assert "unreadable" in codes(unpack("bad", bad))
    path = make_zip(tmp_path / "nb.zip", {NOTEBOOK: b"{not json"})
    submission = unpack("nb", path)
    assert submission.files == {} and "bad-notebook" in codes(submission)


def test_non_utf8_source_is_refused_but_a_coding_cookie_is_honoured(tmp_path):
    latin = "# acción\ndef f():\n    return 'ñ'\n".encode("latin-1")
    assert "not-utf8" in codes(unpack("a", make_zip(tmp_path / "a.zip", {MODULE: latin})))
    declared = b"# -*- coding: latin-1 -*-\n" + latin
    submission = unpack("b", make_zip(tmp_path / "b.zip", {MODULE: declared}))
    assert MODULE in submission.files


def test_folder_with_links_out_and_special_files(tmp_path, capabilities):
    root = tmp_path / "student"
    (root / "src/minimodel/positional").mkdir(parents=True)
    (root / "labs").mkdir()
    secret = tmp_path / "secret.py"
    secret.write_bytes(SOURCE)
    os.symlink(secret, root / MODULE)
    os.mkfifo(root / NOTEBOOK)
    submission = unpack("student", root)
    assert submission.files == {}
    assert {"symlink", "not-a-file", "nothing-usable", "resubmit"} <= codes(submission)


def test_linked_folder_is_not_followed(tmp_path):
    outside = tmp_path / "outside/positional"
    outside.mkdir(parents=True)
    (outside / "sinusoidal.py").write_bytes(SOURCE)
    root = tmp_path / "student"
    (root / "src/minimodel").mkdir(parents=True)
    os.symlink(outside, root / "src/minimodel/positional")
    submission = unpack("student", root)
    assert submission.files == {} and "symlink" in codes(submission)


def test_notebook_found_anywhere_under_labs(tmp_path):
    root = tmp_path / "student"
    (root / "labs/week1").mkdir(parents=True)
    (root / "labs/week1/17_01_sinusoidal.ipynb").write_bytes(NB)
    assert NOTEBOOK in unpack("student", root).files


def test_fingerprint_follows_the_content(tmp_path):
    a = make_zip(tmp_path / "a.zip", {MODULE: SOURCE})
    b = make_zip(tmp_path / "b.zip", {f"wrap/{MODULE}": SOURCE})
    c = make_zip(tmp_path / "c.zip", {MODULE: SOURCE + b"# changed\n"})
    assert unpack("a", a).fingerprint() == unpack("b", b).fingerprint()
    assert unpack("a", a).fingerprint() != unpack("c", c).fingerprint()


# --- reading the child's files -------------------------------------------------------------------

def test_symlinks_fifos_and_huge_files_are_not_read(tmp_path):
    target = tmp_path / "reference.npy"
    np.save(target, np.ones(3))
    os.symlink(target, tmp_path / "case_000_0.npy")
    with pytest.raises(UnsafeData):
        load_array(Beneath(tmp_path) / "case_000_0.npy")
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(UnsafeData):
        read_json(Beneath(tmp_path) / "fifo.json")  # would block forever if opened naively
    (tmp_path / "big.json").write_bytes(b" " * 2048)
    with pytest.raises(UnsafeData):
        read_bytes(Beneath(tmp_path) / "big.json", 1024)
    assert read_json(Beneath(tmp_path) / "absent.json") is None


def test_pickles_and_object_arrays_are_refused(tmp_path):
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(UnsafeData):
        load_array(Beneath(tmp_path) / "objects.npy")
    (tmp_path / "pickle.npy").write_bytes(b"\x80\x04\x95 not an npy header")
    with pytest.raises(UnsafeData):
        load_array(Beneath(tmp_path) / "pickle.npy")
    np.save(tmp_path / "strings.npy", np.array(["a", "b"]))
    with pytest.raises(UnsafeData):
        load_array(Beneath(tmp_path) / "strings.npy")
    np.save(tmp_path / "record.npy", np.zeros(2, dtype=[("a", "f4"), ("b", "f4")]))
    with pytest.raises(UnsafeData):
        load_array(Beneath(tmp_path) / "record.npy")


def test_outputs_must_match_their_description(tmp_path):
    np.save(tmp_path / "case_000_0.npy", np.ones((2, 3), np.float64))
    meta = {"kind": "ndarray", "dtype": "float32", "shape": [2, 3], "file": "x"}
    (out,) = read_outputs(Beneath(tmp_path), "case_000", [meta])
    assert out["kind"] == "invalid"  # claims float32, holds float64
    meta = {**meta, "dtype": "float64", "shape": [3, 2]}
    assert read_outputs(Beneath(tmp_path), "case_000", [meta])[0]["kind"] == "invalid"
    meta = {**meta, "shape": [2, 3]}
    good = read_outputs(Beneath(tmp_path), "case_000", [meta])[0]
    assert good["kind"] == "ndarray" and type(good["array"]) is np.ndarray
    np.save(tmp_path / "case_001_0.npy", np.full(2, 1.1, np.float32))
    bf16 = {"kind": "tensor", "dtype": "bfloat16", "shape": [2], "file": "x"}
    out = read_outputs(Beneath(tmp_path), "case_001", [bf16])[0]
    assert out["kind"] == "invalid"  # not bf16 values


def test_a_child_cannot_choose_which_file_is_read(tmp_path):
    np.save(tmp_path / "case_000_0.npy", np.ones(2))
    meta = {"kind": "ndarray", "dtype": "float64", "shape": [2],
            "file": "../../solutions/labs/17_01_sinusoidal/references.npz"}
    out = read_outputs(Beneath(tmp_path), "case_000", [meta])[0]
    assert out["array"] is not None and out["array"].tolist() == [1.0, 1.0]


def test_load_array_returns_plain_ndarray(tmp_path):
    buffer = io.BytesIO()
    np.save(buffer, np.arange(4, dtype=np.int64))
    (tmp_path / "a.npy").write_bytes(buffer.getvalue())
    array = load_array(Beneath(tmp_path) / "a.npy")
    assert type(array) is np.ndarray and array.dtype == np.int64


def _sparse_output(path, shape):
    """An .npy file of ``shape`` zeros that takes no disk: its header, then a hole."""
    with open(path, "wb") as handle:
        np.lib.format.write_array_header_1_0(handle, {
            "descr": "<f4", "fortran_order": False, "shape": shape})
        handle.truncate(handle.tell() + 4 * int(np.prod(shape)))


def test_outputs_are_capped_per_case_and_per_lab_before_they_are_read(tmp_path):
    """Apparent size counts (a sparse file's holes too): a case's files over OUTPUTS_PER_CASE,
    or a lab's over OUTPUTS_PER_LAB, are not read, and the group says so."""
    rows = OUTPUTS_PER_CASE // (4 * 1024) * 3 // 4  # three quarters of a case's cap each
    meta = {"kind": "ndarray", "dtype": "float32", "shape": [rows, 1024], "file": "x"}
    for index in range(6):
        for output in range(2):
            _sparse_output(tmp_path / f"case_{index:03d}_{output}.npy", (rows, 1024))
        (tmp_path / f"case_{index:03d}.json").write_text(
            json.dumps({"ok": True, "outputs": [meta, meta]}))
    cap = OutputCap()
    data = read_group(Beneath(tmp_path), 6, cap=cap)
    kinds = [[out["kind"] for out in case["outputs"]] for case in data["cases"]]
    read = OUTPUTS_PER_LAB // (tmp_path / "case_000_0.npy").stat().st_size  # one a case
    assert kinds == [["ndarray", "invalid"]] * read + [["invalid", "invalid"]] * (6 - read)
    assert len(data["problems"]) == 12 - read == len(cap.refused)
    assert read_group(Beneath(tmp_path), 1)["cases"][0]["outputs"][0]["kind"] == "ndarray"
