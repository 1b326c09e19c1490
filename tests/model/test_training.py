"""Training is deterministic on the CPU, and a resumed run continues exactly where it stopped."""

import pytest
import torch
from conftest import tiny_config

from minimodel.checkpoint import CheckpointError
from minimodel.data import load_data
from minimodel.train import TrainConfig, learning_rate, train

CONFIG = TrainConfig(steps=6, batch_size=4, warmup=2, eval_sequences=2, checkpoint_every=3)


def run(out, data=None, resume=False, encoding="t5", **changes):
    data = data or load_data("copy")
    config = tiny_config(encoding, vocab_size=data.vocab_size)
    train_config = TrainConfig(**{**CONFIG.__dict__, **changes})
    return train(config, train_config, data, out, resume=resume, progress=False)


def same_weights(a, b) -> bool:
    pairs = zip(a.state_dict().values(), b.state_dict().values(), strict=True)
    return all(torch.equal(p, q) for p, q in pairs)


def test_same_seed_same_run(tmp_path):
    a, b = run(tmp_path / "a"), run(tmp_path / "b")
    assert same_weights(a["model"], b["model"]) and a["train_loss"] == b["train_loss"]
    c = run(tmp_path / "c", seed=1)
    assert not same_weights(a["model"], c["model"])


class Interrupt(Exception):
    pass


def test_interrupted_and_resumed_equals_uninterrupted(tmp_path):
    straight = run(tmp_path / "straight")
    data = load_data("copy")
    batch, calls = data.batch, []

    def batch_then_crash(*args, **kwargs):  # dies while drawing the 5th batch
        calls.append(1)
        if len(calls) == 5:
            raise Interrupt
        return batch(*args, **kwargs)

    data.batch = batch_then_crash
    with pytest.raises(Interrupt):
        run(tmp_path / "resumed", data)
    data.batch = batch
    resumed = run(tmp_path / "resumed", data, resume=True)  # from the step-3 checkpoint
    assert resumed["step"] == 6
    assert same_weights(resumed["model"], straight["model"])


def test_resuming_with_other_options_is_refused(tmp_path):
    run(tmp_path / "run")
    with pytest.raises(CheckpointError, match=r"(?s)\[es\].*positional.*\[en\].*resumed"):
        run(tmp_path / "run", resume=True, encoding="alibi")


def test_learning_rate_schedule():
    config = TrainConfig(steps=100, warmup=10, lr=1e-3, min_lr=1e-4)
    assert learning_rate(0, config) == pytest.approx(1e-4)  # warmup starts low
    assert learning_rate(9, config) == pytest.approx(1e-3)
    assert learning_rate(100, config) == pytest.approx(1e-4)
    lrs = [learning_rate(s, config) for s in range(10, 101)]
    assert all(a >= b for a, b in zip(lrs, lrs[1:], strict=False))
