"""Self-check of labs 19.01 and 19.02 (no file of their own: they plug in the Phase 17 encodings).

Stubs say "not implemented" for every check, the reference passes them all, and the typical
mistakes of plugging an encoding into the model get their explanation.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from minimodel.course import find_lab
from minimodel.implementation import REFERENCE_DIR
from minimodel.selfcheck.runner import run_checks

LABS = ("19.01", "19.02")


def statuses(results) -> dict[str, str]:
    return {result.check.name: result.status for result in results}


def test_the_labs_add_no_student_file():
    assert all(find_lab(lab_id).modules == () for lab_id in LABS)


@pytest.mark.parametrize("lab_id", LABS)
def test_reference_passes_every_visible_check(lab_id):
    assert set(statuses(run_checks(find_lab(lab_id), "reference")).values()) == {"pass"}


@pytest.mark.parametrize("lab_id", LABS)
def test_untouched_stubs_say_not_implemented_in_both_languages(lab_id):
    results = run_checks(find_lab(lab_id), "src")
    assert set(statuses(results).values()) == {"todo"}
    for result in results:
        assert "Falta implementar" in result.detail_es, result.check.name
        assert "is not implemented yet" in result.detail_en, result.check.name


def student_copy(tmp_path: Path, module: str, old: str, new: str) -> Path:
    """The reference with one edit in ``module``, as a student's folder."""
    folder = tmp_path / "student"
    folder.mkdir()
    for source in REFERENCE_DIR.glob("*.py"):
        (folder / source.name).write_text(source.read_text())
    text = (folder / f"{module}.py").read_text()
    assert old in text, f"the reference no longer contains {old!r}"
    (folder / f"{module}.py").write_text(text.replace(old, new, 1))
    return folder


def test_ignored_offset_is_diagnosed(tmp_path):
    folder = student_copy(
        tmp_path, "learned", "rows = self.weight[offset : offset + T]", "rows = self.weight[:T]"
    )
    results = {r.check.name: r for r in run_checks(find_lab("19.01"), str(folder))}
    assert results["forward_learned"].status == "pass"
    assert results["cache_learned"].status == "fail"
    assert "offset .. offset+T-1" in results["cache_learned"].detail_es
    assert "after the cache" in results["cache_learned"].detail_en
    assert results["cache_rope"].status == "pass"


def test_bias_aligned_to_the_start_is_diagnosed(tmp_path):
    folder = student_copy(
        tmp_path,
        "alibi",
        "query = torch.arange(k_len - q_len, k_len, device=device)[:, None]",
        "query = torch.arange(q_len, device=device)[:, None]",
    )
    results = {r.check.name: r for r in run_checks(find_lab("19.01"), str(folder))}
    assert results["cache_alibi"].status == "fail"
    assert "k_len - q_len + i" in results["cache_alibi"].detail_en


def test_encoding_that_changes_nothing_is_diagnosed(tmp_path):
    folder = student_copy(tmp_path, "sinusoidal", "return x + rows", "return x")
    results = {r.check.name: r for r in run_checks(find_lab("19.01"), str(folder))}
    assert results["changes_output_sinusoidal"].status == "fail"
    assert "no cambia nada" in results["changes_output_sinusoidal"].detail_es


def test_detached_bias_and_rope_without_fallback_are_diagnosed(tmp_path):
    folder = student_copy(
        tmp_path,
        "relative_bias",
        "return self.bias(buckets).permute(2, 0, 1)",
        "return self.bias.weight.detach()[buckets].permute(2, 0, 1)",
    )
    rope = (folder / "rope.py").read_text()
    old = "        if offset + T <= self.max_len:\n"
    assert old in rope
    clamp = (
        "        if True:\n"
        "            rows = torch.arange(offset, offset + T).clamp(max=self.max_len - 1)\n"
        "            cos, sin = self.cos[rows], self.sin[rows]\n"
        "        elif False:\n"
    )
    (folder / "rope.py").write_text(rope.replace(old, clamp, 1))
    results = {r.check.name: r for r in run_checks(find_lab("19.02"), str(folder))}
    assert results["learns_t5"].status == "fail"
    assert ".detach()" in results["learns_t5"].detail_en
    assert results["longer_rope"].status == "fail"
    assert "rope_cos_sin" in results["longer_rope"].detail_en
    assert results["learns_rope"].status == results["longer_alibi"].status == "pass"
