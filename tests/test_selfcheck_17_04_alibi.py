"""Self-check of lab 17.04 (ALiBi): a student's copy with a typical mistake gets its explanation
(reference and stubs: ``test_selfcheck_every_lab.py``). Mistakes in different functions share one
copy."""

from selfcheck_copies import diagnose

CLOSED_FORM_SLOPES = (
    "    slopes = power_of_two(closest) + power_of_two(2 * closest)[0::2][: n_heads - closest]\n",
    "    slopes = power_of_two(n_heads)\n",
)


QUERIES_AT_THE_START = (
    "    query = torch.arange(k_len - q_len, k_len, device=device)[:, None]",
    "    query = torch.arange(q_len, device=device)[:, None]",
)


def explains(result, es: str, en: str) -> bool:
    return result.status == "fail" and es in result.detail_es and en in result.detail_en


def test_alibi_slopes_and_start_aligned_queries_are_diagnosed(tmp_path):
    results = diagnose(tmp_path, "17.04", "alibi", CLOSED_FORM_SLOPES, QUERIES_AT_THE_START)
    assert explains(results["slopes_not_power_of_two"], "2^(-8h/H)", "power of two")
    assert results["slopes_power_of_two"].status == "pass"  # 2^(-8h/H) holds for 8 heads
    for check in ("bias_end_aligned", "bias_symmetric"):
        assert explains(results[check], "ÚLTIMAS q_len", "LAST q_len"), check
    assert results["bias_causal_square"].status == "pass"  # the same when q_len == k_len


def test_alibi_bias_sign_is_diagnosed(tmp_path):
    results = diagnose(tmp_path, "17.04", "alibi", ("bias = m * -distance", "bias = m * distance"))
    for check in ("bias_causal_square", "bias_end_aligned"):
        assert explains(results[check], "signo está al revés", "sign is reversed"), check
    assert results["bias_symmetric"].status == "pass"
