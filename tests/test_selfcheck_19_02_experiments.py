"""Self-check of lab 19.02 (experiments), which has no file of its own: it plugs in the Phase 17
encodings. The typical mistakes of plugging an encoding into the model get their explanation
(reference and stubs: ``test_selfcheck_every_lab.py``)."""

from selfcheck_copies import self_check, student_copy


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
