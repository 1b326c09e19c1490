"""Evaluation beyond the training length: buckets, the learned-table policy, retrieval by depth."""

import math

import torch
from conftest import tiny_model

from minimodel.compare import summary
from minimodel.data import load_data
from minimodel.evaluate import allow_length, buckets, evaluate_lengths, retrieval_by_depth


def test_buckets_double_past_the_training_length():
    assert buckets(128, 128) == [(0, 128)]
    assert buckets(128, 1024) == [(0, 128), (128, 256), (256, 512), (512, 1024)]
    assert buckets(100, 300) == [(0, 100), (100, 200), (200, 300)]


def test_learned_table_is_extended_with_untrained_rows_for_evaluation():
    model = tiny_model("learned")  # 32 rows
    longer = allow_length(model, 128)
    old, new = model.hooks.input.weight, longer.hooks.input.weight
    assert new.shape == (128, old.shape[1]) and torch.equal(new[:32], old)
    assert 0.01 < new[32:].std() < 0.03  # rows as initialised: N(0, 0.02)
    assert model.hooks.input.weight.shape[0] == 32  # the original is untouched
    assert allow_length(tiny_model("rope"), 128).hooks is not None


def test_evaluate_lengths_on_a_task():
    data = load_data("copy")
    model = tiny_model("alibi", vocab_size=data.vocab_size)
    rows = evaluate_lengths(model, data, factors=(1, 2), n=3)
    assert [r["eval_length"] for r in rows] == [32, 64]
    assert list(rows[1]["buckets"]) == [(0, 32), (32, 64)]
    assert rows[1]["per_position"].shape == (64,)
    assert math.isnan(rows[0]["per_position"][0])  # the first half of a copy has no answers
    assert 0 <= rows[0]["accuracy"] <= 1 and rows[0]["mean_loss_se"] > 0


def test_retrieval_by_depth_grid():
    data = load_data("passkey")
    model = tiny_model("t5", vocab_size=data.vocab_size)
    rows = retrieval_by_depth(model, data, factors=(1, 2), depths=(0.0, 1.0), n=2)
    assert [(r["eval_length"], r["depth"]) for r in rows] == [
        (32, 0.0),
        (32, 1.0),
        (64, 0.0),
        (64, 1.0),
    ]
    assert all(r["accuracy"] in (0.0, 0.5, 1.0) for r in rows)


def test_summary_reports_seeds_and_spread(monkeypatch):
    monkeypatch.setenv("MINIMODEL_LANG", "en")
    rows = [
        {"encoding": e, "seed": s, "eval_length": L, "mean_loss": loss, "mean_loss_se": 0.01}
        for e, base in (("rope", 1.0), ("alibi", 1.1))
        for s in (0, 1)
        for L, loss in ((128, base + 0.1 * s), (256, 2 * base + 0.1 * s))
    ]
    text = summary(rows, 128)
    assert "std over seeds" in text and "[0, 1]" in text
    assert "1.050±0.071 (x1.00)" in text and "(x1.95)" in text
