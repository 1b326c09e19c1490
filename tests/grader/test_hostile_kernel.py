"""What a submission leaves in the kernel: IPC objects, processes, memory over many processes,
an exit code that once meant "out of memory", a full disk, a worker held by sleeping. Each
hostile submission is graded in one run, on one worker, before an honest classmate, whose row
must be byte-identical to the row it gets when graded alone; each attacker scores like the stub
or is stopped with a reason, and nothing it did outlives the run.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import nbformat
import pytest
from grader_corpus import (
    MARKER,
    REFERENCE,
    SLUG,
    ZEROS_FORWARD,
    ZEROS_PE,
    Entry,
    findings,
    graded_class,
    module_score,
    output_heads,
    solved_cells,
    stub_with,
)

from grader.build.demo import fill_notebook
from grader.build.sync import released_text
from grader.trusted.sandbox import Limits
from minimodel.implementation import REPO_ROOT

pytestmark = pytest.mark.slow

IPC_KEY = 0x6D6D6700  # the SysV keys the attackers use: IPC_KEY + 0..15
LIMITS = Limits(wall_s=2.5, cpu_s=3, memory_mb=384, cell_timeout_s=40, notebook_wall_s=120,
                student_wall_s=40, scratch_mb=64, kernel_memory_mb=2048)
SLEEP = LIMITS.wall_s - 0.4  # just under the limit of every call
CHILD_MB = 250  # four children together: well over memory_mb and the group's headroom

IPC_ATTACK = f'''
import ctypes as _ct
_libc = _ct.CDLL(None, use_errno=True)
_libc.shmat.restype = _ct.c_void_p
if _libc.shmget({IPC_KEY}, 0, 0) >= 0 or _libc.msgget({IPC_KEY + 8}, 0) >= 0:
    print("IPC FOUND")  # left by an earlier run
for _i in range(3):
    _id = _libc.shmget({IPC_KEY} + _i, 8 << 20, 0o1666)
    _at = _libc.shmat(_id, None, 0)
    if _at not in (None, _ct.c_void_p(-1).value):
        _ct.memset(_at, 1, 8 << 20)
    _libc.msgget({IPC_KEY + 8} + _i, 0o1666)
print("IPC MADE")
'''
DAEMON = f'''
import os as _os
if _os.fork() == 0:
    _os.setsid()
    _os.execvp("sleep", ["sleep", "{MARKER}"])
'''
FORK_ATTACK = f'''
import os as _os, select as _select
_read, _write = _os.pipe()
for _ in range(4):
    if _os.fork() == 0:
        _block = bytearray({CHILD_MB} << 20)
        _block[::4096] = b"x" * len(_block[::4096])
        _os.write(_write, b"1")
        import time as _t
        _t.sleep(3)
        _os._exit(0)
_held, _until = 0, __import__("time").monotonic() + 2.5
while _select.select([_read], [], [], max(0, _until - __import__("time").monotonic()))[0]:
    _held += len(_os.read(_read, 16))
print("HELD", _held)
'''
DISK_ATTACK = '''
import os as _os
_written = 0
try:
    for _i in range(25):
        with open(f"fill-{_i}", "wb") as _handle:
            _handle.write(b"x" * (4 << 20))
        _written += 4
except OSError:
    pass
print("WROTE MB", _written)
'''
# The kernel's address space is limited to --kernel-memory, torch's mappings included, so only
# processes together can go over its group's limit: 16 children of HOG_MB each, and the kernel
# with twice as much, the largest process, the one the group's OOM killer stops.
HOG_MB = LIMITS.kernel_memory_mb // 15
KERNEL_HOG = f'''
import os as _os, time as _t
_go_r, _go_w = _os.pipe()
for _ in range(16):
    if _os.fork() == 0:
        try:
            _os.read(_go_r, 1)
            _block = b"x" * ({HOG_MB} << 20)
            _t.sleep(60)
        finally:
            _os._exit(0)
_held = b"x" * ({2 * HOG_MB} << 20)
_os.write(_go_w, b"1" * 16)
_t.sleep(30)
print("NOT STOPPED")
'''
# A kernel that exits with the code the proxy once used for "out of memory", after trying to
# write the proxy's report of how it ended (next to its folder, in a folder only root writes).
KERNEL_EXIT = """
import json as _json, os as _os
_here = _os.getcwd()
try:
    with open(_os.path.join(_here, "..", "..", _os.path.basename(_here) + ".ended.json"),
              "w") as _handle:
        _json.dump({"exit": 86, "oom_kills": 1}, _handle)
except OSError:
    pass
_os._exit(86)
"""
SLEEPER_PE = f"import time\ntime.sleep({SLEEP})\n" + ZEROS_PE
SLEEPER_FORWARD = f"import time\ntime.sleep({SLEEP})\n" + ZEROS_FORWARD


def _notebook_with_added_cell(code: str) -> bytes:
    """The solved notebook of lab 17.01 with one cell of the student's own at its start."""
    notebook = nbformat.reads(released_text(REPO_ROOT / "labs" / f"{SLUG}.ipynb"), as_version=4)
    notebook = fill_notebook(notebook, solved_cells())
    notebook.cells.insert(1, nbformat.v4.new_code_cell(code))
    return nbformat.writes(notebook).encode()


HONEST = Entry("z_honest", REFERENCE)
ATTACKERS = [
    Entry("a_ipc", stub_with(ZEROS_PE, ZEROS_FORWARD, module=IPC_ATTACK + DAEMON)),
    Entry("b_fork", stub_with(ZEROS_PE, ZEROS_FORWARD, module=FORK_ATTACK)),
    Entry("c_disk", stub_with(ZEROS_PE, ZEROS_FORWARD, module=DISK_ATTACK)),
    Entry("d_sleep", stub_with(SLEEPER_PE, SLEEPER_FORWARD,
                               module=f"import time\ntime.sleep({SLEEP})\n")),
    Entry("e_kernel_ipc", REFERENCE, extra={
        f"labs/{SLUG}.ipynb": _notebook_with_added_cell(IPC_ATTACK + DAEMON)}),
    Entry("f_kernel_hog", REFERENCE, extra={
        f"labs/{SLUG}.ipynb": _notebook_with_added_cell(KERNEL_HOG)}),
    Entry("g_kernel_exit", REFERENCE, extra={
        f"labs/{SLUG}.ipynb": _notebook_with_added_cell(KERNEL_EXIT)}),
]


def _ipc_keys() -> set[int]:
    keys = set()
    for table in ("shm", "msg", "sem"):
        with open(f"/proc/sysvipc/{table}", encoding="ascii") as handle:
            keys |= {int(line.split()[0]) for line in list(handle)[1:] if line.strip()}
    return {key for key in keys if IPC_KEY <= key < IPC_KEY + 16}


@pytest.fixture(scope="module")
def class_run(tmp_path_factory, capabilities):
    if not (capabilities.namespaces and capabilities.ipc_namespace and capabilities.cgroup
            and capabilities.scratch_quota):
        pytest.skip("this platform cannot isolate a submission at the kernel's level")
    if _ipc_keys():
        pytest.skip("SysV objects with the test's keys exist already")
    root = tmp_path_factory.mktemp("hostile-kernel")
    together = graded_class(root / "class", [*ATTACKERS, HONEST], LIMITS)
    alone = graded_class(root / "alone", [HONEST], LIMITS)
    return {"class": together, "alone": alone, "root": root}


def test_the_run_finishes_and_the_honest_row_is_what_it_is_alone(class_run):
    together = class_run["class"]
    assert together["failed"] == []
    assert sorted(together["records"]) == sorted(e.name for e in [*ATTACKERS, HONEST])
    assert together["rows"]["z_honest"] == class_run["alone"]["rows"]["z_honest"]
    assert module_score(together["records"]["z_honest"]) == 9


def test_ipc_objects_and_processes_die_with_their_item(class_run):
    records = class_run["class"]["records"]
    for name in ("a_ipc", "e_kernel_ipc"):
        assert "IPC FOUND" not in output_heads(records[name])
    assert "IPC MADE" in output_heads(records["a_ipc"])  # the attack did run
    assert _ipc_keys() == set()
    processes = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert MARKER not in processes
    assert module_score(records["a_ipc"]) <= 1  # what its code (zeros) earns


def test_one_memory_limit_covers_every_process_of_an_item(class_run):
    record = class_run["class"]["records"]["b_fork"]
    heads = output_heads(record)
    held = [int(line.split()[1]) for line in heads.splitlines() if line.startswith("HELD")]
    limit = LIMITS.memory_mb + 128  # the group's limit: memory_mb and the zygote's pages
    assert all(n * CHILD_MB < limit for n in held), heads
    assert module_score(record) <= 1


def test_a_kernel_over_its_memory_limit_is_said_to_be(class_run):
    record = class_run["class"]["records"]["f_kernel_hog"]
    assert "nb-memory" in findings(record) and "nb-kernel-died" not in findings(record)
    assert "NOT STOPPED" not in output_heads(record)
    assert module_score(record) == 9  # its modules are the reference's


def test_a_kernel_cannot_say_it_went_over_its_memory_limit(class_run):
    record = class_run["class"]["records"]["g_kernel_exit"]
    assert "nb-kernel-died" in findings(record) and "nb-memory" not in findings(record)
    assert module_score(record) == 9


def test_the_scratch_folder_cannot_fill_the_disk(class_run):
    heads = output_heads(class_run["class"]["records"]["c_disk"])
    written = [int(line.split()[-1]) for line in heads.splitlines()
               if line.startswith("WROTE MB")]
    assert written and max(written) < LIMITS.scratch_mb, heads


def test_a_sleeper_holds_the_worker_no_longer_than_its_budget(class_run):
    record = class_run["class"]["records"]["d_sleep"]
    assert "student-wall-cap" in findings(record)
    assert "student wall cap" in record["status"]
    assert record["instructor"]["budget"]["held_s"] <= LIMITS.student_wall_s + 1
    assert record["wall_s"] < LIMITS.student_wall_s + 30  # start-up and judging besides
    assert module_score(record) <= 1


def test_nothing_is_left_outside_the_output_folder(class_run):
    mine = [p for p in Path("/tmp").glob("mmg-run-*")
            if (p / "pid").is_file() and (p / "pid").read_text() == str(os.getpid())]
    assert mine == []
    with open("/proc/self/mountinfo", encoding="utf-8") as mounts:
        assert "mmg-run-" not in mounts.read()
    assert not list(class_run["root"].glob("class/subs/**/fill-*"))
