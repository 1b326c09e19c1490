"""Self-check of labs 17.04, 17.05 and 17.06: a student's copy with a typical mistake written in
gets that mistake's explanation, from the stored answers (reference and stubs:
``test_selfcheck_every_lab.py``). Mistakes in different functions share one copy."""

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


def test_two_d_halves_grid_axes_and_rope_blocks_are_diagnosed(tmp_path):
    results = diagnose(
        tmp_path,
        "17.06",
        "two_d",
        ("grid = torch.cat((rows, cols), dim=-1)", "grid = torch.cat((cols, rows), dim=-1)"),
        ("reshape(h, w, D).permute(2, 0, 1)", "reshape(h, w, D).permute(2, 1, 0)"),
        (
            "    cos_r, sin_r = rope_cos_sin(rows.to(x.device), inv_freq)\n"
            "    cos_c, sin_c = rope_cos_sin(cols.to(x.device), inv_freq)\n",
            "    cos_r, sin_r = rope_cos_sin(cols.to(x.device), inv_freq)\n"
            "    cos_c, sin_c = rope_cos_sin(rows.to(x.device), inv_freq)\n",
        ),
    )
    for check in ("sinusoidal_square", "sinusoidal_rectangular"):
        assert explains(results[check], "mitades están al revés", "halves are swapped"), check
    for check in ("interpolate_vit", "interpolate_rectangular"):
        assert explains(results[check], "Filas y columnas", "Rows and columns look swapped"), check
    for check in ("rope_2d_interleaved", "rope_2d_half"):
        assert explains(results[check], "bloques están al revés", "blocks are swapped"), check
