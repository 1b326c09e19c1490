"""Self-check of lab 18.01 (extrapolation): a student's copy with a typical mistake gets its
explanation (reference and stubs: ``test_selfcheck_every_lab.py``)."""

from selfcheck_copies import diagnose


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
