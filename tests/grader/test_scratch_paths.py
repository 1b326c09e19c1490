"""A notebook kernel talks to the grader through Unix sockets in its scratch folder, whose paths
have at most 107 bytes: a long temporary folder (a cluster's per-job ``TMPDIR``, pytest's own)
or a long student id must not make every notebook fail."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest
from conftest import TEST_LIMITS
from grader_corpus import REFERENCE, Entry, notebook_score, solved_cells, temporary_files_in

from grader.trusted import gradebook
from grader.trusted.grading import Options, grade
from grader.trusted.sandbox import (
    RUN_PREFIX,
    SOCKET_TAIL,
    UNIX_SOCKET_MAX,
    scratch_name,
    scratch_parent,
)
from minimodel.implementation import REPO_ROOT

LONG_ID = "maria.fernanda.gonzalez.de.la.fuente_" + "x" * 50  # 87 characters


@pytest.fixture
def temporary_folder():
    """Point ``tempfile`` at ``path`` for the test (the grader's workers inherit it)."""
    with ExitStack() as stack:
        def use(path: Path) -> Path:
            path.mkdir(parents=True, exist_ok=True)
            stack.enter_context(temporary_files_in(path))
            return path
        yield use


def test_a_long_temporary_folder_is_left_for_tmp(tmp_path, temporary_folder):
    short = temporary_folder(tmp_path / "t")
    if len(str(short)) + 17 + len(SOCKET_TAIL) <= UNIX_SOCKET_MAX:
        assert scratch_parent() == short
    deep = temporary_folder(tmp_path / ("d" * 60) / ("e" * 30))
    assert scratch_parent() == Path("/tmp") != deep
    assert len(f"/tmp/{RUN_PREFIX}xxxxxxxx{SOCKET_TAIL}") <= UNIX_SOCKET_MAX


def test_a_student_s_scratch_folder_has_one_length_whatever_the_id():
    names = {scratch_name(i) for i in ("a", LONG_ID, "ana@uni.es", "x" * 500)}
    assert len(names) == 4 and {len(n) for n in names} == {12}


def test_a_long_id_under_a_long_temporary_folder_runs_its_notebook(tmp_path, capabilities,
                                                                   temporary_folder):
    if not capabilities.namespaces:
        pytest.skip("this platform cannot isolate the sandbox (needs root and namespaces)")
    deep = temporary_folder(tmp_path / ("t" * 60) / "tmp")
    subs = tmp_path / "subs"
    subs.mkdir()
    Entry(LONG_ID, REFERENCE, cells=solved_cells()).build(subs)
    summary = grade(subs, tmp_path / "out", Options(workers=1, labs=["17.01"],
                                                    limits=TEST_LIMITS, progress=False),
                    stream=io.StringIO())
    (record,) = gradebook.load_records(tmp_path / "out")
    assert summary["failed"] == [] and record["student_id"] == LONG_ID
    notebook = record["instructor"]["notebooks"]["17.01"]
    assert notebook["status"] == "finished", notebook.get("detail")
    assert notebook_score(record) == 9
    assert os.listdir(deep) == []  # the scratch root went to /tmp, and is gone


def test_what_the_servers_preload_leaves_no_temporary_folder_chosen():
    """The probe and kernel servers import transformers once for every fork; its import asks
    tempfile for a folder, which a sandboxed fork must not inherit (it finds its own)."""
    script = ("import sys, tempfile\n"
              f"sys.path.insert(0, {str(REPO_ROOT / 'grader' / 'child')!r})\n"
              "import warmup\n"
              "warmup.load_transformers()\n"
              "import transformers\n"
              "assert tempfile.tempdir is None, tempfile.tempdir\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
