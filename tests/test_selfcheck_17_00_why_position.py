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


def test_a_tensor_gap_fails_only_the_type_check(tmp_path):
    """As in the grader, where the gap's values and its type are two items."""
    results = diagnose(tmp_path, "17.00", "equivariance", (".abs().max().item()", ".abs().max()"))
    assert results["returns_a_python_float"].status == "fail"
    assert ".item()" in results["returns_a_python_float"].detail_en
    assert {r.status for name, r in results.items() if name != "returns_a_python_float"} == {
        "pass"}


def test_a_nan_gap_fails(tmp_path):
    """NaN is no number within the tolerance (as in the grader, where it matches nothing)."""
    results = diagnose(tmp_path, "17.00", "equivariance",
                       (".abs().max().item()", ".abs().max().item() * float('nan')"))
    for name in ("identity_is_equivariant", "position_ramp", "attention_is_equivariant"):
        assert results[name].status == "fail", name
        assert "nan" in results[name].detail_en
