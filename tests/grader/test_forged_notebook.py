"""A notebook that forges what its kernel records gains nothing over the modules it runs on.

Lab 18.03's ``test-positions`` records calls of the module's functions; the probe group
``notebook`` computes them again outside the kernel. A student whose ``chunk_positions`` restarts
at 0 and who redefines the module's functions correctly in a cell of the notebook scores what the
same student without that cell does. Its ``test-exact`` is probed like 19.01's ``test-cached``
(group ``exact``): a student whose chunk mask is aligned to the start and who forges the
differences and ``cached_logits`` scores what the same mask earns without the forgery.

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
from mistaken_sources import MISTAKEN

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


RESTARTED = dict([MISTAKEN["cache_positions"]["restart"]])  # chunk_positions restarts at 0
REDEFINED = (REFERENCE_DIR / "cache_positions.py").read_text(encoding="utf-8")
TOP_LEFT = dict([MISTAKEN["cache_positions"]["top-left"]])  # a chunk's mask aligned to the start
EXACT_FORGED = """\
exact = {name: 0.0 for name in exact}
def cached_logits(model, idx, prefill, step=1, **options):
    with torch.no_grad():
        return model(idx)[0]
"""


def submission(folder: Path, name: str, edits: dict[str, dict[str, str]], added: str = "",
               slug: str = SLUG, after: str = "cached-check") -> None:
    """The reference modules with ``edits`` (module -> old -> new) and the solved notebook
    ``slug``, with ``added`` as a cell of the student's after the cell ``after``."""
    positional = folder / name / "src" / "minimodel" / "positional"
    positional.mkdir(parents=True)
    for module in encoding_modules():
        if (REFERENCE_DIR / f"{module}.py").exists():
            text = (REFERENCE_DIR / f"{module}.py").read_text(encoding="utf-8")
            for old, new in edits.get(module, {}).items():
                assert text.count(old) == 1, (module, old)
                text = text.replace(old, new)
            (positional / f"{module}.py").write_text(text, encoding="utf-8")
    notebook = nbexec.source_notebook(slug)
    if added:
        at = next(i for i, c in enumerate(notebook.cells)
                  if c.metadata.get("nbgrader", {}).get("grade_id") == after)
        notebook.cells.insert(at + 1, nbformat.v4.new_code_cell(added))
    (folder / name / "labs").mkdir()
    nbformat.write(notebook, folder / name / "labs" / f"{slug}.ipynb")


def aligned_to_start() -> dict[str, dict[str, str]]:
    """ALiBi's bias aligned to the start of the keys, as an edit of the reference."""
    reference = (REFERENCE_DIR / "alibi.py").read_text(encoding="utf-8")
    buggy = fill_stub(released_text(STUBS_DIR / "alibi.py"),
                      {**reference_bodies("alibi"), "alibi_bias": ALIGNED_TO_START})
    return {"alibi": {reference: buggy}}


def graded(root: Path, students: dict[str, tuple[dict, str]]) -> dict:
    subs = root / "subs"
    for name, (edits, added) in students.items():
        submission(subs, name, edits, added)
    with redirect_stderr(io.StringIO()):
        grade(subs, root / "out", Options(workers=2, labs=[LAB], limits=TEST_LIMITS,
                                          progress=False), stream=io.StringIO())
    lines = (root / "out" / "grades.csv").read_text(encoding="utf-8").splitlines()
    return {"records": {r["student_id"]: r for r in gradebook.load_records(root / "out")},
            "rows": {line.split(",", 1)[0]: line for line in lines}}


def item(record: dict, lab: str = LAB, key: str = "nb/test-cached") -> dict:
    return next(v for v in record["labs"][lab]["items"] if v["key"] == key)


def test_forging_the_kernel_gains_nothing_over_the_modules(tmp_path, capabilities):
    if not capabilities.namespaces:
        pytest.skip("this platform cannot isolate the sandbox (needs root and namespaces)")
    alone = graded(tmp_path / "alone", {"honest": ({}, "")})
    buggy = aligned_to_start()
    mixed = graded(tmp_path / "mixed", {
        "honest": ({}, ""), "honest_buggy": (buggy, ""),
        "forged_recorder": (buggy, RECORDER_REPLACED), "forged_values": (buggy, VALUES_FORGED)})
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


@pytest.fixture(scope="module")
def kv_cache_class(tmp_path_factory, capabilities):
    """Lab 18.03 graded for an honest student, one whose chunk_positions restarts (alone and
    with the module redefined correctly in the notebook) and one whose chunk mask is aligned to
    the start (alone and with test-exact's values forged)."""
    if not capabilities.namespaces:
        pytest.skip("this platform cannot isolate the sandbox (needs root and namespaces)")
    restarted, top_left = {"cache_positions": RESTARTED}, {"cache_positions": TOP_LEFT}
    root = tmp_path_factory.mktemp("kv-cache")
    subs = root / "subs"
    for name, edits, added, after in (
            ("honest", {}, "", ""), ("restarted", restarted, "", ""),
            ("redefined", restarted, REDEFINED, "positions"), ("top_left", top_left, "", ""),
            ("forged_exact", top_left, EXACT_FORGED, "exact")):
        submission(subs, name, edits, added, slug="18_03_kv_cache", after=after)
    with redirect_stderr(io.StringIO()):
        grade(subs, root / "out", Options(workers=2, labs=["18.03"], limits=TEST_LIMITS,
                                          progress=False), stream=io.StringIO())
    return {r["student_id"]: r for r in gradebook.load_records(root / "out")}


def test_redefining_the_module_in_the_notebook_gains_nothing(kv_cache_class):
    scores = {name: item(r, "18.03", "nb/test-positions") for name, r in kv_cache_class.items()}
    scores["honest_buggy"] = scores["restarted"]
    assert scores["honest"]["score"] == scores["honest"]["points"]
    chunk = item(kv_cache_class["restarted"], "18.03", "chunk")  # where the mistake costs
    assert chunk["score"] < chunk["points"]
    assert "nb-recomputed" not in {f["code"] for f in scores["honest_buggy"]["findings"]}
    # the honest student's cell is credited on top of the module's mistake (carried forward);
    # the one who redefines the module in the notebook gets no more than that
    assert scores["redefined"]["score"] <= scores["honest_buggy"]["score"], scores["redefined"]
    assert "nb-recomputed" in {f["code"] for f in scores["redefined"]["findings"]}


def test_forging_cached_decoding_gains_nothing_over_the_mask(kv_cache_class):
    scores = {name: item(r, "18.03", "nb/test-exact") for name, r in kv_cache_class.items()}
    assert scores["honest"]["score"] == scores["honest"]["points"] == 3
    assert scores["top_left"]["score"] < scores["top_left"]["points"]
    assert scores["forged_exact"]["score"] == scores["top_left"]["score"], scores["forged_exact"]
    assert "nb-probed" in {f["code"] for f in scores["forged_exact"]["findings"]}
