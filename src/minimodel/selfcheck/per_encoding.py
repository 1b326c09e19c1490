"""Checks repeated for each encoding the student wrote (labs 19.01 and 19.02).

Each lab registers its kinds of check with ``@kinds.add(kind, es, en)`` on ``run(name)``, which
checks the encoding ``name`` in a Mini-GPT; ``kinds.checks()`` holds one check per kind and
encoding, named ``<kind>_<name>``.
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


class Kinds(list):
    """A lab's kinds of check, ``(kind, es, en, run)``, in order."""

    def add(self, kind: str, es: str, en: str) -> Callable[[Callable[[str], None]], Callable]:
        def register(run: Callable[[str], None]) -> Callable[[str], None]:
            self.append((kind, es, en, run))
            return run

        return register

    def checks(self) -> CheckList:
        """One check per kind and encoding of ``FILES``, encoding by encoding."""
        checks = CheckList()
        for name, file in FILES.items():
            for kind, es, en, run in self:

                def check(run=run, name=name) -> None:
                    run(name)

                check.__name__ = f"{kind}_{name}"
                checks.add(f"GPT(positional={name!r}) · {file}", es, en)(check)
        return checks
