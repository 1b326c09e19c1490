"""Character-level text that needs no download: the Python standard library's own sources, or any
text file.

Every sequence starts with a beginning-of-sequence token (id 0), so the first character is
predicted from ``BOS`` alone and every encoding sees the same first position.
"""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

import numpy as np
import torch

from minimodel.messages import bilingual

BOS = 0
# Folders of the standard library left out: tests and demos, and whatever pip installed there.
SKIPPED_DIRS = {
    "test", "tests", "idle_test", "idlelib", "lib2to3", "turtledemo", "ensurepip",
    "site-packages", "dist-packages", "__pycache__",
}  # fmt: skip
# The stdlib corpus has a fixed alphabet, so a checkpoint works on any machine: tab, newline and
# printable ASCII. Anything else (a few accented letters in comments, form feeds) becomes "?".
ASCII_CHARS = "\t\n" + "".join(chr(c) for c in range(32, 127))


class CharVocab:
    """Characters <-> token ids; id 0 is ``BOS`` and character ``chars[i]`` is id ``i + 1``."""

    def __init__(self, chars: str) -> None:
        self.chars = chars
        self.size = len(chars) + 1
        self._codes = np.array([ord(c) for c in chars], dtype=np.int64)  # sorted by id

    def encode(self, text: str) -> np.ndarray:
        """Token ids ``(len(text),)``; raises ``ValueError`` naming characters not in the vocab."""
        codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
        order = np.argsort(self._codes)
        where = np.searchsorted(self._codes[order], codes)
        where = np.minimum(where, len(order) - 1)
        found = self._codes[order][where] == codes
        if not found.all():
            missing = "".join(sorted({chr(c) for c in codes[~found]}))[:20]
            raise ValueError(
                bilingual(
                    f"El texto tiene caracteres que el vocabulario no conoce: {missing!r}.",
                    f"The text has characters the vocabulary does not know: {missing!r}.",
                )
            )
        return order[where] + 1

    def decode(self, ids) -> str:
        """Text of a sequence of ids (``BOS`` is dropped)."""
        return "".join(self.chars[i - 1] for i in ids if 0 < i <= len(self.chars))


class TextCorpus:
    """A character-level corpus with a training and a validation stream of token ids.

    Args:
        train, val: token ids of each split, 1-D integer tensors.
        vocab: the ``CharVocab`` that produced them.
        spec: how to rebuild this corpus (saved in checkpoints).
    """

    def __init__(self, train: torch.Tensor, val: torch.Tensor, vocab: CharVocab, spec: dict):
        self.splits = {"train": train, "val": val}
        self.vocab = vocab
        self.vocab_size = vocab.size
        self.spec = spec

    def decode(self, ids) -> str:
        return self.vocab.decode(ids)

    def batch(
        self, split: str, batch_size: int, length: int, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Random windows ``(B, L)``: ``x = [BOS, c_0 .. c_{L-2}]`` and ``y = [c_0 .. c_{L-1}]``."""
        stream = self.splits[split]
        self._check_length(split, length)
        starts = torch.randint(0, len(stream) - length + 1, (batch_size,), generator=generator)
        return self._windows(stream, starts, length)

    def eval_batch(self, split: str, n: int, length: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``n`` windows spread evenly over a split (deterministic), as in ``batch``."""
        stream = self.splits[split]
        self._check_length(split, length)
        starts = torch.linspace(0, len(stream) - length, n).long()
        return self._windows(stream, starts, length)

    def _windows(self, stream, starts, length):
        y = stream[starts[:, None] + torch.arange(length)].long()  # (B, L)
        x = torch.cat([torch.full_like(y[:, :1], BOS), y[:, :-1]], dim=1)
        return x, y

    def _check_length(self, split: str, length: int) -> None:
        if len(self.splits[split]) < length:
            raise ValueError(
                bilingual(
                    f"La partición {split!r} tiene {len(self.splits[split])} caracteres, menos que "
                    f"una secuencia de {length}. Usa un texto más largo.",
                    f"Split {split!r} has {len(self.splits[split])} characters, fewer than one "
                    f"sequence of {length}. Use a longer text.",
                )
            )


def stdlib_files(root: str | Path | None = None) -> list[Path]:
    """The standard library's ``.py`` files, sorted by relative path (tests and demos left out)."""
    root = Path(root or sysconfig.get_paths()["stdlib"])
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        files += [Path(folder, n).relative_to(root) for n in names if n.endswith(".py")]
    return [root / f for f in sorted(files, key=lambda f: f.as_posix())]


def stdlib_corpus(max_train_chars: int = 4_000_000, max_val_chars: int = 400_000) -> TextCorpus:
    """Python's own standard library as a character corpus, split by file.

    Every 10th file of the sorted list goes to validation; files are read in order until each
    split reaches its size. The content depends on the Python version (3.11 here); the alphabet
    does not.
    """
    vocab = CharVocab(ASCII_CHARS)
    table = np.full(256, vocab.encode("?")[0], dtype=np.uint8)  # byte -> id
    table[[ord(c) for c in ASCII_CHARS]] = np.arange(1, vocab.size, dtype=np.uint8)
    parts: dict[str, list[np.ndarray]] = {"train": [], "val": []}
    sizes, limits = {"train": 0, "val": 0}, {"train": max_train_chars, "val": max_val_chars}
    for i, path in enumerate(stdlib_files()):
        split = "val" if i % 10 == 0 else "train"
        if sizes[split] >= limits[split]:
            continue
        ids = table[np.frombuffer(path.read_bytes(), dtype=np.uint8)]
        parts[split].append(ids[: limits[split] - sizes[split]])
        sizes[split] += len(parts[split][-1])
    train, val = (torch.from_numpy(np.concatenate(parts[s])) for s in ("train", "val"))
    spec = {"name": "stdlib", "max_train_chars": max_train_chars, "max_val_chars": max_val_chars}
    return TextCorpus(train, val, vocab, spec)


def text_file_corpus(path: str | Path, val_fraction: float = 0.1) -> TextCorpus:
    """Any UTF-8 text file; the last ``val_fraction`` of its characters is the validation split."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(
            bilingual(
                f"No puedo leer {path} como texto UTF-8: {error}",
                f"Cannot read {path} as UTF-8 text: {error}",
            )
        ) from error
    vocab = CharVocab("".join(sorted(set(text))))
    ids = torch.from_numpy(vocab.encode(text).astype(np.int32))
    cut = int(len(ids) * (1 - val_fraction))
    spec = {"name": "text", "path": str(path.resolve()), "val_fraction": val_fraction}
    return TextCorpus(ids[:cut], ids[cut:], vocab, spec)
