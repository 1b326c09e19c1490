"""Self-check of lab 17.05 (relative bias): a student's copy with a typical mistake gets its
explanation (reference and stubs: ``test_selfcheck_every_lab.py``). Mistakes in different functions
share one copy."""

from selfcheck_copies import diagnose

QUERIES_AT_THE_START = (
    "    query = torch.arange(k_len - q_len, k_len, device=device)[:, None]",
    "    query = torch.arange(q_len, device=device)[:, None]",
)


def explains(result, es: str, en: str) -> bool:
    return result.status == "fail" and es in result.detail_es and en in result.detail_en


def test_t5_sign_and_swin_stride_are_diagnosed(tmp_path):
    results = diagnose(
        tmp_path,
        "17.05",
        "relative_bias",
        ("    rel = relative_position.long()", "    rel = -relative_position.long()"),
        ("return d_row * (2 * window_w - 1)", "return d_row * (2 * window_h - 1)"),
    )
    for check in ("buckets_bidirectional", "buckets_causal"):
        assert explains(results[check], "consulta - clave", "query - key"), check
    assert explains(results["module_square"], "consulta - clave", "query - key")
    assert explains(results["swin_rectangular"], "2 * window_w - 1", "2 * window_w - 1")
    assert results["swin_two_by_two"].status == "pass"  # a square window hides the stride


def test_unhalved_buckets_and_start_aligned_queries_are_diagnosed(tmp_path):
    results = diagnose(
        tmp_path,
        "17.05",
        "relative_bias",
        ("        num_buckets //= 2\n", ""),
        QUERIES_AT_THE_START,
    )
    assert explains(results["buckets_bidirectional"], "la mitad de las cubetas", "half the buckets")
    assert results["buckets_causal"].status == "pass"
    assert explains(results["module_end_aligned"], "ÚLTIMAS q_len", "LAST q_len")
