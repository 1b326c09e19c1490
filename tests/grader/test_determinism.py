"""The same grade every run: a resource-heavy submission graded with 2 workers on a quiet machine,
and with 1 worker under a background CPU load, killed with ``kill -9`` and rerun, gives
byte-identical rows of ``grades.csv``; so do a submission that loops forever and one that reaches
the cap per student (2 workers quiet, 1 worker under load).

The heavy submission's ``SinusoidalPositionalEncoding.forward`` prints a lot, allocates and
touches hundreds of megabytes and burns CPU on every call, and ``sinusoidal_pe`` asks for 2 GiB
on long tables (over the probe groups' memory limit, within the notebook kernel's). Its probe
groups use about half of their wall-clock budget on a quiet core, so a busy machine pushes them
over it: the grade stays the same because the CPU time decides and a group stopped by the wall
clock is run again with more time before a time-out is scored.

``loop``'s ``forward`` runs out of its time on its first case (1.4 s of CPU: ``--timeout 1``
gives a CPU limit of 2 s per probe group), so it is not run again, in that group or the three
later runs that call it; it is named once in the feedback, and that group is charged its CPU limit
(``grader.trusted.out_of_time``), whatever the load. ``capped`` loops in C, where no Python code
runs that could stop it: only the probe group's CPU limit does, in all five runs, and each is
charged that limit, whatever the load let it use before, so the cap per student
(``STUDENT_CPU``) cuts at the same item every run: its fourth run starts with 1 s left, is stopped
by the wall clock with no retry and charged that 1 s, and its fifth is not run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from grader_corpus import REFERENCE, REFERENCE_FORWARD, REFERENCE_PE, stub_with

from grader.trusted import nbexec

SLUG = "17_01_sinusoidal"
HEAVY = REFERENCE.replace(
    "    return pe\n",
    "    if T >= 64:\n        _big = np.ones(2**28)  # 2 GiB\n        _big[::4096] = 2.0\n"
    "    return pe\n", 1) + '''

_forward = SinusoidalPositionalEncoding.forward


def _heavy_forward(self, x, offset=0):
    import time as _time
    print("ruido " * 40_000)
    _block = np.ones(20_000_000)  # 160 MB, touched
    _block[::512] += 1.0
    _start = _time.process_time()
    while _time.process_time() - _start < 0.1:
        pass
    return _forward(self, x, offset)


SinusoidalPositionalEncoding.forward = _heavy_forward
'''
LIMITS = ["--timeout", "1", "--memory", "1024", "--cell-timeout", "40", "--no-progress",
          "--lab", "17.01"]


def write_class(folder: Path) -> Path:
    notebook = nbformat.writes(nbexec.source_notebook(SLUG)).encode()
    for name, module in (("a_reference", REFERENCE), ("heavy", HEAVY)):
        root = folder / name
        (root / "src/minimodel/positional").mkdir(parents=True)
        (root / "src/minimodel/positional/sinusoidal.py").write_text(module, encoding="utf-8")
        if name == "heavy":  # the reference's notebook would only make the test longer
            (root / "labs").mkdir()
            (root / f"labs/{SLUG}.ipynb").write_bytes(notebook)
    return folder


SPIN = "while True:\n    pass\n"
SPIN_IN_C = "import collections, itertools\ncollections.deque(itertools.repeat(None), maxlen=0)\n"
STUDENT_CPU = 7
LOOPS = {"a_reference": REFERENCE,
         "capped": stub_with(SPIN_IN_C, "T = x.shape[-2]\n" + SPIN_IN_C + REFERENCE_FORWARD),
         "loop": stub_with(REFERENCE_PE, "T = x.shape[-2]\n" + SPIN + REFERENCE_FORWARD)}


def grader(subs: Path, out: Path, workers: int, *more: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "grader.cli", "grade", str(subs), "--out", str(out),
         "--workers", str(workers), *LIMITS, *more],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def rows(out: Path, names: tuple[str, ...] = ("a_reference", "heavy")) -> list[str]:
    return [r for r in (out / "grades.csv").read_text().splitlines()[1:]
            if r.startswith(tuple(f"{name}," for name in names))]


def finish(process: subprocess.Popen) -> str:
    output, _ = process.communicate(timeout=900)
    assert process.returncode == 0, output
    return output


@pytest.fixture
def busy_cores():
    """Two processes that burn CPU while the grader runs (a machine shared with others)."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(max(2, len(os.sched_getaffinity(0))))]
    yield
    for process in burners:
        process.kill()
        process.wait()


def test_heavy_submission_same_rows_every_run(tmp_path, request):
    subs = write_class(tmp_path / "subs")
    finish(grader(subs, tmp_path / "two", 2))
    expected = rows(tmp_path / "two")
    assert len(expected) == 2
    reference, heavy = (row.split(",") for row in expected)
    assert heavy[0] == "heavy" and float(heavy[1]) < float(reference[1])  # 2 GiB: too much
    assert float(heavy[7]) > 0  # its notebook ran, heavy as it is

    request.getfixturevalue("busy_cores")  # under load, at 1 worker, killed then rerun
    killed = grader(subs, tmp_path / "killed", 1)
    records = tmp_path / "killed" / "records"
    deadline = time.monotonic() + 600
    while not list(records.glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.communicate()
    assert [p.name for p in records.glob("*.json")] == ["a_reference.json"]
    output = finish(grader(subs, tmp_path / "killed", 1))
    assert "1 already graded" in output
    assert rows(tmp_path / "killed") == expected


def test_loops_and_the_cap_per_student_same_rows_every_run(tmp_path, request):
    subs = tmp_path / "subs"
    for name, module in LOOPS.items():
        (subs / name / "src/minimodel/positional").mkdir(parents=True)
        (subs / name / "src/minimodel/positional/sinusoidal.py").write_text(module)
    cap = ("--student-cpu", str(STUDENT_CPU))
    finish(grader(subs, tmp_path / "two", 2, *cap))
    expected = rows(tmp_path / "two", tuple(LOOPS))
    _, capped, loop = (row.split(",") for row in expected)
    assert capped[-1] == "problems: student cpu cap" and "cap" not in loop[-1]
    record = json.loads((tmp_path / "two/records/capped.json").read_text())
    budget = record["instructor"]["budget"]
    assert budget["used_s"] == STUDENT_CPU and budget["skipped"] == ["17.01/module_device/meta"]
    record = json.loads((tmp_path / "two/records/loop.json").read_text())
    assert [m["code"] for m in record["messages"]] == ["out-of-time"]
    assert record["messages"][0]["en"].startswith("SinusoidalPositionalEncoding.forward ")
    runs = record["instructor"]["groups"]
    assert runs["17.01/module/cpu"]["cpu_s"] < 2 and runs["17.01/module_device/meta"]["cpu_s"] < 1
    request.getfixturevalue("busy_cores")
    finish(grader(subs, tmp_path / "loaded", 1, *cap))  # under load, at 1 worker
    assert rows(tmp_path / "loaded", tuple(LOOPS)) == expected


def test_workers_that_fit_the_memory_limits():
    from grader.trusted.runs import workers_that_fit
    from grader.trusted.sandbox import Limits

    assert workers_that_fit(Limits(kernel_memory_mb=10**9)) == 1
    many = workers_that_fit(Limits(kernel_memory_mb=1))
    assert many > workers_that_fit(Limits(kernel_memory_mb=4096)) >= 1
