"""Archives: tars graded like zips, a total cap on what is decompressed at every nesting level
(inner archives spooled to a file, never held in memory), a name written twice flagged, a file of
a type the grader does not take flagged, and the archive ``make submit`` writes taken as it is."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest
from grader_corpus import unpack_peak
from test_intake import MODULE, NOTEBOOK, codes, reference_work

from grader.trusted.archive import MAX_INNER_BYTES, MAX_TOTAL_BYTES
from grader.trusted.unpack import unpack
from minimodel import submit
from minimodel.implementation import REPO_ROOT, STUBS_DIR


def tar_bytes(files: dict[str, bytes], mode: str = "w:gz", special: dict | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, kind in (special or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, "/etc/shadow"
            archive.addfile(info)
    return buffer.getvalue()


def test_tars_are_graded_like_zips(tmp_path):
    work = reference_work()
    for name, mode in (("a.tar.gz", "w:gz"), ("b.tgz", "w:gz"), ("c.tar", "w")):
        path = tmp_path / name
        path.write_bytes(tar_bytes({f"repo/{k}": v for k, v in work.items()}, mode))
        sub = unpack(name, path)
        assert sub.files == work and not sub.flags and not sub.messages, name


def test_tars_get_the_zips_safety(tmp_path):
    path = tmp_path / "evil.tar.gz"
    path.write_bytes(tar_bytes({MODULE: reference_work()[MODULE], "../../evil.py": b"x",
                                "/etc/evil": b"x"},
                               special={NOTEBOOK: tarfile.SYMTYPE, "labs/dev": tarfile.CHRTYPE,
                                        "labs/hard": tarfile.LNKTYPE}))
    sub = unpack("evil", path)
    assert set(sub.files) == {MODULE}
    assert {"zip-slip", "symlink"} <= codes(sub)
    assert not list(tmp_path.parent.rglob("evil.py"))


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_a_name_written_twice_is_flagged_and_the_last_copy_taken(tmp_path):
    stub = (STUBS_DIR / "sinusoidal.py").read_bytes()
    path = tmp_path / "twice.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(MODULE, reference_work()[MODULE])
        archive.writestr(MODULE, stub)  # what unzip leaves on disk
    sub = unpack("twice", path)
    assert sub.files[MODULE] == stub
    assert "duplicate-entry" in [f.code for f in sub.flags]
    twice = tmp_path / "twice.tar.gz"
    twice.write_bytes(_tar_twice(stub))
    assert "duplicate-entry" in codes(unpack("twice", twice))


@pytest.mark.parametrize("first", [
    f"repo/{MODULE.replace('/', '//', 1)}", f"repo/./{MODULE}",
    f"REPO/{MODULE}", f"repo/{MODULE.replace('sinusoidal', 'Sinusoidal')}"])
def test_a_name_written_twice_is_found_under_another_spelling(tmp_path, first):
    """``//``, ``./``, another case: the same file once extracted (a file system that folds
    case, as students' often do), so the copy graded is the last one, and the submission is
    flagged."""
    stub = (STUBS_DIR / "sinusoidal.py").read_bytes()
    path = tmp_path / "twice.tar"
    path.write_bytes(tar_bytes({first: reference_work()[MODULE], f"repo/{MODULE}": stub}, "w"))
    sub = unpack("twice", path)
    assert sub.files[MODULE] == stub
    flags = [f for f in sub.flags if f.code == "duplicate-entry"]
    assert len(flags) == 1 and "también como" in flags[0].es and "also as" in flags[0].en


def test_a_name_in_two_unicode_forms_is_one_file(tmp_path):
    stub = (STUBS_DIR / "sinusoidal.py").read_bytes()
    path = tmp_path / "twice.tar"
    path.write_bytes(tar_bytes({f"cafe\u0301/{MODULE}": reference_work()[MODULE],
                                f"caf\u00e9/{MODULE}": stub}, "w"))
    sub = unpack("twice", path)
    assert sub.files[MODULE] == stub and "duplicate-entry" in codes(sub)


def _tar_twice(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for _ in range(2):
            info = tarfile.TarInfo(MODULE)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def nested_bomb(path: Path, inner: int = 12) -> Path:
    """A zip of ``inner`` zips that each store 40 MiB (each just under the inner cap; all
    together over the total cap) and compress to almost nothing in the outer zip."""
    stored = io.BytesIO()
    with zipfile.ZipFile(stored, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("pad.bin", b"\0" * (40 << 20))
    assert MAX_INNER_BYTES > 40 << 20 and inner * (40 << 20) > MAX_TOTAL_BYTES
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for index in range(inner):
            archive.writestr(f"level1/{index}.zip", stored.getvalue())
        archive.writestr(MODULE, reference_work()[MODULE])
    return path




def test_nested_archives_have_one_cap_and_bounded_memory(tmp_path):
    path = nested_bomb(tmp_path / "bomb.zip")
    assert path.stat().st_size < 2 << 20
    result = unpack_peak(path)
    assert result["mib"] < 100, result  # 12 inner zips of 40 MiB were never held (36 MiB alone)
    assert "too-much-data" in result["flags"]


def test_the_archive_make_submit_writes_is_taken_as_it_is(tmp_path):
    repo = tmp_path / "repo"
    for name in submit.expected_files():
        target = repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((REPO_ROOT / name).read_bytes())
    entries = [submit.inspect(repo, name) for name in submit.expected_files()]
    folder = tmp_path / "subs" / "ana"  # an LMS download: a folder per student, their upload in it
    submit.write_archive(repo, entries, folder / "submission.zip")
    sub = unpack("ana", folder)
    assert len(sub.files) == len(submit.expected_files())
    assert sub.messages == [] and sub.found == {} and sub.flags == []
    (folder / "notas.txt").write_text("x")  # with more beside it, the zip is a zip in the folder
    assert unpack("ana", folder).found
