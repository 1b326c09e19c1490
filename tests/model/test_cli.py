"""The `minimodel train | evaluate | generate | compare` commands, end to end on tiny settings."""

import csv

import pytest

from minimodel.cli import main

TINY = [
    "--block-size", "16", "--layers", "1", "--width", "16", "--heads", "2",
    "--batch-size", "2", "--warmup", "1", "--device", "cpu", "--threads", "1",
]  # fmt: skip


def test_train_evaluate_generate(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["train", "--data", "passkey", "--positional", "alibi", "--out", str(out)]
    assert main([*args, "--steps", "3", *TINY]) == 0
    assert (out / "checkpoint.pt").is_file()
    assert "val_loss=" in capsys.readouterr().out

    # Asking again without --resume does not overwrite the run.
    with pytest.raises(SystemExit, match=r"(?s)\[es\].*--resume.*\[en\].*--resume"):
        main([*args, "--steps", "3", *TINY])
    assert main([*args, "--steps", "4", "--resume", *TINY]) == 0

    checkpoint = str(out / "checkpoint.pt")
    assert main(["evaluate", checkpoint, "--factors", "1", "2", "--sequences", "2"]) == 0
    report = capsys.readouterr().out
    assert "[16,32)" in report and "depth 0.5" in report

    assert main(["generate", checkpoint, "--tokens", "5", "--device", "cpu"]) == 0
    assert len(capsys.readouterr().out.strip()) == 6  # BOS shown as ^, then 5 tokens


def test_generate_text(tmp_path, capsys):
    text = tmp_path / "poema.txt"
    text.write_text("caminante, no hay camino, se hace camino al andar. " * 40)
    out = tmp_path / "run"
    assert main(["train", "--data", str(text), "--positional", "rope", "--out", str(out),
                 "--steps", "2", *TINY]) == 0  # fmt: skip
    capsys.readouterr()
    checkpoint = str(out / "checkpoint.pt")
    assert main(["generate", checkpoint, "--prompt", "camin", "--tokens", "7"]) == 0
    assert capsys.readouterr().out.startswith("camin")


def test_compare_writes_csv_and_plots(tmp_path, capsys):
    out = tmp_path / "compare"
    argv = ["compare", "--out", str(out), "--encodings", "none", "learned", "--steps", "2",
            "--factors", "1", "2", "--sequences", "2", "--data", "copy", *TINY]  # fmt: skip
    assert main(argv) == 0
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [(r["encoding"], r["eval_length"]) for r in rows] == [
        ("none", "16"), ("none", "32"), ("learned", "16"), ("learned", "32"),
    ]  # fmt: skip
    assert {"mean_loss", "mean_loss_se", "loss_0_16", "loss_16_32", "seed"} <= set(rows[0])
    for png in ("loss_vs_position.png", "loss_vs_length.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"
    assert "learned" in capsys.readouterr().out
    assert main(argv) == 0  # a second run reuses the finished checkpoints


def test_corrupt_checkpoint_is_a_message_not_a_traceback(tmp_path, capsys):
    bad = tmp_path / "checkpoint.pt"
    bad.write_bytes(b"PK\x03\x04 half a zip file")
    assert main(["evaluate", str(bad), "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("[es] ") and "[en] " in err and "Traceback" not in err
