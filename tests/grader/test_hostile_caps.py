"""The trusted side's own work on a submission, capped: a tar of sparse members (a few KB that
read as hundreds of MB of zeros), a zip of inner zips that are mostly central directory (entries
the listing would hold in memory), a zip of tens of thousands of virtual environments (a listing
that was quadratic), and a module whose outputs are sparse files of 30 MiB each (what the
grader would hold for a whole lab). Graded in the same run as honest classmates, whose rows must
be byte-identical to those graded alone; each costly submission is flagged or given a finding
with its reason, or graded as its files say, without holding a worker.
"""

from __future__ import annotations

import io
import tarfile
import time
import zipfile
from pathlib import Path

import pytest
from grader_corpus import (
    REFERENCE,
    ZEROS_FORWARD,
    ZEROS_PE,
    Entry,
    findings,
    module_score,
    stub_with,
    unpack_peak,
)
from test_hostile_names import graded

from grader.trusted.archive import MAX_INNER_BYTES, MAX_LISTED, MAX_TOTAL_BYTES
from grader.trusted.unpack import unpack

pytestmark = pytest.mark.slow

MODULE = "src/minimodel/positional/sinusoidal.py"
ZEROS = stub_with(ZEROS_PE, ZEROS_FORWARD)
SPARSE_MIB = 60
SPARSE_MEMBERS = 8  # 480 MiB of zeros from 20 KB
INNER_ENTRIES = 150_000  # in each inner zip, all under .git/ (skipped, so never 'too many files')
INNER_ZIPS = 8
ENVIRONMENTS = 20_000
PEAK_MIB = 400  # what listing any of them may take, the interpreter and the grader's imports in
OUTPUT_SHAPE = (1920, 4096)  # 30 MiB of float32: under the file-size limit, over a case's cap
# np.save, as the probe runner calls it, writes a sparse file: the header, then a hole
SPARSE_OUTPUTS = stub_with(
    f"return tuple(np.zeros({OUTPUT_SHAPE}, dtype=np.float32) for _ in range(4))\n",
    ZEROS_FORWARD, module="""
def _sparse_save(file, array, allow_pickle=False):
    array = np.asarray(array)
    with open(file, "wb") as handle:
        np.lib.format.write_array_header_1_0(handle, {
            "descr": np.lib.format.dtype_to_descr(array.dtype), "fortran_order": False,
            "shape": array.shape})
        handle.truncate(handle.tell() + array.nbytes)


np.save = _sparse_save
""")


def sparse_tar(path: Path, module: str) -> None:
    """Members declared sparse (PAX 0.1): one byte stored, read as ``SPARSE_MIB`` MiB."""
    assert SPARSE_MIB << 20 <= MAX_INNER_BYTES < SPARSE_MEMBERS * SPARSE_MIB << 20
    assert SPARSE_MEMBERS * SPARSE_MIB << 20 > MAX_TOTAL_BYTES
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as archive:
        info = tarfile.TarInfo(f"repo/{MODULE}")
        info.size = len(module.encode())
        archive.addfile(info, io.BytesIO(module.encode()))
        for index in range(SPARSE_MEMBERS):
            info = tarfile.TarInfo(f"repo/data/part{index}.zip")
            info.size = 1
            info.pax_headers = {"GNU.sparse.major": "0", "GNU.sparse.minor": "1",
                                "GNU.sparse.map": f"{(SPARSE_MIB << 20) - 1},1",
                                "GNU.sparse.size": str(SPARSE_MIB << 20)}
            archive.addfile(info, io.BytesIO(b"\0"))


def listing_zip(path: Path, module: str) -> None:
    """A zip of inner zips whose entries are all skipped (``.git/``): only listing costs."""
    assert INNER_ENTRIES * INNER_ZIPS > MAX_LISTED
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as archive:
        for index in range(INNER_ENTRIES):
            archive.writestr(f"d/.git/{index:06d}", b"")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"repo/{MODULE}", module)
        for index in range(INNER_ZIPS):
            archive.writestr(f"repo/data/{index}.zip", inner.getvalue())


def environments_zip(path: Path, module: str) -> None:
    """The reference among ``ENVIRONMENTS`` folders that each hold ``pyvenv.cfg``."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"repo/{MODULE}", module)
        for index in range(ENVIRONMENTS):
            archive.writestr(f"repo/envs/e{index:05d}/pyvenv.cfg", b"")
            archive.writestr(f"repo/envs/e{index:05d}/lib/site.py", b"")


COSTLY = {"sparse.tar": (sparse_tar, ZEROS), "listing.zip": (listing_zip, ZEROS),
          "environments.zip": (environments_zip, REFERENCE)}


def honest() -> list[Entry]:
    return [Entry("z_honest", REFERENCE), Entry("z_honest_zeros", ZEROS)]


def attackers() -> list[Entry]:
    return [Entry("sparse_outputs", SPARSE_OUTPUTS)]


def nothing(_folder: Path) -> None:
    pass


def costly(folder: Path) -> None:
    for name, (write, module) in COSTLY.items():
        write(folder / name, module)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, capabilities):
    if not capabilities.namespaces:
        pytest.skip("this platform cannot isolate the sandbox (needs root and namespaces)")
    root = tmp_path_factory.mktemp("hostile-caps")
    alone = graded(root / "alone", honest(), nothing)
    mixed = graded(root / "mixed", honest() + attackers(), costly)
    return {"alone": alone, "mixed": mixed, "subs": root / "mixed" / "subs"}


def test_honest_rows_are_as_graded_alone(runs):
    assert runs["mixed"]["summary"]["failed"] == []
    for entry in honest():
        assert runs["mixed"]["rows"][entry.name] == runs["alone"]["rows"][entry.name]


def test_sparse_members_count_at_their_declared_size(runs):
    record = runs["mixed"]["records"]["sparse"]
    assert record["status"] == "flagged: too-much-data"
    assert module_score(record) == module_score(runs["mixed"]["records"]["z_honest_zeros"])


def test_central_directories_count_before_they_are_read(runs):
    record = runs["mixed"]["records"]["listing"]
    assert record["status"] == "flagged: too-many-listed"
    assert module_score(record) == module_score(runs["mixed"]["records"]["z_honest_zeros"])


def test_many_environments_are_listed_in_linear_time(runs):
    record = runs["mixed"]["records"]["environments"]
    assert record["status"] == "ok" and module_score(record) == 9
    start = time.monotonic()
    submission = unpack("environments", runs["subs"] / "environments.zip")
    assert time.monotonic() - start < 20  # quadratic, it took minutes
    assert submission.module("sinusoidal") == REFERENCE.encode()


def test_outputs_are_read_under_a_cap_per_case_and_per_lab(runs):
    records = runs["mixed"]["records"]
    record = records["sparse_outputs"]
    assert "unsafe-output" in findings(record)
    assert module_score(record) <= module_score(records["z_honest_zeros"])




@pytest.mark.parametrize("name", sorted(COSTLY))
def test_listing_stays_under_its_memory_figure(runs, name):
    peak = unpack_peak(runs["subs"] / name)
    assert peak["mib"] < PEAK_MIB, peak
