"""Evaluation beyond the training length: buckets, the learned-table policy, retrieval by depth."""

import importlib
import math

import pytest
import torch
from conftest import tiny_config, tiny_model, use_released_stub

from minimodel.compare import compare, summary
from minimodel.data import load_data
from minimodel.evaluate import allow_length, buckets, evaluate_lengths, retrieval_by_depth
from minimodel.train import TrainConfig


def test_buckets_double_past_the_training_length():
    assert buckets(128, 128) == [(0, 128)]
    assert buckets(128, 1024) == [(0, 128), (128, 256), (256, 512), (512, 1024)]
    assert buckets(100, 300) == [(0, 100), (100, 200), (200, 300)]


def test_the_buckets_are_the_students_lab_18_01(monkeypatch):
    extrapolation = importlib.import_module("minimodel.positional.extrapolation")
    calls = []

    def spans(train_len, length):  # a student's doubling_buckets, with another answer
        calls.append((train_len, length))
        return [(0, 5), (5, length)]

    def means(loss, spans):
        calls.append(spans)
        return torch.arange(len(spans), dtype=torch.float32) + 0.5

    monkeypatch.setattr(extrapolation, "doubling_buckets", spans)
    monkeypatch.setattr(extrapolation, "bucket_means", means)
    data = load_data("copy")
    rows = evaluate_lengths(tiny_model("rope", vocab_size=data.vocab_size), data, factors=(2,),
                            n=2)
    assert rows[0]["buckets"] == {(0, 5): 0.5, (5, 64): 1.5}
    assert calls == [(32, 64), [(0, 5), (5, 64)]]


@pytest.fixture
def stub_lab_18_01(monkeypatch):
    use_released_stub(monkeypatch, "extrapolation")


def test_a_stub_lab_18_01_is_named_in_both_languages(stub_lab_18_01):
    with pytest.raises(NotImplementedError) as raised:
        data = load_data("copy")
        evaluate_lengths(tiny_model("rope", vocab_size=data.vocab_size), data, factors=(1,), n=2)
    said = str(raised.value)
    assert "[es] La evaluación por posición resume la pérdida con tu función doubling_buckets " \
        "de extrapolation.py (laboratorio 18.01), que aún no está completa" in said
    assert "[en] Evaluating by position summarises the loss with your doubling_buckets of " \
        "extrapolation.py (lab 18.01), which is not complete yet" in said
    assert "make check LAB=18.01" in said


def test_compare_says_so_before_training(stub_lab_18_01, tmp_path):
    with pytest.raises(NotImplementedError, match="lab 18.01"):
        data = load_data("copy")
        compare(tiny_config("rope", vocab_size=data.vocab_size), TrainConfig(steps=1,
                batch_size=2), data, tmp_path / "out", encodings=("rope",), factors=(1, 2))
    assert not (tmp_path / "out").exists()


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
