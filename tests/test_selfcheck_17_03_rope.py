"""Self-check of lab 17.03 (RoPE): a student's copy with a typical mistake gets its explanation
(reference and stubs: ``test_selfcheck_every_lab.py``)."""

import pytest
from selfcheck_copies import diagnose


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
