"""Self-check of lab 17.00 (why position): a student's copy with a typical mistake gets its
explanation (reference and stubs: ``test_selfcheck_every_lab.py``)."""

from selfcheck_copies import diagnose


def test_inverse_permutation_is_diagnosed(tmp_path):
    results = diagnose(
        tmp_path,
        "17.00",
        "equivariance",
        ("    perm = perm.to(x.device)\n", "    perm = torch.argsort(perm).to(x.device)\n"),
    )
    assert results["direction_of_perm"].status == "fail"
    assert "inversa" in results["direction_of_perm"].detail_es
    assert "inverse" in results["direction_of_perm"].detail_en
    assert results["identity_is_equivariant"].status == "pass"
