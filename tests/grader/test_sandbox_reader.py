"""The one reader of what the sandbox wrote (``grader.trusted.safe_io.open_beneath``), on both of
its paths: ``openat2`` where the kernel has it, the ``O_NOFOLLOW`` walk where it does not.

Whatever a submission leaves in its folder (a link at any component, a FIFO, a socket, a link
to a device, a file over the cap) is refused with ``UnsafeData``: never a hang, never a read
outside the folder.
"""

from __future__ import annotations

import json
import os
import socket
import threading

import numpy as np
import pytest

from grader.hidden import registry
from grader.hidden.spec import NotebookChecks
from grader.trusted import safe_io
from grader.trusted.nbexec import read_records
from grader.trusted.safe_io import Beneath, UnsafeData, read_bytes, read_head, read_json

SECRET = b"a classmate's record"


@pytest.fixture(params=["openat2", "walk"])
def path(request, monkeypatch):
    """Which way the reader opens: ``openat2`` (skipped where the kernel lacks it) or the
    per-component walk."""
    if request.param == "walk":
        monkeypatch.setattr(safe_io, "_openat2_missing", [True])
    else:
        monkeypatch.setattr(safe_io, "_openat2_missing", [])
        if safe_io._syscall() is None:
            pytest.skip("no openat2 here")
    return request.param


@pytest.fixture
def scratch(tmp_path):
    """``items/`` (what the grader made) with one item folder of a submission's, and a
    classmate's records outside it."""
    items = tmp_path / "items"
    (items / "nb-x" / "records").mkdir(parents=True)
    (items / "nb-x" / "records" / "record.json").write_bytes(b"{}")
    elsewhere = tmp_path / "classmate" / "records"
    elsewhere.mkdir(parents=True)
    (elsewhere / "record.json").write_bytes(SECRET)
    return items, elsewhere


def refused(where: Beneath, limit: int = 1 << 20) -> str:
    """The reason ``where`` is refused, read in a thread so that a reader that blocks fails
    the test instead of hanging it."""
    result: list = []

    def read():
        try:
            result.append(("read", read_bytes(where, limit)))
        except UnsafeData as error:
            result.append(("refused", str(error)))

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(60)
    assert result, "the reader blocked"
    kind, value = result[0]
    assert kind == "refused", value
    return value


def test_a_plain_file_is_read_and_an_absent_one_is_none(path, scratch):
    items, _ = scratch
    assert read_bytes(Beneath(items) / "nb-x" / "records" / "record.json", 10) == b"{}"
    assert read_bytes(Beneath(items) / "nb-x" / "absent.json", 10) is None
    assert read_bytes(Beneath(items) / "nb-y" / "records" / "record.json", 10) is None
    if path == "openat2":  # the kernel has it: it was used, not the walk
        assert not safe_io._openat2_missing


def test_a_folder_replaced_by_a_link_is_not_followed(path, scratch):
    items, elsewhere = scratch
    os.rename(items / "nb-x" / "records", items / "nb-x" / "old")
    os.symlink(elsewhere, items / "nb-x" / "records")
    assert "cannot open safely" in refused(Beneath(items) / "nb-x" / "records" / "record.json")
    os.symlink(items / "nb-x" / "old", items / "nb-x" / "inside")  # not even one inside
    refused(Beneath(items) / "nb-x" / "inside" / "record.json")


@pytest.mark.parametrize("target", ["/etc/shadow", "/dev/zero", "classmate"])
def test_a_file_replaced_by_a_link_is_not_followed(path, scratch, target):
    items, elsewhere = scratch
    log = items / "nb-x" / "kernel-output.log"
    os.symlink(elsewhere / "record.json" if target == "classmate" else target, log)
    refused(Beneath(items) / "nb-x" / "kernel-output.log")
    with pytest.raises(UnsafeData):
        read_head(Beneath(items) / "nb-x" / "kernel-output.log", 100)


def test_fifos_sockets_and_folders_are_refused_without_blocking(path, scratch):
    items, _ = scratch
    os.mkfifo(items / "nb-x" / "kernel-output.log")
    assert "not a regular file" in refused(Beneath(items) / "nb-x" / "kernel-output.log")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(items / "nb-x" / "socket"))
        refused(Beneath(items) / "nb-x" / "socket")
    refused(Beneath(items) / "nb-x" / "records")


def test_sizes_are_capped(path, scratch):
    items, _ = scratch
    (items / "nb-x" / "big.log").write_bytes(b"x" * 5000)
    assert "over the limit" in refused(Beneath(items) / "nb-x" / "big.log", 4096)
    assert read_head(Beneath(items) / "nb-x" / "big.log", 100) == b"x" * 100


def test_names_stay_beneath_their_root(tmp_path):
    for name in ("..", "../x", "a/../b", "/etc/shadow", "."):
        with pytest.raises(ValueError):
            Beneath(tmp_path) / name


def test_json_nested_too_deep_is_refused_not_raised(tmp_path):
    """A few KB of ``[`` would stop the parser with a RecursionError in the grading process."""
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(UnsafeData, match="nested too deep"):
        read_json(Beneath(tmp_path) / "deep.json")


def test_a_notebooks_records_are_read_under_the_output_cap(tmp_path):
    """A record whose array file is sparse (a header, then a hole of 48 MiB) is not read: it is
    invalid and named as unsafe, as a probe case over the cap is; a small record still is."""
    cell = registry()["17.01"].notebook.cells[0]
    big, small = list(cell.records)[:2]
    base = tmp_path / "records" / cell.grade_id
    base.mkdir(parents=True)
    with open(base / f"{big}_0.npy", "wb") as handle:
        np.lib.format.write_array_header_1_0(handle, {
            "descr": "<f4", "fortran_order": False, "shape": (12 << 20,)})
        handle.truncate(handle.tell() + (48 << 20))
    np.save(base / f"{small}_0.npy", np.ones(3, dtype=np.float32))
    output = {"kind": "ndarray", "dtype": "float32", "device": "cpu", "file": True}
    (base / "record.json").write_text(json.dumps({
        big: {"ok": True, "outputs": [{**output, "shape": [12 << 20]}]},
        small: {"ok": True, "outputs": [{**output, "shape": [3]}]}}))
    unsafe = []
    records = read_records(Beneath(tmp_path), NotebookChecks("17.01", (cell,)), unsafe)
    assert records[cell.grade_id][big]["outputs"][0]["kind"] == "invalid"
    assert records[cell.grade_id][small]["outputs"][0]["array"].tolist() == [1.0, 1.0, 1.0]
    assert unsafe == [f"{big}_0.npy"]
