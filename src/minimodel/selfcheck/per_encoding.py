"""Checks repeated for each encoding the student wrote (labs 19.01 and 19.02).

Each lab lists its kinds of check as ``(kind, es, en, run)``; ``run(name)`` checks the encoding
``name`` in a Mini-GPT. One check is registered per kind and encoding, named ``<kind>_<name>``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from minimodel.encodings import STUDENT_WRITTEN
from minimodel.selfcheck.compare import CheckList

# GPTConfig.positional -> the student's file that implements it, and its lesson
FILES = {encoding.name: encoding.file for encoding in STUDENT_WRITTEN}
VOCAB = 40


def tiny_model(positional: str, **config):
    """A tiny Mini-GPT with ``positional``, in eval mode; every weight outside ``hooks`` depends
    only on the seed."""
    from minimodel.model import GPT, GPTConfig

    torch.manual_seed(0)
    return GPT(GPTConfig(**config, vocab_size=VOCAB, positional=positional)).eval()


def tokens(T: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (2, T), generator=torch.Generator().manual_seed(1))


def register(checks: CheckList, kinds: tuple[tuple[str, str, str, Callable[[str], None]], ...]):
    """Add to ``checks`` one check per kind of ``kinds`` and encoding of ``FILES``."""
    for name, file in FILES.items():
        for kind, es, en, run in kinds:

            def check(run=run, name=name) -> None:
                run(name)

            check.__name__ = f"{kind}_{name}"
            checks.add(f"GPT(positional={name!r}) · {file}", es, en)(check)
