"""Self-check of lab 18.03 (KV cache): a student's copy with a typical mistake (positions restarting
at 0, a top-left mask, the first rows of a bias table) gets its explanation (reference and stubs:
``test_selfcheck_every_lab.py``)."""

from selfcheck_copies import diagnose


def test_restarted_positions_are_diagnosed(tmp_path):
    results = diagnose(
        tmp_path,
        "18.03",
        "cache_positions",
        ("torch.arange(cache_len, cache_len + q_len,", "torch.arange(0, q_len,"),
    )
    assert results["positions_after_cache"].status == "fail"
    assert "error clásico" in results["positions_after_cache"].detail_es
    assert "classic cache bug" in results["positions_after_cache"].detail_en
    assert "cache_len" in results["relative_after_cache"].detail_en  # built on chunk_positions
    assert results["positions_without_cache"].status == "fail"  # chunk_positions(9, 1)


def test_top_left_mask_is_diagnosed(tmp_path):
    results = diagnose(
        tmp_path,
        "18.03",
        "cache_positions",
        (
                "future = relative_positions(cache_len, q_len, device=device) > 0",
                "future = ~torch.ones(q_len, cache_len + q_len, dtype=torch.bool).tril()",
            ),
    )
    for name in ("mask_bottom_right", "mask_one_token"):
        assert results[name].status == "fail"
        assert "is_causal=True" in results[name].detail_es
        assert "is_causal=True" in results[name].detail_en
    assert results["positions_after_cache"].status == "pass"


def test_first_rows_of_a_bias_table_are_diagnosed(tmp_path):
    results = diagnose(
        tmp_path,
        "18.03",
        "cache_positions",
        ("return table[..., cache_len:k_len, :k_len]", "return table[..., :q_len, :k_len]"),
    )
    assert results["rows_of_new_queries"].status == "fail"
    assert "arriba a la izquierda" in results["rows_of_new_queries"].detail_es
    assert "top-left" in results["rows_of_new_queries"].detail_en
