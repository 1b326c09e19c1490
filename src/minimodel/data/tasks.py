"""Synthetic tasks where position is everything: copy, associative recall, passkey retrieval.

Each task draws whole sequences of any length from a seeded generator, and marks which tokens are
answers: targets are ``-1`` (ignored by the loss) everywhere else. Training at one length and
evaluating at longer ones measures how far each encoding lets the model reach back.

Token ids: ``0`` BOS, ``1`` SEP, ``2`` MARK (the needle's start), ``3`` QUERY, then ``N_SYMBOLS``
ordinary symbols, shown as ``0-9 a-z A-Z ...``.
"""

from __future__ import annotations

import torch

from minimodel.messages import bilingual

BOS, SEP, MARK, QUERY = 0, 1, 2, 3
N_SYMBOLS = 64
SPECIAL = "^|#?"
SYMBOLS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+*"  # N_SYMBOLS of them


class SyntheticTask:
    """Base class: subclasses write ``sequences(n, length, generator, **options)``.

    ``sequences`` returns ``tokens`` ``(n, length + 1)`` int64 and ``answer`` ``(n, length + 1)``
    bool, True where a token is to be predicted; ``batch`` turns them into inputs and targets.
    """

    name = "task"
    vocab_size = len(SPECIAL) + N_SYMBOLS
    min_length = 8

    def __init__(self) -> None:
        self.spec = {"name": self.name}

    def decode(self, ids) -> str:
        return "".join((SPECIAL + SYMBOLS)[i] for i in ids)

    def batch(
        self, split: str, batch_size: int, length: int, generator: torch.Generator, **options
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Inputs ``x`` and targets ``y`` of shape ``(B, length)``; ``y = -1`` off the answers.

        ``split`` is accepted for symmetry with text corpora: every draw is a fresh sequence, and
        training and evaluation use different generators.
        """
        if length < self.min_length:
            raise ValueError(
                bilingual(
                    f"La tarea {self.name} necesita secuencias de al menos {self.min_length} "
                    f"tokens; recibí {length}.",
                    f"Task {self.name} needs sequences of at least {self.min_length} tokens; "
                    f"got {length}.",
                )
            )
        tokens, answer = self.sequences(batch_size, length, generator, **options)
        y = torch.where(answer[:, 1:], tokens[:, 1:], -1)
        return tokens[:, :-1], y

    def eval_batch(self, split: str, n: int, length: int, **options):
        """A deterministic batch (fixed seed), for evaluation."""
        return self.batch(split, n, length, torch.Generator().manual_seed(1234), **options)

    def sequences(self, n: int, length: int, generator: torch.Generator, **options):
        raise NotImplementedError


def _symbols(n: int, k: int, generator: torch.Generator, low: int = 0, high: int = N_SYMBOLS):
    """Random symbol ids ``(n, k)`` drawn uniformly from symbols ``low .. high-1``."""
    return len(SPECIAL) + torch.randint(low, high, (n, k), generator=generator)


def _column(n: int, token: int) -> torch.Tensor:
    return torch.full((n, 1), token, dtype=torch.long)


class CopyTask(SyntheticTask):
    """``BOS a_1 .. a_n SEP a_1 .. a_n``: the second half copies the first (an induction probe).

    Answers: the second copy. The copy of ``a_i`` sits ``n + 1`` positions after the original, and
    it is predicted from the token before it, so reproducing it means attending exactly ``n``
    positions back (query to key); a longer sequence asks for distances never seen in training.
    """

    name = "copy"

    def sequences(self, n, length, generator):
        half = _symbols(n, length // 2, generator)
        tokens = torch.cat([_column(n, BOS), half, _column(n, SEP), half], dim=1)[:, : length + 1]
        answer = torch.zeros_like(tokens, dtype=torch.bool)
        answer[:, half.size(1) + 2 :] = True
        return tokens, answer


class AssociativeRecallTask(SyntheticTask):
    """``BOS k_1 v_1 .. k_n v_n SEP q_1 w_1 q_2 w_2 ...``: after each queried key, its value.

    Keys are distinct symbols from the first half of the alphabet, values from the second half
    (Zoology's multi-query associative recall). Answers: the values ``w_j`` after ``SEP``.
    """

    name = "recall"
    n_keys = N_SYMBOLS // 2

    def sequences(self, n, length, generator):
        pairs = min(self.n_keys, (length - 1) // 4)
        keys = torch.stack([torch.randperm(self.n_keys, generator=generator) for _ in range(n)])
        keys = keys[:, :pairs]  # (n, pairs), distinct per row
        values = torch.randint(self.n_keys, N_SYMBOLS, (n, pairs), generator=generator)
        n_queries = (length + 1 - 2 * pairs - 1) // 2 + 1
        which = torch.randint(0, pairs, (n, n_queries), generator=generator)
        query_keys, query_values = keys.gather(1, which), values.gather(1, which)
        offset = len(SPECIAL)
        context = torch.stack([keys, values], dim=2).flatten(1) + offset
        queries = torch.stack([query_keys, query_values], dim=2).flatten(1) + offset
        tokens = torch.cat([_column(n, BOS), context, _column(n, SEP), queries], dim=1)
        tokens = tokens[:, : length + 1]
        answer = torch.zeros_like(tokens, dtype=torch.bool)
        answer[:, 2 * pairs + 3 :: 2] = True  # the value after each query key
        return tokens, answer


class PasskeyTask(SyntheticTask):
    """Random filler with a needle ``MARK d_1 .. d_k`` at a chosen depth, then ``QUERY d_1 .. d_k``.

    ``depth`` is the needle's place in the filler: 0 at the very start (farthest from the query),
    1 right before the query. Training draws it uniformly; evaluation fixes it. Digits are symbols
    0-9, filler symbols are the rest of the alphabet. Answers: the digits after ``QUERY``.
    """

    name = "passkey"
    n_digits = 5
    min_length = 2 * (n_digits + 1) + 2

    def sequences(self, n, length, generator, depth: float | None = None):
        k = self.n_digits
        digits = _symbols(n, k, generator, 0, 10)
        filler_len = length + 1 - 1 - 2 * (k + 1)
        filler = _symbols(n, filler_len, generator, 10, N_SYMBOLS)
        if depth is None:
            where = torch.randint(0, filler_len + 1, (n,), generator=generator)
        else:
            where = torch.full((n,), round(depth * filler_len))
        needle = torch.cat([_column(n, MARK), digits], dim=1)
        rows = [
            torch.cat([_column(1, BOS), filler[i : i + 1, : where[i]], needle[i : i + 1],
                       filler[i : i + 1, where[i] :], _column(1, QUERY), digits[i : i + 1]], dim=1)
            for i in range(n)
        ]  # fmt: skip
        tokens = torch.cat(rows, dim=0)
        answer = torch.zeros_like(tokens, dtype=torch.bool)
        answer[:, -k:] = True
        return tokens, answer


TASKS = {task.name: task for task in (CopyTask, AssociativeRecallTask, PasskeyTask)}
