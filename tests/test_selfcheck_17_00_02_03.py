"""Self-check of labs 17.00, 17.02 and 17.03: the typical mistakes get their explanation
(reference and stubs: ``test_selfcheck_every_lab.py``)."""

import pytest
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


@pytest.mark.parametrize(
    ("old", "new", "word_es", "word_en"),
    [
        # rotating by -angle
        (
            "return angles.cos() * attention_factor, angles.sin() * attention_factor",
            "return angles.cos() * attention_factor, -angles.sin() * attention_factor",
            "sentido contrario",
            "the wrong way",
        ),
        # the two conventions swapped
        (
            'if convention == "interleaved":',
            'if convention != "interleaved":',
            "convenciones están cambiadas",
            "conventions are swapped",
        ),
    ],
    ids=["sign", "convention"],
)
def test_rope_mistakes_are_diagnosed(tmp_path, old, new, word_es, word_en):
    results = diagnose(tmp_path, "17.03", "rope", (old, new))
    failed = results["reference_interleaved"]
    assert failed.status == "fail"
    assert word_es in failed.detail_es and word_en in failed.detail_en
    assert results["permutation_values"].status == "pass"
