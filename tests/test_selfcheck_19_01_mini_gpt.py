"""Self-check of lab 19.01 (Mini-GPT), which has no file of its own: it plugs in the Phase 17
encodings. The typical mistakes of plugging an encoding into the model get their explanation
(reference and stubs: ``test_selfcheck_every_lab.py``)."""

from selfcheck_copies import diagnose

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
