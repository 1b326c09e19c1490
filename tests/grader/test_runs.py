"""Whole runs through the command line: resume after ``kill -9``, ``--force``, shards and merge,
manual grades from formgrader, exit status."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from grader_corpus import REFERENCE, ZEROS_FORWARD, ZEROS_PE, Entry, shared_dir, stub_with

from grader.trusted import gradebook
from grader.trusted.record import StudentRecord

FAST = ["--timeout", "3", "--no-progress", "--workers", "1"]


def submissions(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    entries = [
        Entry("ana", REFERENCE),
        Entry("bea", stub_with(ZEROS_PE, ZEROS_FORWARD)),
        Entry("carlos", stub_with(None, None)),
        Entry("dora", REFERENCE.replace("offset : offset + T", "0 : T")),
        Entry("eva", REFERENCE, zip=True),
    ]
    for entry in entries:
        entry.build(folder)
    return folder


def grader(*args, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "grader.cli", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            **popen)


def finish(process: subprocess.Popen) -> str:
    output, _ = process.communicate(timeout=600)
    assert process.returncode == 0, output
    return output


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    """One uninterrupted run, shared by every xdist worker of this test run."""
    root = shared_dir(tmp_path_factory) / "runs"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "output.txt").exists():
            subs = submissions(root / "subs")
            output = finish(grader("grade", subs, "--out", root / "full", *FAST))
            (root / "output.txt").write_text(output)
    return (root, root / "subs", (root / "full" / "grades.csv").read_text(),
            (root / "output.txt").read_text())


def test_a_run_completes_with_exit_status_zero(full_run):
    root, _, grades, output = full_run
    assert "run completed: 5 graded" in output
    header, *lines = grades.splitlines()
    rows = {line.split(",")[0]: line for line in lines}
    assert set(rows) == {"max_points", "ana", "bea", "carlos", "dora", "eva"}
    ana = dict(zip(header.split(","), rows["ana"].split(","), strict=True))
    assert ana["auto"] == ana["total"] == "9"  # module items only: no notebook submitted
    assert rows["eva"] == rows["ana"].replace("ana,", "eva,", 1)
    assert (root / "full" / "items.csv").exists() and (root / "full" / "grading.log").exists()
    for student in ("ana", "bea"):
        folder = root / "full" / "feedback" / student
        assert {p.name for p in folder.iterdir()} == {
            "feedback.es.md", "feedback.en.md", "feedback.es.html", "feedback.en.html"}


def test_records_are_student_records_key_for_key(full_run):
    """``StudentRecord`` is the shape of the records on disk: read back and written again, each
    is the same JSON text."""
    root = full_run[0]
    for path in sorted((root / "full" / "records").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        again = StudentRecord.from_json(data).to_json()
        assert again == data
        assert json.dumps(again, indent=1, ensure_ascii=False, sort_keys=True) + "\n" == \
            path.read_text(encoding="utf-8")


def test_kill_9_then_rerun_gives_the_same_grades(full_run, tmp_path):
    _, subs, grades, _ = full_run
    out = tmp_path / "out"
    process = grader("grade", subs, "--out", out, *FAST)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not list((out / "records").glob("*.json")):
        time.sleep(0.2)
    # this run's scratch folder: its zygotes and sandboxes run from there (other tests may be
    # grading at the same time, with zygotes of their own)
    scratch = [p.parent.name for p in Path(tempfile.gettempdir()).glob("mmg-run-*/pid")
               if p.read_text().strip() == str(process.pid)]
    os.kill(process.pid, signal.SIGKILL)  # no chance to clean up
    process.communicate(timeout=60)
    done_before = len(list((out / "records").glob("*.json")))
    assert 1 <= done_before < 5
    time.sleep(1.5)  # parent-death signals propagate
    leftovers = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert len(scratch) == 1
    assert str(out) not in leftovers and scratch[0] not in leftovers  # nothing of it survives
    output = finish(grader("grade", subs, "--out", out, *FAST))
    assert f"{done_before} already graded" in output
    assert (out / "grades.csv").read_text() == grades
    again = finish(grader("grade", subs, "--out", out, *FAST))
    assert "5 already graded, grading 0" in again


def test_force_regrades_finished_students(full_run, tmp_path):
    root, subs, _, _ = full_run
    one = tmp_path / "subs"
    one.mkdir()
    shutil.copytree(subs / "ana", one / "ana")
    out = tmp_path / "out"
    (out / "records").mkdir(parents=True)
    shutil.copy2(root / "full" / "records" / "ana.json", out / "records" / "ana.json")
    assert "1 already graded, grading 0" in finish(grader("grade", one, "--out", out, *FAST))
    before = gradebook.load_record(out, "ana")["graded_at"]
    time.sleep(1.1)
    forced = finish(grader("grade", one, "--out", out, *FAST, "--force"))
    assert "0 already graded, grading 1" in forced
    after = gradebook.load_record(out, "ana")
    assert after["graded_at"] != before and after["total"] == 9


def test_a_changed_submission_is_regraded(full_run, tmp_path):
    root, subs, _, _ = full_run
    out = tmp_path / "out"
    shutil.copytree(root / "full", out)
    (out / ".lock").unlink(missing_ok=True)
    changed = tmp_path / "subs"
    shutil.copytree(subs, changed)
    module = changed / "bea" / "src/minimodel/positional/sinusoidal.py"
    module.write_text(REFERENCE)
    output = finish(grader("grade", changed, "--out", out, *FAST))
    assert "4 already graded, grading 1" in output
    assert (out / "grades.csv").read_text().count("\nbea,") == 1  # replaced, not duplicated
    assert gradebook.load_record(out, "bea")["total"] == 9


def test_shards_then_merge_equal_one_run(full_run, tmp_path):
    _, subs, grades, _ = full_run
    first = grader("grade", subs, "--out", tmp_path / "s0", "--shard", "0/2", *FAST)
    second = grader("grade", subs, "--out", tmp_path / "s1", "--shard", "1/2", *FAST)
    assert "(shard 0/2)" in finish(first) and "(shard 1/2)" in finish(second)
    finish(grader("merge", tmp_path / "s0", tmp_path / "s1", "--out", tmp_path / "all"))
    assert (tmp_path / "all" / "grades.csv").read_text() == grades


def test_usage_errors_exit_2(tmp_path):
    process = grader("grade", tmp_path / "nowhere", "--out", tmp_path / "out")
    process.communicate(timeout=120)
    assert process.returncode == 2
    (tmp_path / "subs").mkdir()
    for wrong, said in ((["--export", "canvas"], "--export needs --roster"),
                        (["--export", "canvas", "--roster", tmp_path / "none.csv"],
                         "cannot read the roster"),
                        (["--timeout", "0"], "must be above 0"),
                        (["--memory", "-5"], "must be above 0")):
        process = grader("grade", tmp_path / "subs", "--out", tmp_path / "out", *wrong)
        output, _ = process.communicate(timeout=120)
        assert process.returncode == 2 and said in output, output
    assert not (tmp_path / "out").exists()  # refused before a single student is graded
    from grader.trusted.sandbox import cuda_available

    if not cuda_available():
        process = grader("grade", tmp_path / "subs", "--out", tmp_path / "out2", "--device",
                         "cuda")
        output, _ = process.communicate(timeout=120)
        assert process.returncode == 2 and "no GPU" in output


def test_one_repository_for_a_class_and_a_release_into_a_full_folder_are_refused(tmp_path):
    one = tmp_path / "ana"
    (one / "src" / "minimodel" / "positional").mkdir(parents=True)
    (tmp_path / "full" / "notes.txt").parent.mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    for command, said in (
            (["grade", one, "--out", tmp_path / "out"], "looks like one student's submission"),
            (["release", tmp_path / "full"], "is not empty")):
        process = grader(*command)
        output, _ = process.communicate(timeout=300)
        assert process.returncode == 2 and said in output and "Traceback" not in output, output
    assert not (tmp_path / "out").exists()
    assert (tmp_path / "full" / "notes.txt").read_text() == "mine"


def test_grading_other_labs_into_a_folder_replaces_its_grades_only_with_force(tmp_path):
    (tmp_path / "subs").mkdir()
    out = ["--out", tmp_path / "out", *FAST]
    finish(grader("grade", tmp_path / "subs", *out, "--lab", "17.01"))
    process = grader("grade", tmp_path / "subs", *out, "--lab", "17.04")
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 2 and "holds the grades of labs 17.01" in output, output
    assert gradebook.load_run(tmp_path / "out")["settings"]["labs"] == ["17.01"]
    finish(grader("grade", tmp_path / "subs", *out, "--lab", "17.04", "--force"))
    assert gradebook.load_run(tmp_path / "out")["settings"]["labs"] == ["17.04"]


def test_an_output_folder_among_the_submissions_is_not_a_student(tmp_path):
    (tmp_path / "subs").mkdir()
    for _ in range(2):  # the second run finds OUT there, full
        finish(grader("grade", tmp_path / "subs", "--out", tmp_path / "subs" / "results", *FAST,
                      "--lab", "17.01"))
        assert gradebook.load_run(tmp_path / "subs" / "results")["students"] == []
    process = grader("grade", tmp_path / "subs", "--out", tmp_path / "subs", *FAST)
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 2 and "cannot be the submissions folder" in output, output


def test_a_lab_with_no_hidden_checks_is_refused_before_anything_is_written(tmp_path):
    (tmp_path / "subs").mkdir()
    for command in (["grade", tmp_path / "subs", "--out", tmp_path / "out", "--lab", "17.30"],
                    ["references", "--check", "--lab", "17.03", "--lab", "17.30"],
                    ["nbgrader-course", tmp_path / "course", "--lab", "17.30"]):
        process = grader(*command)
        output, _ = process.communicate(timeout=120)
        assert process.returncode == 2 and "[es] No hay un laboratorio '17.30'" in output, output
        assert "[en] There is no lab '17.30'" in output and "17.00, 17.01" in output
    assert not (tmp_path / "out").exists() and not (tmp_path / "course").exists()


def test_labs_are_chosen_by_id_or_slug_and_a_run_without_checks_is_refused(monkeypatch):
    import grader.hidden

    assert list(grader.hidden.chosen(["17_03_rope", "17.01"])) == ["17.01", "17.03"]
    assert len(grader.hidden.chosen()) == len(grader.hidden.registry()) >= 12
    monkeypatch.setattr(grader.hidden, "registry", dict)  # minimodel from a student's repository
    with pytest.raises(grader.hidden.LabChoiceError, match=r"(?s)No hay comprobaciones.*"
                       r"There are no hidden checks in .*solutions/labs"):
        grader.hidden.chosen(["17.01"])


@pytest.mark.filterwarnings("ignore:.*not in session")  # nbgrader's own set-up of a submission
def test_manual_grades_from_formgrader_are_merged(full_run, tmp_path, monkeypatch):
    from nbgrader.api import Gradebook

    # nbgrader runs `alembic` from this environment's scripts folder
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    root, _, _, _ = full_run
    out = tmp_path / "out"
    shutil.copytree(root / "full", out)
    db = tmp_path / "gradebook.db"
    slug = "17_01_sinusoidal"
    with Gradebook(f"sqlite:///{db}") as book:
        book.add_assignment(slug)
        book.update_or_create_notebook(slug, slug)
        for cell, points in (("q1-answer", 2), ("q2-answer", 1)):
            book.update_or_create_grade_cell(cell, slug, slug, max_score=points,
                                             cell_type="markdown")
            book.update_or_create_solution_cell(cell, slug, slug)
        book.add_student("ana")
        book.add_submission(slug, "ana")
        grade = book.find_grade("q1-answer", slug, slug, "ana")
        grade.manual_score = 1.5
        book.db.commit()
    finish(grader("merge", "--out", out, "--manual", db))
    rows = {line.split(",")[0]: line.split(",")
            for line in (out / "grades.csv").read_text().splitlines()}
    header = rows["student_id"]
    ana = dict(zip(header, rows["ana"], strict=True))
    assert ana["17.01/nb/q1-answer"] == "1.50" and ana["17.01/nb/q2-answer"] == ""
    assert ana["total"] == "10.50"
    feedback = (out / "feedback" / "ana" / "feedback.en.md").read_text()
    assert "graded by hand" in feedback


def test_every_limit_has_a_flag_and_reaches_the_run():
    import argparse
    import dataclasses

    from grader.cli import LIMIT_FLAGS, STUDENT_FLAGS, _add_limits, _limits
    from grader.trusted.sandbox import Limits

    flags = {name: flag for flag, name, *_ in (*LIMIT_FLAGS, *STUDENT_FLAGS)}
    assert set(flags) == {f.name for f in dataclasses.fields(Limits)}
    parser = argparse.ArgumentParser()
    _add_limits(parser)
    assert _limits(parser.parse_args([])) == Limits(cpu_s=int(Limits().wall_s) + 1)
    changed = {name: getattr(Limits(), name) + 1 for name in flags}
    argv = [str(part) for name, value in changed.items() for part in (flags[name], value)]
    assert _limits(parser.parse_args(argv)) == Limits(**changed)
