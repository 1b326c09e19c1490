"""Fixtures of the grader's tests: the corpus is graded once per test run, shared by workers.

Grading the corpus takes a while (dozens of submissions, sandboxes, notebook kernels), so the
first pytest-xdist worker that needs it grades it under a file lock, and the others read the same
results. The grader itself runs with 2 workers and short limits.
"""

from __future__ import annotations

import fcntl
import io
import json
from contextlib import redirect_stderr
from pathlib import Path

import pytest
from grader_corpus import shared_dir

from grader.trusted import gradebook
from grader.trusted.grading import Options, grade
from grader.trusted.sandbox import Limits, probe_capabilities

TEST_LIMITS = Limits(wall_s=2.5, cpu_s=3, memory_mb=1024, cell_timeout_s=40,
                     notebook_wall_s=120)


def graded_once(tmp_path_factory, name: str, build) -> dict:
    """Grade the submissions ``build(submissions, out)`` writes, once per run; return results."""
    root = shared_dir(tmp_path_factory) / name
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = root / "done.json"
        if not done.exists():
            submissions, out = root / "submissions", root / "out"
            submissions.mkdir(exist_ok=True)
            entries = build(submissions, out)
            log = io.StringIO()
            with redirect_stderr(log):
                summary = grade(submissions, out, Options(workers=2, limits=TEST_LIMITS,
                                                          progress=False), stream=log)
            done.write_text(json.dumps({
                "entries": {e.name: {"score": e.score, "same_as": e.same_as} for e in entries},
                "failed": summary["failed"], "log": log.getvalue()}))
    info = json.loads(done.read_text())
    records = {r["student_id"]: r for r in gradebook.load_records(root / "out")}
    return {"root": root, "out": root / "out", "records": records, **info}


@pytest.fixture(scope="session")
def released(tmp_path_factory) -> Path:
    """The student repository, released once per test run from the last commit and shared by
    the workers like the corpus (read-only: copy it to change it)."""
    from grader.build.release import release

    shared = shared_dir(tmp_path_factory)
    shared.mkdir(parents=True, exist_ok=True)
    out, done = shared / "student-repo", shared / "student-repo.done"
    with open(shared / ".student-repo.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            release(out, force=True)
            done.touch()
    return out


@pytest.fixture(scope="session")
def capabilities():
    return probe_capabilities()


@pytest.fixture(scope="session")
def corpus_run(tmp_path_factory):
    from grader_corpus import corpus

    def build(submissions: Path, out: Path):
        entries = corpus(out)
        for entry in entries:
            entry.build(submissions)
        return entries

    return graded_once(tmp_path_factory, "corpus", build)

