"""The `minimodel train | evaluate | generate | compare` commands, end to end on tiny settings."""

import csv
import os
import subprocess
import sys

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


def test_train_runs_as_the_readme_says(tmp_path, monkeypatch, capsys):
    """`minimodel train --positional P`: a default folder, the configuration, then progress."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MINIMODEL_LANG", "en")
    assert main(["train", "--positional", "alibi", "--data", "copy", "--steps", "2", *TINY]) == 0
    out, err = capsys.readouterr()
    assert (tmp_path / "build" / "runs" / "alibi" / "checkpoint.pt").is_file()
    first = out.splitlines()[0]
    assert first.startswith("Training a Mini-GPT") and "positional=alibi" in first
    assert "step 1/2 | loss" in err and "left" in err


def test_train_speaks_the_chosen_language(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MINIMODEL_LANG", "en")
    argv = ["train", "--lang", "es", "--data", "copy", "--steps", "1", *TINY]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out.startswith("Entrenando un Mini-GPT") and "paso 1/1 | pérdida" in err


def test_train_help_shows_the_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--steps STEPS default: 300" in text and "(default: build/runs/<positional>)" in text
    assert "--seed SEED default: 0" in text and "(default: stdlib)" in text


def test_compare_checks_every_encoding_before_training(tmp_path):
    """A partly done implementation: compare names every missing encoding, trains nothing."""
    from grader.build.sync import released_text
    from minimodel.implementation import REFERENCE_DIR, STUBS_DIR

    student = tmp_path / "student"
    student.mkdir()
    for source in REFERENCE_DIR.glob("*.py"):
        (student / source.name).write_text(source.read_text())
    for stub in ("rope", "relative_bias"):
        (student / f"{stub}.py").write_text(released_text(STUBS_DIR / f"{stub}.py"))
    out = tmp_path / "compare"
    argv = ["compare", "--out", str(out), "--encodings", "none", "rope", "alibi", "t5",
            "--steps", "2", "--factors", "1", "--sequences", "2", "--data", "copy", *TINY]
    done = subprocess.run(
        [sys.executable, "-m", "minimodel.cli", *argv],
        env={**os.environ, "MINIMODEL_IMPL": str(student)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    es, en = done.stderr.split("[en] ")
    assert "2 de 4 codificaciones" in es and "(rope, t5)" in es
    assert "2 of 4 encodings" in en and "(rope, t5)" in en
    assert "rope.py (17.03)" in en and "relative_bias.py (17.05)" in en
    assert "--encodings none alibi" in en
    assert not out.exists()  # nothing trained


@pytest.mark.parametrize("argv", [
    ["train", "--steps", "1", "--positional", "rope", "--data", "copy", *TINY],
    ["evaluate", "run/checkpoint.pt", "--factors", "1", "--sequences", "1"],
    ["compare", "--encodings", "rope", "--steps", "1", "--data", "copy", *TINY],
], ids=["train", "evaluate", "compare"])
def test_a_message_in_the_language_asked_for(tmp_path, argv):
    """--lang en: the stubs' "not implemented" (and any other message of ours) in English only."""
    from selfcheck_copies import released_stubs

    if argv[0] == "evaluate":  # a model with RoPE, trained on the reference, evaluated on stubs
        assert main(["train", "--out", str(tmp_path / "run"), "--positional", "rope",
                     "--data", "copy", "--steps", "1", *TINY]) == 0
    done = subprocess.run(
        [sys.executable, "-m", "minimodel.cli", *argv, "--lang", "en"],
        env={**os.environ, "MINIMODEL_IMPL": str(released_stubs(tmp_path))}, cwd=tmp_path,
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "is not implemented yet" in done.stderr and "[es]" not in done.stderr
    assert "Falta" not in done.stderr and "[en]" not in done.stderr


def test_ctrl_c_while_starting_is_one_line(monkeypatch, capsys):
    """Ctrl-C in the first seconds, while the subcommands import torch: no traceback."""
    import importlib

    def interrupted(name):
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib, "import_module", interrupted)
    assert main(["check", "17.01"]) == 130
    err = capsys.readouterr().err
    assert "Interrumpido (Ctrl-C)." in err and "Interrupted (Ctrl-C)." in err


@pytest.mark.parametrize(("lang", "words"), [("es", "pérdida media"), ("en", "mean loss")])
def test_compare_table_speaks_the_readers_language(monkeypatch, lang, words):
    from minimodel.compare import summary

    monkeypatch.setenv("MINIMODEL_LANG", lang)
    rows = [{"encoding": "rope", "seed": 0, "eval_length": L, "mean_loss": 1.0 + L / 100,
             "mean_loss_se": 0.1} for L in (16, 32)]  # fmt: skip
    table = summary(rows, 16)
    assert table.startswith(words) and "rope" in table


def test_compare_shows_rope_scalings_next_to_the_encodings(tmp_path, capsys):
    """--rope-scalings: each RoPE model is also evaluated, untrained, with each scaling (factor:
    the longest length over the training one); LongRoPE's rows sit next to the others'."""
    out = tmp_path / "compare"
    argv = ["compare", "--out", str(out), "--encodings", "rope", "alibi", "--steps", "2",
            "--factors", "1", "2", "--sequences", "2", "--data", "copy",
            "--rope-scalings", "yarn", "longrope", *TINY]  # fmt: skip
    assert main(argv) == 0
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [r["encoding"] for r in rows if r["eval_length"] == "32"] == [
        "rope", "rope+yarn", "rope+longrope", "alibi"]  # fmt: skip
    by_name = {(r["encoding"], r["eval_length"]): float(r["mean_loss"]) for r in rows}
    # up to the training length LongRoPE without factors is plain RoPE: the same loss
    assert by_name["rope+longrope", "16"] == by_name["rope", "16"]
    assert "rope+longrope" in capsys.readouterr().out
    # an unknown name is a message before anything is trained
    elsewhere = str(tmp_path / "other")
    assert main(["compare", "--out", elsewhere, *argv[3:-len(TINY) - 3], "--rope-scalings",
                 "longrop", *TINY]) == 2
    assert "'longrop'" in capsys.readouterr().err
    assert not (tmp_path / "other" / "rope-seed0").exists()
