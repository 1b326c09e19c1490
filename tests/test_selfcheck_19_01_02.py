"""Self-check of labs 19.01 and 19.02 (no file of their own: they plug in the Phase 17 encodings).

The typical mistakes of plugging an encoding into the model get their explanation (reference and
stubs: ``test_selfcheck_every_lab.py``).
"""

from selfcheck_copies import diagnose, self_check, student_copy

from minimodel.course import find_lab


def test_the_labs_add_no_student_file():
    assert all(find_lab(lab_id).modules == () for lab_id in ("19.01", "19.02"))


def test_ignored_offset_is_diagnosed(tmp_path):
    results = diagnose(
        tmp_path,
        "19.01",
        "learned",
        ("rows = self.weight[offset : offset + T]", "rows = self.weight[:T]"),
    )
    assert results["forward_learned"].status == "pass"
    assert results["cache_learned"].status == "fail"
    assert "offset .. offset+T-1" in results["cache_learned"].detail_es
    assert "after the cache" in results["cache_learned"].detail_en
    assert results["cache_rope"].status == "pass"


def test_bias_aligned_to_the_start_is_diagnosed(tmp_path):
    results = diagnose(
        tmp_path,
        "19.01",
        "alibi",
        (
            "query = torch.arange(k_len - q_len, k_len, device=device)[:, None]",
            "query = torch.arange(q_len, device=device)[:, None]",
        ),
    )
    assert results["cache_alibi"].status == "fail"
    assert "k_len - q_len + i" in results["cache_alibi"].detail_en


def test_encoding_that_changes_nothing_is_diagnosed(tmp_path):
    results = diagnose(tmp_path, "19.01", "sinusoidal", ("return x + rows", "return x"))
    assert results["changes_output_sinusoidal"].status == "fail"
    assert "no cambia nada" in results["changes_output_sinusoidal"].detail_es


def test_detached_bias_and_rope_without_fallback_are_diagnosed(tmp_path):
    folder = student_copy(
        tmp_path,
        "relative_bias",
        (
            "return self.bias(buckets).permute(2, 0, 1)",
            "return self.bias.weight.detach()[buckets].permute(2, 0, 1)",
        ),
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
    results = self_check("19.02", folder)
    assert results["learns_t5"].status == "fail"
    assert ".detach()" in results["learns_t5"].detail_en
    assert results["longer_rope"].status == "fail"
    assert "rope_cos_sin" in results["longer_rope"].detail_en
    assert results["learns_rope"].status == results["longer_alibi"].status == "pass"
