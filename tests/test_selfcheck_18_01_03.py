"""Self-check of labs 18.01 and 18.03: the typical mistakes (positions restarting at 0, a
top-left mask, a mean of means, a needle distance counted to MARK) get their explanation
(reference and stubs: ``test_selfcheck_every_lab.py``)."""

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


def test_mean_of_means_is_diagnosed(tmp_path):
    results = diagnose(
        tmp_path,
        "18.01",
        "extrapolation",
        (
                "means = [loss[..., start:end].float().nanmean() for start, end in buckets]",
                "means = [loss[..., start:end].float().nanmean(-1).nanmean() "
                "for start, end in buckets]",
            ),
    )
    assert results["means_skip_nan"].status == "fail"
    assert "media de medias" in results["means_skip_nan"].detail_es
    assert "mean of per-sequence means" in results["means_skip_nan"].detail_en
    assert results["means_of_a_curve"].status == "pass"


def test_reference_from_the_start_is_diagnosed(tmp_path):
    results = diagnose(
        tmp_path,
        "18.01",
        "extrapolation",
        (
                "reference = curve[train_len // 2 : train_len].nanmean()",
                "reference = curve[:train_len].nanmean()",
            ),
    )
    assert results["failure_reference"].status == "fail"
    assert "[T//2, T)" in results["failure_reference"].detail_en
    assert results["failure_of_a_step"].status == "pass"


def test_needle_counted_to_mark_is_diagnosed(tmp_path):
    results = diagnose(
        tmp_path,
        "18.01",
        "extrapolation",
        ("first_digit = 1 + before + 1", "first_digit = 1 + before"),
    )
    assert results["needle_ends"].status == "fail"
    assert "MARK" in results["needle_ends"].detail_es and "MARK" in results["needle_ends"].detail_en
