"""A submission that takes its values from the course or a library instead of computing them
gets nothing, and the self-check says so first, in the same words.

The self-check ships with the student's repository and computes, for instance, lab 17.01's
sinusoidal table for any input (``minimodel.selfcheck.lab_17_01.formula``). A ``sinusoidal_pe``
that only calls it would pass every hidden case; the grader reads each module before running it
(``grader.trusted.borrowed``, with the course's rule ``minimodel.own_work``) and the sandbox
refuses the import at run time (``probe_runner.BorrowedImportBlocker``), so such a submission
scores like the stub and is told why in both languages, while an honest one keeps its full marks.
Lab 17.03's ``apply_rotary`` handing its job to Hugging Face's ``apply_rotary_pos_emb`` is
refused alike, by ``make check`` and the grader with the same finding, also when the reading
cannot see it and only the watch on what the student's code calls does.
"""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import pytest
from grader_corpus import (
    REFERENCE,
    REFERENCE_FORWARD,
    REFERENCE_PE,
    Entry,
    module_score,
    solved_cells,
    stub_with,
)

from grader.child import probe_runner
from grader.trusted.borrowed import borrowed_modules
from grader.trusted.grading import Options, grade
from grader.trusted.redact import Sources
from grader.trusted.sandbox import Limits, Scratch
from minimodel.course import find_lab
from minimodel.implementation import REFERENCE_DIR, REPO_ROOT
from minimodel.own_work import CODE, imported_modules
from minimodel.selfcheck.runner import run_checks

BORROWED_PE = """\
from minimodel.selfcheck import lab_17_01
return lab_17_01.formula(T, d, base)
"""
BY_PATH_PE = """\
import importlib.util, os, minimodel
path = os.path.join(os.path.dirname(minimodel.__file__), "self" + "check", "lab_17_01.py")
spec = importlib.util.spec_from_file_location("oracle", path)
oracle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oracle)
return oracle.formula(T, d, base)
"""
HIDDEN_PE = """\
import importlib
name = "".join(["minimo", "del.", "self", "check", ".lab_17_01"])
return importlib.import_module(name).formula(T, d, base)
"""
LIMITS = Limits(wall_s=10, cpu_s=10, memory_mb=1024, cell_timeout_s=40, notebook_wall_s=120)


@pytest.mark.parametrize("source", [
    "import minimodel.selfcheck.lab_17_01 as x",
    "import minimodel.selfcheck",
    "from minimodel.selfcheck import lab_17_01",
    "from minimodel.selfcheck.lab_17_01 import formula",
    "from minimodel import selfcheck",
    "from .. import selfcheck",
    "from ..selfcheck.lab_17_01 import formula",
    "import importlib\nf = importlib.import_module('minimodel.selfcheck.lab_17_01').formula",
    "f = __import__('minimodel.selfcheck.lab_17_01', fromlist=['formula']).formula",
    "def f():\n    from minimodel.selfcheck import lab_17_01\n    return lab_17_01",
])
def test_every_form_of_the_import_is_seen(source):
    assert borrowed_modules({"sinusoidal": source.encode()})["sinusoidal"].code == \
        "borrowed-answer"


@pytest.mark.parametrize("source", [
    "import numpy as np\nimport torch\nfrom minimodel.validation import require_int",
    "from . import rope\n'''Checked with minimodel.selfcheck: make check LAB=17.01.'''",
    "def broken(:\n",  # the run reports the syntax error
])
def test_honest_imports_are_not_refused(source):
    assert borrowed_modules({"sinusoidal": source.encode()}) == {}


def test_a_module_importing_a_borrowing_module_is_refused_too():
    files = {"rope": b"from minimodel.selfcheck import lab_17_03\n",
             "two_d": b"from minimodel.positional.rope import rope_frequencies\n",
             "alibi": b"import torch\n"}
    found = borrowed_modules(files)
    assert sorted(found) == ["rope", "two_d"]
    assert "rope.py" in found["two_d"].es and "rope.py" in found["two_d"].en
    assert "minimodel.selfcheck" in found["two_d"].en
    assert imported_modules(files["two_d"]) == {"rope"}


def test_the_sandbox_blocks_the_import_but_not_the_given_code():
    """In a fresh interpreter with the blocker installed (as in the sandbox): the grader's child
    code still imports, every form of the import from a student's code fails; given code
    (``minimodel.compare``) still reads the self-check's list of files, and after it a
    self-check's lab is still out of reach."""
    script = textwrap.dedent(f"""
        import importlib, sys
        sys.path.insert(0, {str(REPO_ROOT / "grader" / "child")!r})
        import probe_runner
        probe_runner.block_borrowed_imports()
        import isolation, kernel_jail, recorder, zygote  # the grader's own child code needs none

        def refused(code):
            try:
                exec(code)
            except ImportError as error:
                assert "{probe_runner.BLOCKED}" in str(error), error
            else:
                raise SystemExit("not blocked: " + code)

        for code in ["import minimodel.selfcheck.lab_17_01",
                     "from minimodel import selfcheck",
                     "import minimodel.selfcheck.per_encoding",
                     "importlib.import_module('minimodel.' + 'selfcheck.lab_17_01')",
                     "__import__('minimodel.selfcheck.lab_17_04')"]:
            refused(code)
        from minimodel.compare import encoding_problems
        from minimodel.model import GPTConfig
        assert encoding_problems(GPTConfig(), ["sinusoidal"]) is not None
        refused("importlib.import_module('minimodel.selfcheck.lab_17_01')")
        refused("from minimodel.selfcheck import command")
        assert not [n for n in sys.modules if n.startswith("minimodel.selfcheck.lab")]
        print("blocked")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0 and "blocked" in result.stdout, result.stderr[-2000:]


def test_only_the_sandbox_s_own_refusal_passes_into_feedback_word_for_word():
    sources = Sources.of({"sinusoidal": b"import torch\n"})
    refused = probe_runner.refusal("minimodel.selfcheck.lab_17_01")
    assert sources.message(refused) == refused
    for forged in [probe_runner.refusal("numpy"), refused + " 0.841470", "1.0 " + refused,
                   refused.replace("lab_17_01", "lab_17_01 [0.84, 0.54]")]:
        assert sources.message(forged) == "", forged


def test_the_sandbox_holds_no_file_with_answers(tmp_path):
    scratch = Scratch(tmp_path / "scratch", {})
    package = scratch.course_src / "minimodel"
    copied = {".".join(p.relative_to(package.parent).with_suffix("").parts).removesuffix(
        ".__init__") for p in package.rglob("*.py")}
    assert "minimodel.compare" in copied
    assert sorted(n for n in copied if probe_runner.forbidden(n)) == \
        sorted(probe_runner.GIVEN_CODE_MAY_IMPORT)


# --- graded in the sandbox ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def records(tmp_path_factory, capabilities):
    if not capabilities.namespaces:
        pytest.skip("this platform cannot isolate the sandbox (needs root and namespaces)")
    root = tmp_path_factory.mktemp("borrowed")
    solved = solved_cells()
    entries = [Entry("honest", stub_with(REFERENCE_PE, REFERENCE_FORWARD)),
               Entry("borrowed", stub_with(BORROWED_PE, REFERENCE_FORWARD)),
               Entry("hidden", stub_with(HIDDEN_PE, REFERENCE_FORWARD)),
               Entry("by_path", stub_with(BY_PATH_PE, REFERENCE_FORWARD)),
               Entry("notebook", REFERENCE, cells={
                   **solved, "dots": "import minimodel.selfcheck.lab_17_01\n" + solved["dots"]})]
    (root / "submissions").mkdir()
    for entry in entries:
        entry.build(root / "submissions")
    summary = grade(root / "submissions", root / "out",
                    Options(workers=2, limits=LIMITS, progress=False, labs=["17.01"]),
                    stream=io.StringIO())
    assert summary["failed"] == []
    return {r["student_id"]: r for r in summary["records"]}


def pe_items(record: dict) -> list[dict]:
    return [v for v in record["labs"]["17.01"]["items"] if v["key"].startswith("pe.")]


def test_an_honest_submission_keeps_full_marks(records):
    assert module_score(records["honest"]) == 9
    assert not any(f["code"] == "borrowed-answer" for v in pe_items(records["honest"])
                   for f in v["findings"])


@pytest.mark.parametrize("name", ["borrowed", "hidden"])
def test_a_borrowed_answer_scores_like_the_stub_and_is_said(records, name):
    items = pe_items(records[name])
    assert items and all(v["score"] == 0 for v in items)
    for item in items:
        (finding,) = [f for f in item["findings"] if f["code"] == "borrowed-answer"]
        assert "minimodel.selfcheck" in finding["es"] and "tuyo" in finding["es"]
        assert "minimodel.selfcheck" in finding["en"] and "your own" in finding["en"]
    assert "borrowed code" in records[name]["status"]  # grades.csv's status column says it
    assert "borrowed" not in records["honest"]["status"]


def test_a_borrowed_import_is_refused_before_the_module_runs(records):
    items = [v for v in records["borrowed"]["labs"]["17.01"]["items"]
             if not v["key"].startswith("nb/")]
    assert module_score(records["borrowed"]) == 0  # every item of sinusoidal.py
    for item in items:
        assert item["instructor"].get("run") == "missing"  # never run
        assert any(f["code"] == "borrowed-answer" and "sinusoidal.py" in f["es"]
                   and "sinusoidal.py" in f["en"] for f in item["findings"])


def test_a_notebook_cannot_import_the_self_check(records):
    record = records["notebook"]
    assert module_score(record) == 9
    (error,) = [e for e in record["instructor"]["notebooks"]["17.01"]["cell_errors"]
                if e.get("grade_id") == "dots"]
    assert error["ename"] == "ImportError" and probe_runner.BLOCKED in error["evalue"]


def test_the_self_check_cannot_be_read_from_its_file_either(records):
    assert all(v["score"] == 0 for v in pe_items(records["by_path"]))


# --- lab 17.03: a library's RoPE, refused by the self-check and the grader alike ----------------

ROTARY_START = "    ### BEGIN SOLUTION\n    ### HINT es: con F = cos.shape[-1]"
HF_ROTARY = """\
    if convention == "half" and 2 * cos.shape[-1] == x.shape[-1]:
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

        both_cos = torch.cat((cos, cos), dim=-1).to(device=x.device, dtype=x.dtype)
        both_sin = torch.cat((sin, sin), dim=-1).to(device=x.device, dtype=x.dtype)
        rotated, _ = apply_rotary_pos_emb(x, x, both_cos, both_sin,
                                          unsqueeze_dim=1 if cos.dim() == 3 else 0)
        return rotated
"""
# the same function reached through the course's given code by a computed name: no import of
# transformers to read, only the call to see
HIDDEN_ROTARY = HF_ROTARY.replace(
    "        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb\n",
    "        from minimodel import hf_llama\n\n        apply_rotary_pos_emb = getattr(getattr("
    "hf_llama, 'model' + 'ing_llama'), 'apply_rotary_pos_emb')\n")
ROPE = (REFERENCE_DIR / "rope.py").read_text(encoding="utf-8")
ROPES = {"honest": ROPE,
         "library": ROPE.replace(ROTARY_START, HF_ROTARY + ROTARY_START, 1),
         "watched": ROPE.replace(ROTARY_START, HIDDEN_ROTARY + ROTARY_START, 1),
         "self_check": ROPE.replace("import torch\n", "import torch\n\nimport "
                                    "minimodel.selfcheck.snapshots  # noqa: F401\n", 1)}
ROPE_POINTS = 11


@pytest.fixture(scope="module")
def rope_records(tmp_path_factory, capabilities):
    if not capabilities.namespaces:
        pytest.skip("this platform cannot isolate the sandbox (needs root and namespaces)")
    root = tmp_path_factory.mktemp("borrowed_rope")
    for name, source in ROPES.items():
        assert source != ROPE or name == "honest"
        path = root / "submissions" / name / "src" / "minimodel" / "positional" / "rope.py"
        path.parent.mkdir(parents=True)
        path.write_text(source, encoding="utf-8")
    summary = grade(root / "submissions", root / "out",
                    Options(workers=2, limits=LIMITS, progress=False, labs=["17.03"]),
                    stream=io.StringIO())
    assert summary["failed"] == []
    return {r["student_id"]: r for r in summary["records"]}


def self_check(tmp_path, name: str) -> list:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "rope.py").write_text(ROPES[name], encoding="utf-8")
    return run_checks(find_lab("17.03"), str(folder))


def rope_items(record: dict) -> list[dict]:
    return [v for v in record["labs"]["17.03"]["items"] if not v["key"].startswith("nb/")]


def borrowed(item: dict) -> list[dict]:
    return [f for f in item["findings"] if f["code"] == CODE]


def test_honest_rope_keeps_full_marks_and_passes_the_self_check(rope_records, tmp_path):
    assert sum(v["score"] for v in rope_items(rope_records["honest"])) == ROPE_POINTS
    assert not any(borrowed(v) for v in rope_items(rope_records["honest"]))
    assert {r.status for r in self_check(tmp_path, "honest")} == {"pass"}


@pytest.mark.parametrize("name", ["library", "self_check"])
def test_a_read_refusal_is_the_same_in_make_check_and_the_grader(rope_records, tmp_path, name):
    """Every item of rope.py scores 0 with the finding the self-check prints for each check."""
    items = rope_items(rope_records[name])
    assert all(v["score"] == 0 for v in items)
    findings = {(f["es"], f["en"]) for v in items for f in borrowed(v)}
    results = self_check(tmp_path, name)
    assert {r.status for r in results} == {"fail"}
    assert findings == {(r.detail_es, r.detail_en) for r in results}
    used = "transformers.models.llama" if name == "library" else "minimodel.selfcheck.snapshots"
    (es, en), = findings
    assert used in es and "rope.py" in es and "tuyo" in es
    assert used in en and "rope.py" in en and "your own" in en


def test_a_library_call_seen_only_at_run_time_is_refused_by_both(rope_records, tmp_path):
    """The half convention is Hugging Face's: its items lose the cases that call it, with the
    self-check's finding for its checks of that convention, in the same words; the grader names
    the library where the self-check names its function (which function a run on hidden inputs
    called could be picked by the student's code to spell the inputs)."""
    items = {v["key"]: v for v in rope_items(rope_records["watched"])}
    assert items["rotary"]["score"] < 3 and items["frequencies"]["score"] == 1
    findings = {(f["es"], f["en"]) for f in borrowed(items["rotary"])}
    results = self_check(tmp_path, "watched")
    refused = {(r.detail_es, r.detail_en) for r in results if r.status == "fail"}
    (es, en), = refused
    called = "transformers.models.llama.modeling_llama.apply_rotary_pos_emb"
    assert called in en and called in es
    assert findings == {(es.replace(called, "transformers"), en.replace(called, "transformers"))}
    assert {r.check.target for r in results if r.status == "fail"} <= {"apply_rotary",
                                                                         "RotaryEmbedding"}
