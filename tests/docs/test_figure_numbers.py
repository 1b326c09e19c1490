"""Every number a figure's caption or alt text states, computed from the reference code or the
recorded results (the figures' own data are checked in the browser tests).

Each claim is the number as written (the same in both languages, or ``(es, en)``) and the value
it rounds; the test finds the number in the figure's text in each language and checks the value
rounds to it.
"""

from __future__ import annotations

import csv
import math
import sys

import pytest
from docs_pages import LANGS, ROOT

from minimodel.positional.alibi import alibi_bias, alibi_slopes
from minimodel.positional.relative_bias import swin_relative_index
from minimodel.positional.rope import rope_frequencies
from minimodel.positional.scaling import SCALINGS
from minimodel.positional.sinusoidal import sinusoidal_pe

sys.path.insert(0, str(ROOT / "docs_site"))
from figures import render  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def _rows(name: str) -> list[dict]:
    with (RESULTS / name).open(newline="") as handle:
        return list(csv.DictReader(handle))


def _default(encoding: str, length: int, column: str = "mean_loss") -> float:
    [row] = [r for r in _rows("compare_default.csv")
             if r["encoding"] == encoding and r["eval_length"] == str(length)]  # fmt: skip
    return float(row[column])


def _attention(direction: str, length: int, case: str) -> float:
    """Best time of ``case`` over fused causal attention, as 19_01_attention.txt records it."""
    current, table = None, {}
    for line in (RESULTS / "19_01_attention.txt").read_text().splitlines():
        if line.startswith("attention "):
            current = (line.split(",")[0].removeprefix("attention "), int(line.split("T=")[1]
                       .split()[0]))  # fmt: skip
        elif current and line[:1].isalpha() and not line.startswith("case"):
            name, best = line[:20].strip(), float(line[20:].split()[0])
            table[current, name] = best
    return table[(direction, length), case] / table[(direction, length), "causal (fused)"]


def _tokens_per_s(encoding: str) -> float:
    for line in (RESULTS / "19_01_training_by_encoding.txt").read_text().splitlines():
        if line.split()[:1] == [encoding]:
            return float(line.split()[3])
    raise KeyError(encoding)


YARN = SCALINGS["yarn"]
FIRST_WINDOW = [float(r["loss_0_128"]) for r in _rows("compare_default.csv")
                if r["eval_length"] == "1024"]  # fmt: skip
SLOPES8 = alibi_slopes(8)
TURNS = 128 * rope_frequencies(32, 10000.0).double() / (2 * math.pi)

# figure id -> [(written, value)]; a written number rounds the value to its decimals.
CLAIMS = {
    "17-01-dot": [("32", float(sinusoidal_pe(1, 64)[0] @ sinusoidal_pe(1, 64)[0]))],
    "17-03-pair-rotation": [("0.1", float(rope_frequencies(8, 10000.0)[1])),
                            ("1", float(rope_frequencies(8, 10000.0)[0]))],
    "17-03-angles": [("63", 2 * math.pi / float(rope_frequencies(64, 10000.0)[8]))],
    "17-04-bias": [("128", float(SLOPES8[0] / SLOPES8[7])),
                   ("3.5", -float(alibi_bias(8, 8, SLOPES8)[0, 7, 0])),
                   ("0.027", -float(alibi_bias(8, 8, SLOPES8)[7, 7, 0]))],
    "17-04-slopes": [("256", 1 / float(SLOPES8[-1]))],
    "17-05-swin-index": [("25", float(swin_relative_index(3, 3).max() + 1)),
                         ("12", float(swin_relative_index(3, 3)[0, 0]))],
    "18-01-loss-by-window": [("1.6", min(FIRST_WINDOW)), ("2.0", max(FIRST_WINDOW))],
    "18-02-temperature": [("0.771", 1 / YARN(32, 10000.0, factor=4.0, original_max_len=128)[1]
                           ** 2),
                          ("1.35", YARN(32, 10000.0, factor=32.0, original_max_len=128)[1]),
                          ("1.81", YARN(32, 10000.0, factor=32.0, original_max_len=128)[1] ** 2)],
    "18-02-yarn-ramp": [("20", float(TURNS[0]))],
    "19-01-throughput": [(("13 000", "13,000"), _tokens_per_s("t5"))],
    "19-01-attention-cost": [("1.58", _attention("forward + backward", 1024, "alibi bias")),
                             ("4.71", _attention("forward + backward", 1024, "t5 bias"))],
    "19-02-default": [("0.98", _default("alibi", 1024) / _default("alibi", 128)),
                      ("1.06", _default("t5", 1024) / _default("t5", 128)),
                      ("1.4", _default("rope", 1024) / _default("rope", 128)),
                      ("1.2", _default("none", 1024) / _default("none", 128))],
}  # fmt: skip


def _rounds_to(value: float, written: str) -> bool:
    digits = written.replace(" ", "").replace(",", "")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    step = 10.0**-decimals if decimals else (1000.0 if digits.endswith("000") else 1.0)
    return abs(value - float(digits)) <= step / 2 + 1e-9


@pytest.mark.parametrize("figure_id", sorted(CLAIMS))
def test_numbers_in_a_figure_text_are_computed(figure_id):
    figure = render.figures()[figure_id]
    for written, value in CLAIMS[figure_id]:
        for lang, literal in zip(LANGS, written if isinstance(written, tuple) else
                                 (written, written), strict=True):  # fmt: skip
            text = f"{figure.title(lang)} {figure.alt(lang)}"
            assert literal in text, f"{figure_id} ({lang}) does not say {literal}"
            assert _rounds_to(value, literal), f"{figure_id}: {literal} but computed {value:.6g}"


def test_the_slowest_pair_turns_less_than_a_hundredth_over_l0():
    assert "0.01" in render.figures()["18-02-yarn-ramp"].alt("en")
    assert TURNS[-1] < 0.01


def test_the_checker_rejects_a_wrong_number():
    assert _rounds_to(0.7714, "0.771") and not _rounds_to(0.7724, "0.771")
    assert _rounds_to(13045, "13 000") and not _rounds_to(13600, "13 000")
