"""The recorded run of the default ``minimodel compare`` shows the literature's ordering.

``benchmarks/results/compare_default.csv`` is the ``results.csv`` of ``minimodel compare`` with
every default (six encodings, ``DEFAULT_STEPS`` steps, trained at ``block_size``, evaluated at 1x,
2x, 4x and 8x). Training on the CPU is deterministic, so the file is what the command writes; this
test checks that it is that run and that it says what the course claims about it.
"""

import csv
from pathlib import Path

import pytest

from minimodel.compare import DEFAULT_STEPS
from minimodel.encodings import COURSE as ENCODINGS
from minimodel.evaluate import FACTORS
from minimodel.model import GPTConfig

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
T = GPTConfig().block_size


@pytest.fixture(scope="module")
def loss():
    """``{encoding: {evaluation length: mean loss}}``."""
    rows = list(csv.DictReader((RESULTS / "compare_default.csv").open()))
    assert {int(r["train_steps"]) for r in rows} == {DEFAULT_STEPS}
    assert {int(r["seed"]) for r in rows} == {0}
    table = {}
    for r in rows:
        table.setdefault(r["encoding"], {})[int(r["eval_length"])] = float(r["mean_loss"])
    assert list(table) == list(ENCODINGS)
    assert all(sorted(by_length) == [f * T for f in FACTORS] for by_length in table.values())
    return table


def ratio(loss, encoding, factor):
    return loss[encoding][factor * T] / loss[encoding][T]


def test_the_printed_table_is_the_csv(loss):
    printed = (RESULTS / "compare_default.txt").read_text().splitlines()
    for encoding, by_length in loss.items():
        [line] = [row for row in printed if row.split()[:1] == [encoding]]
        printed_loss = [float(cell.split("±")[0]) for cell in line.split()[1::2]]
        # the CSV keeps 4 decimals and the table 3, both rounded from the same value
        expected = [by_length[f * T] for f in FACTORS]
        assert printed_loss == pytest.approx(expected, abs=0.00055), encoding


def test_bias_encodings_stay_nearly_flat_to_8x(loss):
    assert max(ratio(loss, "alibi", f) for f in FACTORS) < 1.05
    assert max(ratio(loss, "t5", f) for f in FACTORS) < 1.10


def test_absolute_encodings_break_down_past_1x(loss):
    for encoding in ("sinusoidal", "learned"):
        assert ratio(loss, encoding, 2) > 1.2, encoding


def test_rope_degrades_in_between(loss):
    assert ratio(loss, "rope", 2) < 1.05 < 1.2 < ratio(loss, "rope", 8)
    for factor in FACTORS[1:]:
        assert ratio(loss, "alibi", factor) < ratio(loss, "rope", factor)
        assert ratio(loss, "rope", factor) < min(ratio(loss, "sinusoidal", factor),
                                                 ratio(loss, "learned", factor))


def test_no_position_is_worst_in_distribution(loss):
    assert loss["none"][T] == max(by_length[T] for by_length in loss.values())
