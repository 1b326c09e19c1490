"""Tiny Mini-GPTs for the model's tests: every test runs in well under a second."""

import sys
import types

import pytest
import torch

from grader.build.sync import released_text
from minimodel.encodings import ENCODINGS
from minimodel.implementation import STUBS_DIR
from minimodel.model import GPT, GPTConfig

# Tiny models gain nothing from threads, and two test workers with two threads each on two cores
# spend their time waiting for each other.
torch.set_num_threads(1)

TINY = dict(vocab_size=40, block_size=32, n_layer=2, n_head=4, n_embd=32)


def tiny_config(positional: str, **overrides) -> GPTConfig:
    return GPTConfig(**{**TINY, "positional": positional, **overrides})


def tiny_model(positional: str, seed: int = 0, **overrides) -> GPT:
    torch.manual_seed(seed)
    return GPT(tiny_config(positional, **overrides)).eval()


@pytest.fixture(params=list(ENCODINGS))
def encoding(request) -> str:
    return request.param


def use_released_stub(monkeypatch, module: str) -> None:
    """Make ``minimodel.positional.<module>`` the stub as released: nothing implemented."""
    stub = types.ModuleType(f"minimodel.positional.{module}")
    exec(compile(released_text(STUBS_DIR / f"{module}.py"), f"{module}.py", "exec"),
         stub.__dict__)
    monkeypatch.setitem(sys.modules, stub.__name__, stub)
