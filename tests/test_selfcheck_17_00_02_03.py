"""Self-check of labs 17.00, 17.02 and 17.03: stubs say "not implemented", the reference passes,
and the typical mistakes get their explanation."""

from __future__ import annotations

from pathlib import Path

import pytest

from minimodel.course import find_lab
from minimodel.implementation import REFERENCE_DIR
from minimodel.selfcheck.runner import run_checks

LABS = ("17.00", "17.02", "17.03")
TIMEOUT = (
    120  # seconds per check: generous, so a loaded machine does not turn "todo" into "timeout"
)


def statuses(results) -> dict[str, str]:
    return {result.check.name: result.status for result in results}


@pytest.mark.parametrize("lab_id", LABS)
def test_reference_passes_every_visible_check(lab_id):
    assert set(statuses(run_checks(find_lab(lab_id), "reference", timeout=TIMEOUT)).values()) == {
        "pass"
    }


@pytest.mark.parametrize("lab_id", LABS)
def test_untouched_stubs_say_not_implemented_in_both_languages(lab_id):
    results = run_checks(find_lab(lab_id), "src", timeout=TIMEOUT)
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


def test_inverse_permutation_is_diagnosed(tmp_path):
    folder = student_copy(
        tmp_path,
        "equivariance",
        "    perm = perm.to(x.device)\n",
        "    perm = torch.argsort(perm).to(x.device)\n",
    )
    results = {r.check.name: r for r in run_checks(find_lab("17.00"), str(folder), timeout=TIMEOUT)}
    assert results["direction_of_perm"].status == "fail"
    assert "inversa" in results["direction_of_perm"].detail_es
    assert "inverse" in results["direction_of_perm"].detail_en
    assert results["identity_is_equivariant"].status == "pass"


def test_align_corners_false_is_diagnosed(tmp_path):
    folder = student_copy(
        tmp_path,
        "learned",
        "    L = table.shape[0]\n    step =",
        "    import torch.nn.functional as F\n"
        "    return F.interpolate(table.T[None], new_len, mode='linear')[0].T\n"
        "    L = table.shape[0]\n    step =",
    )
    results = {r.check.name: r for r in run_checks(find_lab("17.02"), str(folder), timeout=TIMEOUT)}
    assert results["linear_values"].status == "fail"
    assert "align_corners=False" in results["linear_values"].detail_en
    assert results["adds_rows"].status == "pass"


@pytest.mark.parametrize(
    ("old", "new", "word_es", "word_en"),
    [
        # rotating by -angle
        (
            "return angles.cos() * attention_factor, angles.sin() * attention_factor",
            "return angles.cos() * attention_factor, -angles.sin() * attention_factor",
            "sentido contrario",
            "the other way",
        ),
        # the two conventions swapped
        (
            'if convention == "interleaved":',
            'if convention != "interleaved":',
            "convención",
            "convention",
        ),
    ],
    ids=["sign", "convention"],
)
def test_rope_mistakes_are_diagnosed(tmp_path, old, new, word_es, word_en):
    folder = student_copy(tmp_path, "rope", old, new)
    results = {r.check.name: r for r in run_checks(find_lab("17.03"), str(folder), timeout=TIMEOUT)}
    failed = results["reference_interleaved"]
    assert failed.status == "fail"
    assert word_es in failed.detail_es and word_en in failed.detail_en
    assert results["permutation_values"].status == "pass"
