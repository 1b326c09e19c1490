"""Data with no download: the standard-library corpus, any text file, and the synthetic tasks."""

import pytest
import torch

from minimodel.data import load_data
from minimodel.data.tasks import BOS, MARK, QUERY, SEP, AssociativeRecallTask, CopyTask, PasskeyTask
from minimodel.data.text import ASCII_CHARS, stdlib_corpus, stdlib_files, text_file_corpus


@pytest.fixture(scope="module")
def corpus():
    return stdlib_corpus(max_train_chars=200_000, max_val_chars=50_000)


def test_stdlib_files_are_sorted_and_skip_tests():
    files = stdlib_files()
    assert len(files) > 100
    assert files == sorted(files, key=lambda f: f.relative_to(files[0].parent).as_posix())
    assert not any(part in ("test", "site-packages") for f in files for part in f.parts[-3:-1])


def test_stdlib_corpus_is_deterministic_and_bounded(corpus):
    again = stdlib_corpus(max_train_chars=200_000, max_val_chars=50_000)
    assert torch.equal(corpus.splits["train"], again.splits["train"])
    assert len(corpus.splits["train"]) == 200_000 and len(corpus.splits["val"]) == 50_000
    assert corpus.vocab_size == len(ASCII_CHARS) + 1  # a fixed alphabet, plus BOS


def test_stdlib_split_is_by_file(corpus):
    # Every 10th file goes to validation, starting with the first: it opens the validation split.
    first = stdlib_files()[0].read_text(encoding="ascii", errors="replace")[:200]
    first = "".join(c if c in ASCII_CHARS else "?" for c in first)
    assert corpus.decode(corpus.splits["val"][:200].tolist()) == first
    assert corpus.decode(corpus.splits["train"][:200].tolist()) != first


def test_text_batches_start_with_bos_and_shift_by_one(corpus):
    x, y = corpus.batch("train", 4, 64, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 64) and x.dtype == torch.long
    assert (x[:, 0] == 0).all() and torch.equal(x[:, 1:], y[:, :-1])
    a, b = corpus.eval_batch("val", 3, 50), corpus.eval_batch("val", 3, 50)
    assert torch.equal(a[0], b[0])


def test_any_text_file(tmp_path):
    path = tmp_path / "cuento.txt"
    path.write_text("Érase una vez un niño que soñaba con la codificación posicional. " * 20)
    data = load_data(str(path))
    assert data.spec["name"] == "text" and "ñ" in data.vocab.chars
    x, y = data.batch("val", 2, 16, torch.Generator().manual_seed(0))
    assert data.decode(y[0].tolist()) in path.read_text()


def test_unreadable_text_file(tmp_path):
    path = tmp_path / "binary.txt"
    path.write_bytes(b"\xff\xfe\x00 not utf-8 \xc3")
    with pytest.raises(ValueError, match=r"(?s)\[es\].*UTF-8.*\[en\].*UTF-8"):
        text_file_corpus(path)


def test_unknown_data_name():
    with pytest.raises(ValueError, match="Unknown data"):
        load_data({"name": "wikipedia"})


def test_copy_task_answers_are_the_first_half():
    x, y = CopyTask().batch("train", 3, 40, torch.Generator().manual_seed(0))
    n = 20
    assert (x[:, 0] == BOS).all() and (x[:, n + 1] == SEP).all()
    assert torch.equal(y[:, n + 1 :], x[:, 1 : 40 - n])  # every answer copies the first half
    assert (y[:, : n + 1] == -1).all()


def test_recall_answers_are_the_values_of_the_queried_keys():
    x, y = AssociativeRecallTask().batch("train", 4, 64, torch.Generator().manual_seed(0))
    for row_x, row_y in zip(x.tolist(), y.tolist(), strict=True):
        sep = row_x.index(SEP)
        table = dict(zip(row_x[1:sep:2], row_x[2:sep:2], strict=True))
        answers = [(i, t) for i, t in enumerate(row_y) if t >= 0]
        assert len(answers) >= 5
        for i, target in answers:
            assert table[row_x[i]] == target


@pytest.mark.parametrize("depth", [0.0, 0.5, 1.0])
def test_passkey_needle_at_its_depth(depth):
    task = PasskeyTask()
    x, y = task.batch("train", 2, 100, torch.Generator().manual_seed(0), depth=depth)
    k = task.n_digits
    filler = 100 - 1 - 2 * (k + 1) + 1
    for row_x, row_y in zip(x.tolist(), y.tolist(), strict=True):
        where = row_x.index(MARK)
        assert where == 1 + round(depth * filler)
        assert row_x[-k] == QUERY  # x ends QUERY d_1 .. d_{k-1}; y holds all k digits
        assert [t for t in row_y if t >= 0] == row_x[where + 1 : where + 1 + k]


def test_tasks_are_reproducible_and_have_a_minimum_length():
    a = PasskeyTask().batch("train", 2, 64, torch.Generator().manual_seed(3))
    b = PasskeyTask().batch("train", 2, 64, torch.Generator().manual_seed(3))
    assert all(torch.equal(p, q) for p, q in zip(a, b, strict=True))
    with pytest.raises(ValueError, match="at least"):
        PasskeyTask().batch("train", 1, 5, torch.Generator())
