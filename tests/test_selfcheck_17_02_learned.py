"""Self-check of lab 17.02 (learned positions): a student's copy with a typical mistake gets its
explanation (reference and stubs: ``test_selfcheck_every_lab.py``)."""

from selfcheck_copies import diagnose


def test_align_corners_false_is_diagnosed(tmp_path):
    results = diagnose(
        tmp_path,
        "17.02",
        "learned",
        (
            "    L = table.shape[0]\n    step =",
            "    import torch.nn.functional as F\n"
            "    return F.interpolate(table.T[None], new_len, mode='linear')[0].T\n"
            "    L = table.shape[0]\n    step =",
        ),
    )
    assert results["linear_values"].status == "fail"
    assert "align_corners=False" in results["linear_values"].detail_en
    assert results["adds_rows"].status == "pass"
