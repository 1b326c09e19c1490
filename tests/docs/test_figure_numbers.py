"""Every number a figure's title, caption or alt text states, computed from the reference code or
the recorded results (the figures' own data are checked in the browser tests), and the colour of
each encoding, the same in every figure.

Each claim is the number as written (the same in both languages, or ``(es, en)``) and the value
it rounds; the test finds the number in the figure's text in each language and checks the value
rounds to it. A number that bounds the data ("above 3", "before p = 50") is checked on its own.
"""

from __future__ import annotations

import math
import re
import statistics
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from docs_pages import LANGS, ROOT
from matplotlib.figure import Figure

from minimodel.compare import colour, mean_and_spread
from minimodel.encodings import COURSE as ENCODINGS
from minimodel.positional.alibi import alibi_bias, alibi_slopes
from minimodel.positional.cache_positions import causal_mask_after_cache, relative_positions
from minimodel.positional.relative_bias import swin_relative_index
from minimodel.positional.rope import rope_frequencies
from minimodel.positional.scaling import SCALINGS, yarn_correction_range
from minimodel.positional.sinusoidal import sinusoidal_pe

sys.path.insert(0, str(ROOT / "docs_site"))
from figures import render  # noqa: E402
from figures.core import text_for  # noqa: E402
from figures.lesson_17_01 import _frequencies  # noqa: E402
from figures.lesson_18_02 import (  # noqa: E402
    L0,
    PHI3_DIM,
    PHI3_L0,
    PHI3_SCALE,
    SCALE,
    phi3_factors,
    ratios,
)
from figures.lesson_18_03 import CACHE, CHUNK  # noqa: E402
from figures.records import attention_tables, compare_rows, training_table  # noqa: E402

DEFAULT = compare_rows("compare_default.csv")
TEXT = compare_rows("19_02_text_results.csv")
COPY = compare_rows("19_02_copy_results.csv")
SPEEDS = training_table()
ATTENTION = attention_tables()


def _default(encoding: str, length: int) -> dict:
    [row] = [r for r in DEFAULT if r["encoding"] == encoding and r["eval_length"] == length]
    return row


def _loss_rise(encoding: str) -> float:
    """Mean loss at 8 × minus mean loss at 1 × (trained at 128), in nats."""
    return _default(encoding, 1024)["mean_loss"] - _default(encoding, 128)["mean_loss"]


def _windows(encoding: str) -> list[float]:
    """Loss per window of positions at 1024 tokens."""
    row = _default(encoding, 1024)
    return [value for key, value in row.items() if key.startswith("loss_")]


def _attention(direction: str, length: int, case: str) -> float:
    """Best time of ``case`` over fused causal attention."""
    table = ATTENTION[direction, length]
    return table[case] / table["causal (fused)"]


def _accuracy(encoding: str, length: int) -> float:
    """Mean answer accuracy over the seeds of the copy task."""
    return statistics.mean(r["accuracy"] for r in COPY
                           if r["encoding"] == encoding and r["eval_length"] == length)  # fmt: skip


def _dots(base: float) -> np.ndarray:
    """PE(0)·PE(p) for p < 256 (d = 64), as 17-01-dot draws it."""
    pe = sinusoidal_pe(256, 64, base)
    return pe @ pe[0]


def _peaks(curve: np.ndarray) -> np.ndarray:
    inner = curve[1:-1]
    return inner[(inner > curve[:-2]) & (inner > curve[2:])]


YARN = SCALINGS["yarn"]
PHI3_RANGE = yarn_correction_range(PHI3_DIM, 10000.0, PHI3_L0)
FIRST_WINDOW = [_windows(e)[0] for e in ENCODINGS]
FLAT = _windows("alibi") + _windows("t5")
SLOPES8 = alibi_slopes(8)
TURNS = 128 * rope_frequencies(32, 10000.0).double() / (2 * math.pi)
TURNS_64 = 64 * rope_frequencies(64, 10000.0).double() / (2 * math.pi)
WAVELENGTHS = 2 * math.pi / _frequencies(64, 10000.0)
DOTS, DOTS_100 = _dots(10000.0), _dots(100.0)
FIRST_ZERO_100 = int(np.argmax(DOTS_100 <= 0))
CHEAP = [v for e, v in ((e, SPEEDS[e]["tokens_per_s"]) for e in SPEEDS) if e != "t5"]
SHORT_BIAS = [_attention("forward", 256, case) for case in ("alibi bias", "t5 bias")]
TEXT_AT_64 = [mean_and_spread(TEXT, e, 64)[0] for e in dict.fromkeys(r["encoding"] for r in TEXT)]
COPY_ENCODINGS = list(dict.fromkeys(r["encoding"] for r in COPY))

# figure id -> [(written, value)]; a written number rounds the value to its decimals.
CLAIMS = {
    "17-01-dot": [("32", float(sinusoidal_pe(1, 64)[0] @ sinusoidal_pe(1, 64)[0])),
                  ("5", float(DOTS.min())), ("24", float(_peaks(DOTS).max())),
                  ("−10", float(DOTS_100.min())), ("3", float(DOTS_100[FIRST_ZERO_100:].max()))],
    "17-01-wavelengths": [("6", float(WAVELENGTHS[0]))],
    "17-03-pair-rotation": [("0.1", float(rope_frequencies(8, 10000.0)[1])),
                            ("1", float(rope_frequencies(8, 10000.0)[0]))],
    "17-03-angles": [("63", 2 * math.pi / float(rope_frequencies(64, 10000.0)[8])),
                     ("10", float(TURNS_64[0])), ("3", float(TURNS_64[4]))],
    "17-04-bias": [("128", float(SLOPES8[0] / SLOPES8[7])),
                   ("3.5", -float(alibi_bias(8, 8, SLOPES8)[0, 7, 0])),
                   ("0.027", -float(alibi_bias(8, 8, SLOPES8)[7, 7, 0]))],
    "17-04-slopes": [("1/2", float(SLOPES8[0])), ("1/256", float(SLOPES8[-1]))],
    "17-05-swin-index": [("25", float(swin_relative_index(3, 3).max() + 1)),
                         ("24", float(swin_relative_index(3, 3).max())),
                         ("12", float(swin_relative_index(3, 3)[0, 0]))],
    "18-01-loss-by-window": [("1.6", min(FIRST_WINDOW)), ("2.0", max(FIRST_WINDOW)),
                             ("1.6", min(FLAT)), ("1.9", max(FLAT))],
    "18-02-temperature": [("0.771", 1 / YARN(32, 10000.0, factor=4.0, original_max_len=128)[1]
                           ** 2),
                          ("1.35", YARN(32, 10000.0, factor=32.0, original_max_len=128)[1]),
                          ("1.81", YARN(32, 10000.0, factor=32.0, original_max_len=128)[1] ** 2)],
    "18-02-yarn-ramp": [("20", float(TURNS[0]))],
    "18-02-longrope": [("48", PHI3_DIM / 2), ("4096", PHI3_L0), ("32", PHI3_SCALE),
                       ("15", PHI3_RANGE[0]), ("34", PHI3_RANGE[1])],
    "19-01-throughput": [(("13 000", "13,000"), SPEEDS["t5"]["tokens_per_s"]),
                         (("17 700", "17,700"), min(CHEAP)), (("19 200", "19,200"), max(CHEAP))],
    "19-01-attention-cost": [("1.58", _attention("forward + backward", 1024, "alibi bias")),
                             ("4.71", _attention("forward + backward", 1024, "t5 bias")),
                             ("1.1", min(SHORT_BIAS)), ("1.2", max(SHORT_BIAS))],
    "19-02-default": [("−0.03", _loss_rise("alibi")), ("0.10", _loss_rise("t5")),
                      ("0.68", _loss_rise("rope")), ("0.37", _loss_rise("none")),
                      ("1.24", _loss_rise("sinusoidal")), ("1.17", _loss_rise("learned"))],
    "19-02-text": [("2.1", min(TEXT_AT_64)), ("2.4", max(TEXT_AT_64))],
}  # fmt: skip


def _rounds_to(value: float, written: str) -> bool:
    """Whether ``written`` ("0.771", "−10", "13 000", "1/256") is ``value`` rounded as written;
    a number with a thousands separator is rounded to its trailing zeros."""
    digits = written.replace(" ", "").replace(",", "").replace("−", "-")
    if "/" in digits:
        numerator, denominator = digits.split("/")
        return math.isclose(value, float(numerator) / float(denominator), rel_tol=1e-6)
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    grouped = " " in written or "," in written
    zeros = len(digits) - len(digits.rstrip("0")) if grouped else 0
    step = 10.0**-decimals if decimals else 10.0**zeros
    return abs(value - float(digits)) <= step / 2 + 1e-9


def _text(figure_id: str, lang: str) -> str:
    figure = render.figures()[figure_id]
    return f"{figure.title(lang)} {figure.alt(lang)}"


@pytest.mark.parametrize("figure_id", sorted(CLAIMS))
def test_numbers_in_a_figure_text_are_computed(figure_id):
    for written, value in CLAIMS[figure_id]:
        for lang, literal in zip(LANGS, written if isinstance(written, tuple) else
                                 (written, written), strict=True):  # fmt: skip
            assert literal in _text(figure_id, lang), f"{figure_id} ({lang}) does not say {literal}"
            assert _rounds_to(value, literal), f"{figure_id}: {literal} but computed {value:.6g}"


def _says(figure_id: str, es: str, en: str) -> None:
    for lang, literal in zip(LANGS, (es, en), strict=True):
        assert literal in _text(figure_id, lang), f"{figure_id} ({lang}) does not say {literal}"


def test_bounds_a_figure_text_states_hold():
    _says("17-01-dot", "antes de p = 50", "before p = 50")
    assert FIRST_ZERO_100 < 50
    _says("17-01-wavelengths", "decenas de miles", "tens of thousands")
    assert 10_000 <= WAVELENGTHS[-1] < 100_000
    _says("18-01-loss-by-window", "por encima de 3", "above 3")
    assert min(_windows("sinusoidal")[1:] + _windows("learned")[1:]) > 3
    _says("18-01-loss-by-window", "ALiBi sigue plana, y T5 solo sube en el último tramo, más allá "
          "de 4 ×", "ALiBi stays flat, and T5 rises only in the last window, past 4 ×")
    alibi, t5 = _windows("alibi"), _windows("t5")
    assert max(alibi) - min(alibi) < 0.06 and max(t5[:-1]) - min(t5[:-1]) < 0.06
    assert t5[-1] - max(t5[:-1]) > 0.25  # [512, 1024): 1.91 against at most 1.63 before
    _says("18-02-yarn-ramp", "menos de 0.01", "below 0.01")
    assert TURNS[-1] < 0.01
    _says("19-02-copy", "por debajo de 0.15", "below 0.15")
    assert max(_accuracy(e, L) for e in COPY_ENCODINGS for L in (128, 256)) < 0.15
    _says("19-02-copy", "cerca de 1 (ALiBi algo por debajo)", "close to 1 (ALiBi somewhat below)")
    others = [_accuracy(e, 64) for e in COPY_ENCODINGS if e != "alibi"]
    assert min(others) >= 0.95 > _accuracy("alibi", 64)


def test_scaled_frequency_ratios_run_from_1_to_1_over_s():
    """18.02: PI divides every pair by s = 4; the others keep pair 0 and divide the last by s."""
    _says("18-02-ratios", "entre 1/4 y 1", "between 1/4 and 1")
    assert np.allclose(ratios("linear", SCALE, L0), 1 / SCALE)
    for method in ("ntk", "yarn", "llama3"):
        found = ratios(method, SCALE, L0)
        assert np.isclose(found[0], 1) and np.isclose(found[-1], 1 / SCALE, rtol=1e-6), method
    _says("18-02-ratios", "(YaRN, solo la primera)", "(YaRN only the first)")
    kept = {m: int(np.isclose(ratios(m, SCALE, L0), 1).sum()) for m in ("yarn", "llama3")}
    assert kept["yarn"] == 1 < kept["llama3"], kept  # YaRN blends pairs 1-5 at the lab's model


def test_per_pair_factors_run_from_1_to_s_around_yarns_ramp():
    """18.02: for the Phi-3-mini shape, PI is s everywhere, NTK rises geometrically from 1 to s,
    YaRN's factor is 1 up to pair 15 (its ramp's start) and s from pair 34 (its end)."""
    _says("18-02-longrope", "entre 1 y 32", "between 1 and 32")
    lo, hi = (int(edge) for edge in PHI3_RANGE)
    assert np.allclose(phi3_factors("linear"), PHI3_SCALE, rtol=1e-6)
    ntk = phi3_factors("ntk")
    assert np.isclose(ntk[0], 1) and np.isclose(ntk[-1], PHI3_SCALE, rtol=1e-5)
    assert np.allclose(np.diff(np.log(ntk)), np.log(ntk[1]), rtol=1e-4)
    yarn = phi3_factors("yarn")
    assert np.allclose(yarn[: lo + 1], 1) and np.allclose(yarn[hi:], PHI3_SCALE, rtol=1e-6)
    assert np.all(np.diff(yarn[lo : hi + 1]) > 0)


def test_the_causal_mask_counts_as_its_figure_states():
    """17.00: the drawn curves are 1/(t+1) with the causal mask and 1/T without it."""
    _says("17-00-causal-count", "1/(t+1)", "1/(t+1)")
    fig = Figure()
    render.figures()["17-00-causal-count"].make(fig, lambda es, en: en)
    counted, flat = (line.get_ydata() for line in fig.axes[0].lines)
    t = np.arange(len(counted))
    assert np.allclose(counted, 1 / (t + 1)) and np.allclose(flat, 1 / len(flat))


def test_the_cached_chunk_sees_the_keys_its_figures_state():
    """18.03: the relative positions each query's row lists, and how many keys each query sees
    with the right mask and with SDPA's ``is_causal=True`` (run here, not rewritten)."""
    allowed = causal_mask_after_cache(CACHE, CHUNK) == 0
    for row, seen in zip(relative_positions(CACHE, CHUNK).tolist(), allowed, strict=True):
        listed = ", ".join(str(v).replace("-", "−") for v, ok in zip(row, seen, strict=True) if ok)
        _says("18-03-positions", listed, listed)
    query, key = torch.zeros(1, CHUNK, 1), torch.zeros(1, CACHE + CHUNK, 1)
    value = torch.eye(CACHE + CHUNK)[None]  # row i of the output: the weight of each key
    attended = F.scaled_dot_product_attention(query, key, value, is_causal=True)[0]
    right, top_left = allowed.sum(1).tolist(), (attended > 0).sum(1).tolist()
    assert (right, top_left) == ([4, 5], [1, 2])
    _says("18-03-masks", "la primera consulta ve 4 claves y la segunda las 5",
          "the first query sees 4 keys and the second all 5")  # fmt: skip
    _says("18-03-masks", "la primera consulta ve solo 1 clave y la segunda 2",
          "the first query sees only 1 key and the second 2")  # fmt: skip


def test_the_checker_rejects_a_wrong_number():
    assert _rounds_to(0.7714, "0.771") and not _rounds_to(0.7724, "0.771")
    assert _rounds_to(13045, "13 000") and not _rounds_to(13600, "13 000")
    assert _rounds_to(17652, "17,700") and not _rounds_to(17640, "17,700")
    assert _rounds_to(-9.74, "−10") and not _rounds_to(-9.4, "−10")
    assert _rounds_to(1 / 256, "1/256") and not _rounds_to(1 / 128, "1/256")


LEGENDS = ("18-01-loss-by-window", "18-01-loss-by-length", "19-02-text", "19-02-copy")
BARS = ("19-01-throughput", "19-02-default")


@pytest.mark.parametrize("figure_id", LEGENDS + BARS)
def test_every_figure_draws_an_encoding_in_its_own_colour(figure_id):
    from matplotlib.colors import to_hex

    figure = render.figures()[figure_id]
    fig = Figure()
    figure.make(fig, lambda es, en: en)
    ax = fig.axes[0]
    if figure_id in BARS:
        drawn = {label.get_text(): to_hex(bar.get_facecolor())
                 for label, bar in zip(ax.get_yticklabels(), ax.patches, strict=True)}  # fmt: skip
    else:
        handles, labels = ax.get_legend_handles_labels()
        drawn = {label: to_hex(handle[0].get_color() if isinstance(handle, tuple)  # error bars
                               else handle.get_edgecolor())  # steps
                 for handle, label in zip(handles, labels, strict=True)}  # fmt: skip
    assert drawn and drawn == {e: colour(e) for e in drawn}


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_attention_cost_legend_speaks_the_page_s_language_in_the_encodings_colours(lang):
    from matplotlib.colors import to_hex

    fig = Figure()
    render.figures()["19-01-attention-cost"].make(fig, text_for(lang))
    handles, labels = fig.axes[0].get_legend_handles_labels()
    expected = {"es": {"causal fusionada": "none", "sesgo de ALiBi": "alibi", "sesgo de T5": "t5"},
                "en": {"fused causal": "none", "ALiBi bias": "alibi", "T5 bias": "t5"}}[lang]
    assert labels == list(expected)
    assert [to_hex(h.patches[0].get_facecolor()) for h in handles] == \
        [colour(e) for e in expected.values()]


def test_a_negative_bar_s_label_does_not_touch_its_tick_label():
    """19-02-default: ALiBi's −0.031 was drawn over the tick "alibi" and read "alibi0.031"."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = Figure(figsize=render.figures()["19-02-default"].size, layout="constrained")
    render.figures()["19-02-default"].make(fig, text_for("en"))
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    ax = fig.axes[0]
    ticks = [label.get_window_extent(renderer) for label in ax.get_yticklabels()]
    values = [text for text in ax.texts if re.fullmatch(r"[+−-]\d\.\d{3}", text.get_text())]
    assert len(values) == len(ticks) and any(v.get_text()[0] in "−-" for v in values)
    for value in values:
        box = value.get_window_extent(renderer)
        assert not any(box.overlaps(tick) for tick in ticks), value.get_text()
