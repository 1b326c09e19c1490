"""A notebook that forges what its kernel records gains nothing over the modules it runs on.

Lab 19.01's ``test-cached`` says whether decoding through a KV cache gives the full pass's
logits. Its differences are computed twice: in the student's kernel (recorded) and by the probe
group ``cached``, from the student's modules, outside the kernel. Two students with ALiBi's
bias aligned to the start of the keys (a cache bug of ``alibi.py``) forge the kernel's side: one
replaces the recorder with a wrapper that records zeros, the other overwrites ``differences``
and makes ``cached_logits`` skip the cache. Graded in the same run as an honest classmate and an
honest student with the same bug, each forger scores exactly what the honest one with that bug
does (not the item), and the honest classmate's row is the one it gets graded alone.
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr
from pathlib import Path

import nbformat
import pytest
from conftest import TEST_LIMITS

from grader.build.demo import fill_stub, reference_bodies
from grader.build.sync import released_text
from grader.trusted import gradebook, nbexec
from grader.trusted.grading import Options, grade
from minimodel.course import encoding_modules
from minimodel.implementation import REFERENCE_DIR, REPO_ROOT, STUBS_DIR

pytestmark = pytest.mark.slow

LAB, SLUG = "19.01", "19_01_mini_gpt"
KEY = "19.01/nb/test-cached"
ALIGNED_TO_START = (REPO_ROOT / "grader" / "samples" / "buggy" /
                    "alibi.alibi_bias.snippet").read_text(encoding="utf-8")
RECORDER_REPLACED = """\
_mm_real = __minimodel_record
def __minimodel_record(cell_id, expressions):
    if cell_id == "test-cached":
        expressions = {**expressions, "differences": lambda: np.zeros(6),
                       "hidden": lambda: np.zeros((3, 3))}
    _mm_real(cell_id, expressions)
"""
VALUES_FORGED = """\
differences = {name: 0.0 for name in differences}
def cached_logits(model, idx, prompt_len):
    with torch.no_grad():
        return model(idx)[0]
"""


def submission(folder: Path, name: str, buggy: bool, added: str = "") -> None:
    """The reference modules (ALiBi's bias aligned to the start of the keys when ``buggy``) and
    the solved notebook, with ``added`` as a cell of the student's after ``cached-check``."""
    positional = folder / name / "src" / "minimodel" / "positional"
    positional.mkdir(parents=True)
    for module in encoding_modules():
        if (REFERENCE_DIR / f"{module}.py").exists():
            text = (REFERENCE_DIR / f"{module}.py").read_text(encoding="utf-8")
            if buggy and module == "alibi":
                text = fill_stub(released_text(STUBS_DIR / "alibi.py"),
                                 {**reference_bodies("alibi"), "alibi_bias": ALIGNED_TO_START})
            (positional / f"{module}.py").write_text(text, encoding="utf-8")
    notebook = nbexec.source_notebook(SLUG)
    if added:
        at = next(i for i, c in enumerate(notebook.cells)
                  if c.metadata.get("nbgrader", {}).get("grade_id") == "cached-check")
        notebook.cells.insert(at + 1, nbformat.v4.new_code_cell(added))
    (folder / name / "labs").mkdir()
    nbformat.write(notebook, folder / name / "labs" / f"{SLUG}.ipynb")


def graded(root: Path, students: dict[str, tuple[bool, str]]) -> dict:
    subs = root / "subs"
    for name, (buggy, added) in students.items():
        submission(subs, name, buggy, added)
    with redirect_stderr(io.StringIO()):
        grade(subs, root / "out", Options(workers=2, labs=[LAB], limits=TEST_LIMITS,
                                          progress=False), stream=io.StringIO())
    lines = (root / "out" / "grades.csv").read_text(encoding="utf-8").splitlines()
    return {"records": {r["student_id"]: r for r in gradebook.load_records(root / "out")},
            "rows": {line.split(",", 1)[0]: line for line in lines}}


def item(record: dict) -> dict:
    return next(v for v in record["labs"][LAB]["items"] if v["key"] == "nb/test-cached")


def test_forging_the_kernel_gains_nothing_over_the_modules(tmp_path, capabilities):
    if not capabilities.namespaces:
        pytest.skip("this platform cannot isolate the sandbox (needs root and namespaces)")
    alone = graded(tmp_path / "alone", {"honest": (False, "")})
    mixed = graded(tmp_path / "mixed", {
        "honest": (False, ""), "honest_buggy": (True, ""),
        "forged_recorder": (True, RECORDER_REPLACED), "forged_values": (True, VALUES_FORGED)})
    assert mixed["rows"]["honest"] == alone["rows"]["honest"]
    records = mixed["records"]
    assert item(records["honest"])["score"] == item(records["honest"])["points"] == 3
    buggy = item(records["honest_buggy"])
    assert 0 < buggy["score"] < buggy["points"]
    assert "nb-probed" not in {f["code"] for f in buggy["findings"]}  # the kernel said it first
    for forger in ("forged_recorder", "forged_values"):
        verdict = item(records[forger])
        assert verdict["score"] == buggy["score"], (forger, verdict)
        assert "nb-probed" in {f["code"] for f in verdict["findings"]}, forger
