"""Bad input gets a clear bilingual error: sequences past a table, broken or foreign checkpoints."""

import pytest
import torch
from conftest import tiny_config, tiny_model

from minimodel.checkpoint import (
    CheckpointError,
    load_checkpoint,
    load_model,
    load_weights,
    save_checkpoint,
)
from minimodel.generate import generate
from minimodel.kv_cache import KVCache
from minimodel.model import GPT

BILINGUAL = r"(?s)\[es\] .*\n\[en\] "


def test_learned_past_its_table_names_the_limit():
    model = tiny_model("learned")  # block_size 32: the table has 32 rows
    model(torch.zeros(1, 32, dtype=torch.long))  # exactly the table: fine
    with pytest.raises(ValueError, match=BILINGUAL + r".*'learned' has only 32 positions.*33"):
        model(torch.zeros(1, 33, dtype=torch.long))


def test_learned_past_its_table_through_the_cache():
    model = tiny_model("learned")
    cache = KVCache(model.config.n_layer)
    model(torch.zeros(1, 30, dtype=torch.long), cache=cache)
    with pytest.raises(ValueError, match="only 32 positions.*reaches 34"):
        model(torch.zeros(1, 4, dtype=torch.long), cache=cache)


def test_generation_past_the_table_fails_before_starting():
    model = tiny_model("learned")
    with pytest.raises(ValueError, match="only 32 positions"):
        generate(model, torch.zeros(1, 10, dtype=torch.long), 30)


def test_sinusoidal_limit_is_max_len():
    model = tiny_model("sinusoidal", max_len=40)
    model(torch.zeros(1, 40, dtype=torch.long))
    with pytest.raises(ValueError, match="'sinusoidal' has only 40 positions"):
        model(torch.zeros(1, 41, dtype=torch.long))


@pytest.mark.parametrize("encoding", ["none", "rope", "alibi", "t5"])
def test_encodings_without_a_table_take_any_length(encoding):
    model = tiny_model(encoding)
    logits, _ = model(torch.zeros(1, 5 * model.config.block_size, dtype=torch.long))
    assert torch.isfinite(logits).all()


@pytest.fixture
def checkpoint(tmp_path):
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(path, tiny_model("rope"), step=3)
    return path


def test_roundtrip(checkpoint):
    model, state = load_model(checkpoint)
    assert state["step"] == 3 and model.config == tiny_config("rope")
    reference = tiny_model("rope")
    idx = torch.arange(10)[None]
    torch.testing.assert_close(model(idx)[0], reference(idx)[0], atol=0, rtol=0)


def test_truncated_checkpoint(checkpoint):
    checkpoint.write_bytes(checkpoint.read_bytes()[:1000])
    with pytest.raises(CheckpointError, match=BILINGUAL + ".*damaged, truncated"):
        load_model(checkpoint)


def test_garbage_checkpoint(tmp_path):
    path = tmp_path / "notes.pt"
    path.write_text("these are my notes, not a model")
    with pytest.raises(CheckpointError, match="cannot be read as a checkpoint"):
        load_checkpoint(path)


def test_foreign_torch_file(tmp_path):
    path = tmp_path / "weights.pt"
    torch.save({"weight": torch.zeros(3)}, path)
    with pytest.raises(CheckpointError, match=BILINGUAL + ".*is not a minimodel checkpoint"):
        load_checkpoint(path)


def test_missing_checkpoint(tmp_path):
    with pytest.raises(CheckpointError, match="No checkpoint at"):
        load_checkpoint(tmp_path / "nothing.pt")


def test_checkpoint_from_another_version(checkpoint):
    state = torch.load(checkpoint, weights_only=True)
    torch.save({**state, "version": 99}, checkpoint)
    with pytest.raises(CheckpointError, match="format version 99"):
        load_checkpoint(checkpoint)


def test_weights_for_another_encoding(checkpoint):
    state = load_checkpoint(checkpoint)
    learned = GPT(tiny_config("learned"))
    with pytest.raises(CheckpointError, match=BILINGUAL + r".*do not fit this model.*learned"):
        load_weights(learned, state)


def test_unknown_config_field(checkpoint):
    state = torch.load(checkpoint, weights_only=True)
    state["model_config"]["n_experts"] = 8
    torch.save(state, checkpoint)
    with pytest.raises(CheckpointError, match="unknown fields: \\['n_experts'\\]"):
        load_model(checkpoint)


def test_checkpoints_never_run_code(tmp_path):
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    path = tmp_path / "evil.pt"
    torch.save({"format": "minimodel-checkpoint", "payload": Evil()}, path)
    with pytest.raises(CheckpointError):
        load_checkpoint(path)
