"""The corpus: honest, buggy and hostile submissions graded in one run, each with its score.

Module items of lab 17.01 are worth 9 points. A cheat is graded next to the same code without
the cheat and must score exactly the same; an attack on the grader must fail and leave nothing
behind (no process, no file written outside the sandbox, no data read from the course).
"""

from __future__ import annotations

import ast
import subprocess

import pytest
from grader_corpus import MARKER, findings, module_score, notebook_score, output_heads

from grader.trusted import gradebook
from grader.trusted.sandbox import scratch_name
from minimodel.implementation import REPO_ROOT

CORPUS_NAMES = [
    "reference", "noisy", "zeros", "hardcoded", "monkeypatch", "liar", "infinite_loop",
    "sigterm_ignored", "memory_hog", "exit_at_import", "os_exit_at_import", "segfault",
    "steal_solutions", "steal_other_student", "write_gradebook", "background", "output_flood",
    "network", "probe", "syntax_error", "not_utf8", "huge_file", "zip_slip", "zip_symlink",
    "symlink_out", "nb_reference", "nb_noisy", "nb_stub", "nb_transposed", "nb_locked_edit",
    "nb_kernel_exit",
]


@pytest.fixture(scope="module")
def run(corpus_run, capabilities):
    if not capabilities.namespaces:
        pytest.skip("this platform cannot isolate the sandbox (needs root and namespaces)")
    return corpus_run


def test_the_whole_corpus_was_graded(run):
    assert run["failed"] == []
    assert sorted(run["records"]) == sorted(CORPUS_NAMES)
    assert "run completed" in run["log"]


@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_expected_module_score(run, name):
    expected = run["entries"][name]
    record = run["records"][name]
    if expected["same_as"]:
        assert module_score(record) == module_score(run["records"][expected["same_as"]])
    else:
        assert module_score(record) == expected["score"], findings(record)


def test_reference_gets_full_marks_and_gpu_is_not_passed(run):
    record = run["records"]["nb_reference"]
    assert module_score(record) == 9
    assert notebook_score(record) == 9  # auto-graded cells; written answers by hand
    lab = record["labs"]["17.01"]
    assert lab["auto"] == lab["auto_max"] == 18 and lab["max"] == 21  # 3 points by hand
    assert record["gpu"] == "not run"


def test_noise_and_warnings_cost_nothing(run):
    records = run["records"]
    assert module_score(records["noisy"]) == module_score(records["reference"]) == 9
    assert notebook_score(records["nb_noisy"]) == notebook_score(records["nb_reference"])
    assert "output-flood" in findings(records["noisy"])  # said as a note, not a penalty


@pytest.mark.parametrize("name, code", [
    ("infinite_loop", "out-of-time"), ("infinite_loop", "out-of-time-case"),
    ("sigterm_ignored", "timeout"), ("output_flood", "output-flood"),
    ("exit_at_import", "exit-at-import"), ("os_exit_at_import", "exited"),
    ("segfault", "crashed"), ("syntax_error", "syntax-error"), ("not_utf8", "not-utf8"),
    ("huge_file", "too-large"), ("zip_slip", "zip-slip"), ("zip_symlink", "symlink"),
    ("symlink_out", "symlink"), ("nb_kernel_exit", "nb-kernel-died"),
    ("nb_locked_edit", "nb-locked-restored"), ("liar", "kind"),
])
def test_each_problem_is_explained(run, name, code):
    assert code in findings(run["records"][name])


def test_memory_hog_is_stopped(run):
    record = run["records"]["memory_hog"]
    text = str(record["labs"]["17.01"]["items"])
    assert "MemoryError" in text or "memory" in findings(record)


def test_syntax_error_is_reported_once_at_the_top_with_its_line(run):
    messages = run["records"]["syntax_error"]["messages"]
    syntax = [m for m in messages if m["code"] == "syntax-error"]
    assert len(syntax) == 1
    assert "línea" in syntax[0]["es"] and "line" in syntax[0]["en"]


def test_cheats_gain_nothing(run):
    records = run["records"]
    assert module_score(records["monkeypatch"]) == module_score(records["zeros"]) == 1
    assert module_score(records["liar"]) == 0
    assert notebook_score(records["nb_locked_edit"]) == notebook_score(records["nb_transposed"])
    assert notebook_score(records["nb_transposed"]) < notebook_score(records["nb_reference"])
    assert "transposed" in findings(records["nb_transposed"])


def test_solutions_references_and_other_students_are_out_of_reach(run):
    for name in ("steal_solutions", "steal_other_student"):
        heads = output_heads(run["records"][name])
        assert "STOLEN" not in heads
        assert module_score(run["records"][name]) == 0
    assert "REFUSED" in output_heads(run["records"]["steal_solutions"])


def test_the_gradebook_cannot_be_written(run):
    out = run["out"]
    assert "WROTE" not in output_heads(run["records"]["write_gradebook"])
    assert not (out / "records" / "zzz-forged.json").exists()
    for path in [out / "grades.csv", *out.glob("records/*.json"), *out.glob("feedback/*/*")]:
        assert "HACKED" not in path.read_text(encoding="utf-8")


def test_the_network_is_off(run):
    heads = output_heads(run["records"]["network"])
    assert "NO NETWORK" in heads and "CONNECTED" not in heads


def test_the_sandbox_view(run):
    heads = output_heads(run["records"]["probe"])
    assert "UID 0" not in heads
    assert "REPO ['.venv']" in heads  # the repository is covered; only Python shows through
    pids = [line for line in heads.splitlines() if line.startswith("PIDS")]
    assert pids and all(line == "PIDS [1]" for line in pids)  # alone in its PID namespace
    tmp = [line for line in heads.splitlines() if line.startswith("TMP")]
    # Only this item's scratch folder shows in /tmp, plus the way to the course's Python
    # environment when the course itself lives under /tmp.
    repo = REPO_ROOT.resolve()
    allowed = {repo.relative_to("/tmp").parts[0]} if repo.is_relative_to("/tmp") else set()
    for line in tmp:
        names = ast.literal_eval(line.removeprefix("TMP "))
        scratch = [name for name in names if name.startswith("mmg-run-")]
        assert len(scratch) == 1 and set(names) - set(scratch) <= allowed, line
    assert tmp
    # no other student's scratch folder is visible
    assert f"SCRATCH [{scratch_name('probe')!r}]" in heads


def test_nothing_outlives_grading(run):
    processes = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert MARKER not in processes
    assert "zygote.py" not in processes or run["root"].name not in processes


def test_zip_slip_wrote_nothing_outside(run):
    root = run["root"]
    assert not list(root.parent.rglob("escaped_by_zip_slip.txt"))
    assert not list(root.rglob("absolute_by_zip_slip.txt"))


def test_notebook_kernel_death_costs_only_what_came_after(run):
    items = {v["key"]: v for v in run["records"]["nb_kernel_exit"]["labs"]["17.01"]["items"]}
    assert items["nb/test-table"]["score"] == items["nb/test-table"]["points"]
    assert items["nb/test-shift"]["score"] == items["nb/test-shift"]["points"]
    assert items["nb/test-dots"]["score"] == 0
    assert items["nb/test-module"]["score"] == 0


def test_untouched_notebook_scores_only_what_the_module_gives(run):
    items = {v["key"]: v["score"] for v in run["records"]["nb_stub"]["labs"]["17.01"]["items"]}
    assert items["nb/test-shift"] == items["nb/test-dots"] == 0  # cells the student writes
    assert items["nb/test-table"] == 2 and items["nb/test-module"] == 2  # the module's work
    assert "nb-cell-error" in findings(run["records"]["nb_stub"])


def test_feedback_never_shows_hidden_tests(run):
    hidden_expressions = ["shift_matrix(9, 10, base=30.0)", "__minimodel_record",
                          "BEGIN HIDDEN TESTS", "sinusoidal_pe(6, 10, base=300.0)", "lab_17_01"]
    for path in run["out"].glob("feedback/*/*"):
        text = path.read_text(encoding="utf-8")
        for expression in hidden_expressions:
            assert expression not in text, (path, expression)


def test_grades_csv(run):
    lines = (run["out"] / "grades.csv").read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    assert header[0] == "student_id" and header[-7:] == [
        "auto", "manual", "total", "manual_pending", "gpu_checks", "device", "status"]
    assert "17.01" in header and "17.01/pe.values" in header and "17.01/nb/q1-answer" in header
    assert len(lines) == 2 + len(CORPUS_NAMES)  # the header, the maxima, one row each
    row = dict(zip(header, next(line for line in lines if line.startswith("nb_reference,"))
                   .split(","), strict=True))
    assert row["total"] == "18" and row["17.01/nb/q1-answer"] == ""
    maxima = dict(zip(header, lines[1].split(","), strict=True))
    assert maxima["student_id"] == "max_points" and maxima["17.01"] == "21"
    columns = gradebook.columns()  # every lab: the corpus is graded on all of them
    auto = sum(c["points"] for c in columns if c["kind"] == "auto")
    manual = sum(c["points"] for c in columns if c["kind"] == "manual")
    assert (float(maxima["auto"]), float(maxima["manual"]), float(maxima["total"])) == \
        (auto, manual, auto + manual)
    assert manual > 0 and maxima["17.01/nb/q1-answer"] == "2"
    assert int(row["manual_pending"]) == sum(c["kind"] == "manual" for c in columns)
    assert row["status"] == "awaiting manual grading"
