"""Every number of lesson 19.02 (experiments), checked against its source.

The lesson has three kinds of numbers, each checked against where it comes from:

- **Published results** (the ALiBi paper's table, the NoPE papers' figures) cannot be recomputed
  here: the test holds them as transcribed and checks what the page derives from them (the loss
  differences in nats, the orderings the prose states).
- **Formulas** (parameter count, tokens seen, NoPE's ``1/(i+1)``, the statistics): every numeric
  ``=``/``\\approx`` is evaluated, the statistics match ``minimodel.compare.mean_and_spread``, and
  the size of the model matches ``GPT``.
- **Measured results**: the raw ``results.csv`` of the page's commands is committed in
  ``benchmarks/results/`` (the page does not name it: students do not get it). The test checks
  that the commands on the page parse with the real CLI and describe those runs, that every cell
  of the results tables is recomputed from the CSV, and that each claim the prose makes about
  them (orderings, differences beyond the noise, spreads) holds in the data.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import math
import shlex
import statistics
from pathlib import Path

import pytest
from docs_pages import LANGS, ROOT, normalise_math, pages
from page_numbers import check_statement, statements

from minimodel.cli import SUBCOMMANDS
from minimodel.compare import mean_and_spread
from minimodel.encodings import COURSE as ENCODINGS
from minimodel.model import GPT, GPTConfig

LESSON = "19/02-experiments.md"
MEASURED = ROOT / "benchmarks" / "results"
TEXT_CSV = MEASURED / "19_02_text_results.csv"
COPY_CSV = MEASURED / "19_02_copy_results.csv"
DEFAULT_CSV = MEASURED / "compare_default.csv"

# Press, Smith and Lewis (2022), WikiText-103, trained at L = 1024: perplexity at each length.
PRESS = {
    "sinusoidal": [19.34, 51.09, 144.00, 284.88],
    "RoPE": [19.33, 31.17, 44.30, 64.91],
    "T5": [18.80, 18.34, 19.44, 25.79],
    "ALiBi": [18.66, 18.05, 17.95, 17.96],
}


# How each language words the points the tests check.
SHORTCUT = {"es": "«mira {} atrás»", "en": '"look {} back"'}
SLIDING = {"es": "ventanas deslizantes", "en": "sliding windows"}


@pytest.fixture(params=LANGS)
def page(request):
    return pages(LESSON)[request.param]


def read_csv(path: Path) -> list[dict]:
    rows = list(csv.DictReader(path.open()))
    for row in rows:
        for key, value in row.items():
            if key != "encoding":
                row[key] = float(value) if value else math.nan  # a bucket past this length
    return rows


def over_seeds(rows, encoding: str, length: int, column: str = "mean_loss") -> list[float]:
    """One column of ``encoding`` at ``length``, one value per seed."""
    return [r[column] for r in rows if r["encoding"] == encoding and r["eval_length"] == length]


def stats(rows, encoding: str, length: int, column: str = "mean_loss") -> tuple[float, float]:
    """Mean and sample standard deviation over seeds of one column."""
    values = over_seeds(rows, encoding, length, column)
    return statistics.mean(values), statistics.stdev(values)


def se(rows, encoding: str, length: int) -> tuple[float, float]:
    mean, s = stats(rows, encoding, length)
    n = len({r["seed"] for r in rows if r["encoding"] == encoding})
    return mean, s / math.sqrt(n)


def separated(rows, a: str, b: str, length: int) -> bool:
    (ma, ea), (mb, eb) = se(rows, a, length), se(rows, b, length)
    return abs(ma - mb) > 2 * math.sqrt(ea**2 + eb**2)


def cell(text: str) -> tuple[float, float]:
    """``2.334 ± 0.013`` -> (2.334, 0.013)."""
    mean, spread = (float(x) for x in text.replace("−", "-").split("±"))
    return mean, spread


def signed(text: str) -> float:
    return float(text.replace("−", "-").replace("+", ""))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="minimodel")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module_name, _) in SUBCOMMANDS.items():
        importlib.import_module(module_name).add_arguments(sub.add_parser(name))
    return parser


def command(page, anchor: str) -> argparse.Namespace:
    [line] = [body.strip() for info, body in page.part(anchor).code if info == "bash"]
    return _parser().parse_args(shlex.split(line)[1:])


# --- published results -------------------------------------------------------------------------


def test_press_table_as_transcribed(page):
    [table] = page.part("literature").tables
    assert [int(c) for c in table[0][1:]] == [1024, 2024, 4024, 8024]
    written = {row[0]: [float(c) for c in row[1:]] for row in table[1:]}
    assert written == PRESS
    first = [values[0] for values in PRESS.values()]
    assert max(first) - min(first) < 1, "within L all four are less than one point apart"
    at_8x = {name: values[-1] for name, values in PRESS.items()}
    assert at_8x["ALiBi"] < at_8x["T5"] < at_8x["RoPE"] < at_8x["sinusoidal"]
    assert PRESS["T5"][2] < 1.05 * PRESS["T5"][0], "T5 holds up to 4x"
    assert PRESS["ALiBi"][-1] <= PRESS["ALiBi"][0], "ALiBi stays flat"


def test_the_summary_orders_the_encodings_as_the_table_does(page):
    """At 8024, T5 (25.79) is well above ALiBi (17.96); up to 4024 the two are close."""
    summary = page.section("summary")
    assert "ALiBi < T5 (" in summary and "$4\\times$) < RoPE < sinusoidal" in summary
    at_8x = {name: values[-1] for name, values in PRESS.items()}
    assert at_8x["ALiBi"] < at_8x["T5"] < at_8x["RoPE"] < at_8x["sinusoidal"]
    assert max(abs(t5 - alibi) for t5, alibi in zip(PRESS["T5"], PRESS["ALiBi"], strict=True)
               if t5 != PRESS["T5"][3]) < 1.5
    assert PRESS["T5"][3] - PRESS["ALiBi"][3] > 5


def test_the_1_3b_figures_name_their_data_set(page):
    """Haviv et al. measured 13.10 against 13.05 with 1.3B-parameter models on the Pile, not on
    WikiText-103."""
    nope = page.paragraph("literature", "13.10")
    assert "Pile" in nope.split("13.10")[0].split("1.3")[1]


def test_perplexity_ratios_in_nats(page):
    math_text = " ".join(page.part("literature").math)
    assert "\\ln \\frac{284.88}{19.34} \\approx 2.69" in math_text
    assert "\\ln(64.91/19.33) \\approx 1.21" in math_text
    assert round(math.log(284.88 / 19.34), 2) == 2.69
    assert round(math.log(64.91 / 19.33), 2) == 1.21


def test_each_warning_cites_its_own_source(page):
    # The sliding-window analysis is the ALiBi paper's (Press et al., appendix B); the 1B-scale
    # code models that break past about 1.6 times the training length are Kazemnejad et al.'s.
    # Neither is Haviv et al.'s.
    warnings = page.paragraph("literature", "$1.6$")
    sliding, code_models = warnings.split("$1.6$")[0].split("#ref-kazemnejad-2023")
    assert "#ref-press-2022" in sliding and "#ref-haviv-2022" not in warnings
    assert "(#ref-kazemnejad-2023)" in warnings and "#ref-press-2022" not in code_models
    assert SLIDING[page.lang] in sliding


def test_published_figures_in_the_prose(page):
    text = page.section("literature")
    for number in ("247", "107", "20.97", "20.42", "19.71", "13.10", "13.05"):
        assert number in text, number
    assert "$1.6$" in text


# --- formulas ----------------------------------------------------------------------------------


def test_numeric_formulas(page):
    checked = sum(check_statement(s) for s in statements(page.math))
    assert checked >= 6, f"only {checked} numeric relations checked"


def test_model_size_and_tokens(page):
    args = command(page, "protocol")
    config = GPTConfig(
        vocab_size=98, block_size=args.block_size, n_layer=args.layers, n_embd=args.width
    )
    counts = {
        name: GPT(GPTConfig(**{**config.__dict__, "positional": name})).num_parameters()
        for name in ENCODINGS
    }
    assert counts["none"] == 104_896
    assert counts["learned"] - counts["none"] == 64 * 64 == 4096
    assert args.steps * args.batch_size * args.block_size == 819_200
    text = normalise_math(page.section("protocol"))
    assert "98 \\cdot 64 + 2\\,(12 \\cdot 64^2 + 2 \\cdot 64) + 64 = 104\\,896" in text
    assert "400 \\cdot 32 \\cdot 64 = 819\\,200" in text


def test_nope_resolution(page):
    math_text = page.part("nope").math
    assert "\\frac{1}{i + 1} - \\frac{1}{i + 2} = \\frac{1}{(i + 1)(i + 2)}" in math_text
    for i in range(0, 200, 7):
        assert math.isclose(1 / (i + 1) - 1 / (i + 2), 1 / ((i + 1) * (i + 2)))
    assert "1/(64 \\cdot 65) \\approx 2.4 \\cdot 10^{-4}" in math_text
    assert round(1 / (64 * 65), 5) == 0.00024


def test_statistics_formulas_match_compare(page):
    math_text = " ".join(page.part("honest-reporting").math)
    assert "s = \\sqrt{\\frac{1}{n - 1}" in math_text and "\\mathrm{se} = \\frac{s}{\\sqrt{n}}" in (
        math_text
    )
    assert "|\\bar x_a - \\bar x_b| > 2\\sqrt{\\mathrm{se}_a^2 + \\mathrm{se}_b^2}" in math_text
    rows = read_csv(TEXT_CSV)
    for name in ENCODINGS:
        mean, spread = mean_and_spread(rows, name, 512)
        assert math.isclose(mean, stats(rows, name, 512)[0], rel_tol=1e-6)
        assert math.isclose(spread, stats(rows, name, 512)[1], rel_tol=1e-5), "s uses n - 1"
    # "with n = 3 a t test would ask for a factor larger than 2": t(0.975, 4) = 2.776.
    assert 2.77 < 2.7764 < 2.78


# --- measured results --------------------------------------------------------------------------


def test_text_command_describes_the_committed_runs(page):
    args = command(page, "protocol")
    rows = read_csv(TEXT_CSV)
    assert args.command == "compare" and args.data == "stdlib"
    assert sorted({int(r["seed"]) for r in rows}) == sorted(args.seeds) == [0, 1, 2, 3, 4]
    assert {r["encoding"] for r in rows} == set(args.encodings) == set(ENCODINGS)
    assert {int(r["eval_length"]) for r in rows} == {args.block_size * f for f in args.factors}
    assert {int(r["train_steps"]) for r in rows} == {args.steps}
    assert args.sequences == 16, "16 evaluation sequences"
    assert len(rows) == 6 * 5 * 4


def test_text_tables_come_from_the_csv(page):
    rows = read_csv(TEXT_CSV)
    by_length, by_bucket = page.part("results").tables
    assert by_length[0][1:5] == ["64 (1×)", "128 (2×)", "256 (4×)", "512 (8×)"]
    for row in by_length[1:]:
        name = row[0].strip("`")
        for length, text in zip((64, 128, 256, 512), row[1:5], strict=True):
            mean, spread = cell(text)
            expected = stats(rows, name, length)
            assert abs(mean - expected[0]) <= 5e-4 + 1e-9, (name, length)
            assert abs(spread - expected[1]) <= 5e-4 + 1e-9, (name, length)
        rise = stats(rows, name, 512)[0] - stats(rows, name, 64)[0]
        assert abs(signed(row[5]) - rise) <= 5e-4 + 1e-9, name
    buckets = ("loss_0_64", "loss_64_128", "loss_128_256", "loss_256_512")
    for row in by_bucket[1:]:
        name = row[0].strip("`")
        for column, text in zip(buckets, row[1:5], strict=True):
            mean, spread = cell(text)
            expected = stats(rows, name, 512, column)
            assert abs(mean - expected[0]) <= 5e-4 + 1e-9 and abs(spread - expected[1]) <= 5e-4
        rise = stats(rows, name, 512, buckets[-1])[0] - stats(rows, name, 512, buckets[0])[0]
        assert abs(signed(row[5]) - rise) <= 5e-4 + 1e-9, name


def test_text_claims_hold_in_the_data(page):
    rows = read_csv(TEXT_CSV)

    def mean(name: str, length: int, column: str = "mean_loss") -> float:
        return stats(rows, name, length, column)[0]

    # Past L0, Press et al.'s ordering, each step beyond the noise.
    order = ["alibi", "t5", "rope", "sinusoidal"]
    for a, b in zip(order, order[1:], strict=False):
        assert mean(a, 512) < mean(b, 512) and separated(rows, a, b, 512), (a, b)
    # ALiBi flat (mean drops, last bucket barely rises); RoPE holds at 2x; sinusoidal rises at 2x.
    assert mean("alibi", 512) < mean("alibi", 64)
    assert mean("alibi", 512, "loss_256_512") - mean("alibi", 512, "loss_0_64") < 0.05
    # ... and the drop comes from the windows, not from the length: the first 64 positions of the
    # 8x windows (computed exactly as at 1x by a causal model) are already lower, for everyone.
    text = " ".join(page.section("results").split())
    first = {e: mean(e, 64) - mean(e, 512, "loss_0_64") for e in ENCODINGS}
    assert f"${first['alibi']:.3f}$ nats" in text
    assert f"${min(first.values()):.3f}$" in text and f"${max(first.values()):.3f}$" in text
    assert min(first.values()) > mean("alibi", 64) - mean("alibi", 512), "larger than the drop"
    above = mean("alibi", 512) - mean("alibi", 512, "loss_0_64")
    assert above > 0 and f"${above:.3f}$" in text
    assert mean("rope", 128) <= mean("rope", 64) < mean("rope", 256)
    assert mean("sinusoidal", 128) - mean("sinusoidal", 64) > 0.1
    learned = {c: mean("learned", 512, c) for c in ("loss_64_128", "loss_128_256", "loss_256_512")}
    assert max(learned, key=learned.get) == "loss_64_128", "learned: worst bucket [64, 128)"
    # Within L0: RoPE best; ALiBi and T5 a few hundredths behind and not separable.
    at_1x = {name: mean(name, 64) for name in ENCODINGS}
    assert min(at_1x, key=at_1x.get) == "rope"
    assert (
        0.01 < at_1x["alibi"] - at_1x["rope"] < 0.05 and 0.01 < at_1x["t5"] - at_1x["rope"] < 0.05
    )
    assert not separated(rows, "alibi", "t5", 64)
    assert round(abs(at_1x["alibi"] - at_1x["t5"]), 3) == 0.006
    behind = [at_1x[name] - at_1x["rope"] for name in ("learned", "none", "sinusoidal")]
    assert round(min(behind), 2) == 0.18 and round(max(behind), 2) == 0.28
    assert max(at_1x, key=at_1x.get) == "sinusoidal"
    for a in ENCODINGS:  # every other pair at 1x exceeds the noise
        for b in ENCODINGS:
            if a < b and {a, b} != {"alibi", "t5"}:
                assert separated(rows, a, b, 64), (a, b)
    # NoPE: mean +0.113, last bucket +0.274, ties with RoPE at 8x.
    assert round(mean("none", 512) - mean("none", 64), 3) == 0.113
    assert mean("none", 512) - mean("none", 64) < mean("rope", 512) - mean("rope", 64)
    assert not separated(rows, "none", "rope", 512)
    assert round(abs(mean("none", 512) - mean("rope", 512)), 3) == 0.005
    # The spread: at most 0.025 at L0; sinusoidal at 8x more than twice any other.
    assert max(stats(rows, name, 64)[1] for name in ENCODINGS) <= 0.0255
    spreads = {name: stats(rows, name, 512)[1] for name in ENCODINGS}
    assert all(spreads["sinusoidal"] > 2 * s for n, s in spreads.items() if n != "sinusoidal")
    single = [
        r["mean_loss"] for r in rows if r["encoding"] == "sinusoidal" and r["eval_length"] == 512
    ]
    assert min(single) >= 2.85 and max(single) < 3.35, "between 2.9 and 3.3"
    assert round(mean("sinusoidal", 512) - mean("sinusoidal", 64), 3) == 0.667
    text = page.section("results")
    for number in ("$0.667$", "$2.69$", "$0.006$", "$0.18$", "$0.28$", "$0.113$", "$0.274$"):
        assert number in text, number
    for number in ("$0.005$", "$0.025$", "$0.158$", "$2.9$", "$3.3$"):
        assert number in text, number


def test_the_default_comparison_keeps_the_ordering_the_page_states(page):
    """The paragraph before figure 19-02-default: the larger default run, measured as the first
    table's last column (8x - 1x), falls for ALiBi and rises for the rest in the same order."""
    rows, small = read_csv(DEFAULT_CSV), read_csv(TEXT_CSV)
    text = page.paragraph("results", "1200")
    none = next(r for r in rows if r["encoding"] == "none")
    larger = GPTConfig(vocab_size=98, block_size=128, n_layer=4, n_embd=128, positional="none")
    assert none["params"] == GPT(larger).num_parameters(), "4 layers, width 128"
    assert {r["train_steps"] for r in rows} == {1200} and {r["seed"] for r in rows} == {0}
    assert min(r["eval_length"] for r in rows) == 128 and "$L_0 = 128$" in text
    assert "4" in text and "128" in text and "1200" in text

    def rises(data, trained):
        return {e: statistics.mean(over_seeds(data, e, 8 * trained))
                - statistics.mean(over_seeds(data, e, trained)) for e in ENCODINGS}  # fmt: skip

    default, here = rises(rows, 128), rises(small, 64)
    assert sorted(default, key=default.get) == sorted(here, key=here.get)
    assert sorted(default, key=default.get) == ["alibi", "t5", "none", "rope", "learned",
                                                "sinusoidal"]  # the order the page names
    assert default["alibi"] < 0 < min(v for e, v in default.items() if e != "alibi")
    assert f"${-default['alibi']:.3f}$" in text


def test_copy_command_describes_the_committed_runs(page):
    args = command(page, "copy-task")
    rows = read_csv(COPY_CSV)
    assert args.data == "copy" and args.steps == 1500 and args.sequences == 32
    assert sorted({int(r["seed"]) for r in rows}) == sorted(args.seeds) == [0, 1, 2]
    assert [e for e in ENCODINGS if e in {r["encoding"] for r in rows}] == args.encodings
    assert {int(r["eval_length"]) for r in rows} == {args.block_size * f for f in args.factors}
    assert {int(r["train_steps"]) for r in rows} == {args.steps}


def test_copy_distances_and_chance(page):
    import torch

    from minimodel.data.tasks import N_SYMBOLS, CopyTask

    task = CopyTask()
    text = page.section("copy-task")
    for length, distance in ((64, 32), (128, 64)):
        x, y = task.batch("val", 64, length, torch.Generator().manual_seed(0))
        answers = (y >= 0).nonzero().tolist()
        # The query at `position` predicts y[position]; the key holding it is `distance` back
        # (the copy itself is distance + 1 positions after the original).
        assert all(y[r, p] == x[r, p - distance] for r, p in answers)
        one_more = sum(bool(y[r, p] == x[r, p - distance - 1]) for r, p in answers)
        assert one_more < 0.05 * len(answers), "n + 1 back only matches by chance"
        assert f"${distance}$" in text and distance == length // 2
        assert max(p for _, p in answers) - distance < length, "query and key in the sequence"
        if length == 64:  # the shortcut a model trained at 64 can learn
            assert SHORTCUT[page.lang].format(distance) in text
            assert f"${distance + 1}$" not in text, "n + 1 is where the copy sits, not the key"
    assert "$63$" in text, "in training, query and key are at most L0 - 1 = 63 apart"
    assert N_SYMBOLS == 64 and "1/64 \\approx 0.016" in page.part("copy-task").math


def test_copy_table_and_claims(page):
    rows = read_csv(COPY_CSV)
    [table] = page.part("copy-task").tables
    assert table[0][1:] == ["64 (1×)", "128 (2×)", "256 (4×)"]
    for row in table[1:]:
        name = row[0].strip("`")
        for length, text in zip((64, 128, 256), row[1:], strict=True):
            mean, spread = cell(text)
            expected = stats(rows, name, length, "accuracy")
            assert abs(mean - expected[0]) <= 5e-4 + 1e-9 and abs(spread - expected[1]) <= 5e-4

    def values(name: str, length: int) -> list[float]:
        return [r["accuracy"] for r in rows if r["encoding"] == name and r["eval_length"] == length]

    assert values("rope", 64) == values("t5", 64) == [1.0, 1.0, 1.0], "no single mistake"
    assert round(statistics.mean(values("none", 64)), 3) == 0.968
    assert round(min(values("alibi", 64)), 3) == 0.745
    at_2x = {name: statistics.mean(values(name, 128)) for name in ("none", "rope", "alibi", "t5")}
    assert max(at_2x, key=at_2x.get) == "alibi" and round(at_2x["alibi"], 3) == 0.122
    assert round(max(values("alibi", 128)), 3) == 0.208
    assert all(v < 0.05 for name, v in at_2x.items() if name != "alibi"), "the rest near chance"
    assert abs(at_2x["rope"] - 1 / 64) < 0.002, "RoPE at chance"
    text_rows = read_csv(TEXT_CSV)
    assert stats(text_rows, "rope", 128)[0] < stats(text_rows, "rope", 64)[0], "text: 2x better"
    assert (
        round(
            107e6
            / GPT(
                GPTConfig(vocab_size=98, block_size=64, n_layer=2, n_embd=64, positional="none")
            ).num_parameters(),
            -3,
        )
        == 1000
    )
    for number in ("$0.968$", "$0.745$", "$0.122$", "$0.208$"):
        assert number in page.section("copy-task"), number
