"""Self-check of lab 17.06 (2D positions): a student's copy with a typical mistake gets its
explanation (reference and stubs: ``test_selfcheck_every_lab.py``). Mistakes in different functions
share one copy."""

from selfcheck_copies import diagnose


def explains(result, es: str, en: str) -> bool:
    return result.status == "fail" and es in result.detail_es and en in result.detail_en


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
