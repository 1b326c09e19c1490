"""Comparing encodings: train one Mini-GPT per encoding, same seed and data, evaluate all lengths.

Writes into the output folder:

- ``results.csv``: one row per (encoding, seed, evaluation length): mean loss and its standard
  error over the evaluation sequences, loss per position bucket, answer accuracy, training cost;
- ``loss_vs_position.png``: loss at each position of the longest sequences (smoothed);
- ``loss_vs_length.png``: mean loss against the evaluation length (error bars: spread over
  seeds, or over sequences with a single seed);
- ``retrieval.csv`` for the passkey task;
- one folder per run with its checkpoint, so an interrupted comparison resumes where it stopped.

With ``scalings`` (``--rope-scalings linear yarn longrope``), each trained model that rotates
with RoPE is also evaluated with those scalings of lesson 18.02, without fine-tuning: a copy with
the same weights and another scaling (factor ``s`` = the longest evaluation length over the
training length), in rows named ``rope+yarn``, next to the others.
"""

from __future__ import annotations

import argparse
import csv
import time
from dataclasses import replace
from pathlib import Path

import torch
import torch.nn.functional as F

from minimodel.data import load_data
from minimodel.device import resolve_device
from minimodel.encodings import COURSE, ENCODINGS
from minimodel.evaluate import FACTORS, bucket_losses, evaluate_lengths, retrieval_by_depth
from minimodel.hooks import Rope, encoding_module
from minimodel.messages import LANGUAGES, bilingual, pick, split_bilingual
from minimodel.model import GPT, GPTConfig
from minimodel.train import TrainConfig, add_model_arguments, configs_from_args, train

# The default comparison fits 20 minutes on 2 CPU cores for all six encodings (13.3 min measured,
# PyTorch 2.13).
DEFAULT_STEPS = 1200


def colour(encoding: str) -> str:
    """The encoding's colour, the same in these plots and in every figure of the course (a
    scaled copy, ``rope+yarn``, has its encoding's)."""
    return ENCODINGS[encoding.split("+")[0]].colour


def scaled_copies(model: GPT, scalings, factor: float) -> dict[str, GPT]:
    """``model`` with each RoPE scaling of ``scalings`` and the same weights, in eval mode, by
    name (``"rope+longrope"``); none when the model does not rotate with RoPE or already has a
    scaling."""
    config = model.config
    if not scalings or config.rope_scaling is not None or not issubclass(
            ENCODINGS[config.positional].hook, Rope):
        return {}
    copies = {}
    for name in scalings:
        copy = GPT(replace(config, rope_scaling=name, rope_scaling_factor=float(factor),
                           rope_original_max_len=config.block_size))
        copy.load_state_dict(model.state_dict())
        copies[f"{config.positional}+{name}"] = copy.to(next(model.parameters()).device).eval()
    return copies


def encoding_problems(model_config: GPTConfig, encodings) -> dict[str, tuple[str, str]]:
    """Encodings that do not run yet, each with why in Spanish and English.

    One tiny forward pass per encoding (two sequences of a few tokens) goes through the student's
    files, so a missing function shows up in seconds, before anything is trained.
    """
    problems = {}
    T = min(8, model_config.block_size)
    for encoding in encodings:
        try:
            torch.manual_seed(0)
            model = GPT(replace(model_config, positional=encoding)).eval()
            with torch.no_grad():
                model(torch.randint(model_config.vocab_size, (2, T)))
        except Exception as error:  # noqa: BLE001 - whatever the student's code raises
            es, en = split_bilingual(str(error))
            kind = "" if isinstance(error, NotImplementedError) else f"{type(error).__name__}: "
            where = ENCODINGS[encoding].file
            problems[encoding] = (f"{where} · {kind}{es}", f"{where} · {kind}{en}")
    return problems


def require_encodings(model_config: GPTConfig, encodings) -> None:
    """Raise a bilingual ``RuntimeError`` naming every encoding that does not run yet."""
    problems = encoding_problems(model_config, encodings)
    if not problems:
        return
    names = ", ".join(problems)
    ready = [encoding for encoding in encodings if encoding not in problems]
    only = " ".join(ready) or "none"
    raise RuntimeError(
        bilingual(
            f"Antes de entrenar nada: {len(problems)} de {len(encodings)} codificaciones aún no "
            f"funcionan con tu código ({names}).\n"
            + "\n".join(f"  {name}: {es}" for name, (es, _) in problems.items())
            + "\nCompleta esos archivos (make check LAB=<lección>) o compara solo las que "
            f"funcionan: --encodings {only}",
            f"Before training anything: {len(problems)} of {len(encodings)} encodings do not run "
            f"with your code yet ({names}).\n"
            + "\n".join(f"  {name}: {en}" for name, (_, en) in problems.items())
            + "\nComplete those files (make check LAB=<lesson>) or compare only the ones that "
            f"run: --encodings {only}",
        )
    )


def compare(
    model_config: GPTConfig,
    train_config: TrainConfig,
    data,
    out: str | Path,
    encodings=None,
    seeds=(0,),
    factors=FACTORS,
    n_eval: int = 16,
    device="cpu",
    progress: bool = True,
    scalings=(),
) -> list[dict]:
    """Train and evaluate every encoding for every seed; write the results into ``out``.

    Only ``positional`` (and ``seed``) change between runs; everything else is ``model_config``
    and ``train_config``. ``encodings``: names of ``minimodel.encodings.ENCODINGS`` (``None``:
    the course's six, ``COURSE``, whose recorded runs the lessons quote). ``scalings``: names of
    ``minimodel.positional.scaling.SCALINGS`` to evaluate each RoPE model with, untrained (rows
    ``"rope+<name>"``). Returns the rows written to ``results.csv``.
    """
    encodings = list(encodings or COURSE)
    require_encodings(model_config, encodings)
    for name in scalings:  # an unknown name, before anything is trained
        encoding_module("scaling").get_scaling(name)
    T = model_config.block_size
    bucket_losses(torch.zeros(1, max(factors) * T), T)  # lab 18.01's functions, before training
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    device = resolve_device(device)
    rows, curves, retrieval = [], {}, []
    for seed in seeds:
        for encoding in encodings:
            label = f"[{encoding} seed {seed}] "
            result = train(
                replace(model_config, positional=encoding),
                replace(train_config, seed=seed),
                data,
                out / f"{encoding}-seed{seed}",
                device,
                resume=True,
                progress=progress,
                label=label,
            )
            models = {encoding: result["model"],
                      **scaled_copies(result["model"], scalings, max(factors))}
            for name, model in models.items():
                _evaluate(rows, curves, retrieval, name, model, result, data, seed, factors,
                          n_eval, device)
    _write_csv(out / "results.csv", rows)
    if retrieval:
        _write_csv(out / "retrieval.csv", retrieval)
    plot_loss_vs_position(curves, T, out / "loss_vs_position.png")
    plot_loss_vs_length(rows, T, out / "loss_vs_length.png")
    return rows


def _evaluate(rows, curves, retrieval, encoding, model, result, data, seed, factors, n_eval,
              device) -> None:
    """Evaluate ``model`` (trained as ``result``) at every length; add its rows, its curve at
    the longest length and its retrieval rows under the name ``encoding``."""
    T = model.config.block_size
    for r in evaluate_lengths(model, data, factors, n_eval, device):
        row = {
            "encoding": encoding,
            "seed": seed,
            "params": model.num_parameters(),
            "train_steps": result["step"],
            "train_seconds": round(result["seconds"], 1),
            "tokens_per_s": round(result["tokens_per_s"]),
            "train_loss": round(result["train_loss"], 4),
            "eval_length": r["eval_length"],
            "mean_loss": round(r["mean_loss"], 4),
            "mean_loss_se": round(r["mean_loss_se"], 4),
            "accuracy": round(r["accuracy"], 4),
        }
        for (a, b), loss in r["buckets"].items():
            row[f"loss_{a}_{b}"] = round(loss, 4)
        rows.append(row)
        if r["eval_length"] == max(factors) * T:
            curves.setdefault(encoding, []).append(r["per_position"])
    if hasattr(data, "n_digits"):
        for r in retrieval_by_depth(model, data, factors, n=2 * n_eval, device=device):
            retrieval.append({"encoding": encoding, "seed": seed, **r})


def _write_csv(path: Path, rows: list[dict]) -> None:
    columns = list(dict.fromkeys(key for row in rows for key in row))
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, columns)
        writer.writeheader()
        writer.writerows(rows)


def mean_and_spread(rows: list[dict], encoding: str, length: int) -> tuple[float, float]:
    """Mean loss of ``encoding`` at ``length`` over seeds, and its spread: the standard deviation
    across seeds when there are several, else the standard error across evaluation sequences."""
    got = [r for r in rows if r["encoding"] == encoding and r["eval_length"] == length]
    values = torch.tensor([r["mean_loss"] for r in got])
    spread = float(values.std()) if len(got) > 1 else got[0]["mean_loss_se"]
    return float(values.mean()), spread


def summary(rows: list[dict], block_size: int) -> str:
    """Mean loss per encoding and evaluation length, ``mean ± spread``, and its ratio to 1x."""
    lengths = sorted({r["eval_length"] for r in rows})
    encodings = list(dict.fromkeys(r["encoding"] for r in rows))
    width = max(11, *(len(e) + 1 for e in encodings))  # "rope+longrope" too
    seeds = sorted({r["seed"] for r in rows})
    spread_es, spread_en = (
        ("desv. típica entre semillas", "std over seeds")
        if len(seeds) > 1
        else ("e. t. entre secuencias", "s.e. over sequences")  # error típico
    )
    lines = [
        pick(
            f"pérdida media (± {spread_es}; semillas {seeds}); cociente con la pérdida a "
            f"{block_size}",
            f"mean loss (± {spread_en}; seeds {seeds}); ratio to the loss at {block_size}",
        ),
        f"{pick('codific.', 'encoding'):<{width}}" + "".join(f"{L:>22}" for L in lengths),
    ]
    for encoding in encodings:
        cells, base = [], None
        for L in lengths:
            mean, err = mean_and_spread(rows, encoding, L)
            base = base or mean
            cells.append(f"{mean:.3f}±{err:.3f} (x{mean / base:.2f})")
        lines.append(f"{encoding:<{width}}" + "".join(f"{c:>22}" for c in cells))
    return "\n".join(lines)


def _smooth(curve: torch.Tensor, window: int) -> torch.Tensor:
    """Trailing moving average over ``window`` positions that skips NaNs (no target there)."""
    known = ~curve.isnan()
    kernel = torch.ones(1, 1, window)

    def moving_sum(t: torch.Tensor) -> torch.Tensor:
        return F.conv1d(F.pad(t[None, None], (window - 1, 0)), kernel)[0, 0]

    average = moving_sum(curve.nan_to_num(0.0)) / moving_sum(known.float())
    return torch.where(known, average, float("nan"))


def plot_loss_vs_position(curves: dict, block_size: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for encoding, runs in curves.items():
        curve = torch.stack(runs).nanmean(0)
        ax.plot(_smooth(curve, max(1, block_size // 8)), label=encoding, lw=1.4,
                color=colour(encoding))
    ax.axvline(block_size, color="gray", ls="--", lw=1)
    ax.text(block_size, ax.get_ylim()[1], " training length / longitud de entrenamiento",
            va="top", color="gray")
    ax.set_xlabel("position / posición")
    ax.set_ylabel("loss (nats) / pérdida")
    ax.set_title("Loss per position / pérdida por posición")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: the curves stay visible
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def draw_loss_vs_length(ax, rows: list[dict]) -> None:
    """On a Matplotlib ``ax``: each encoding's mean loss against evaluation length (log2 axis),
    with ``mean_and_spread``'s spread as error bars. The lessons' figures draw it too."""
    for encoding in dict.fromkeys(r["encoding"] for r in rows):
        lengths = sorted({r["eval_length"] for r in rows if r["encoding"] == encoding})
        means, errors = zip(*(mean_and_spread(rows, encoding, L) for L in lengths), strict=True)
        ax.errorbar(lengths, means, yerr=errors, marker="o", capsize=3, label=encoding,
                    color=colour(encoding))
    ax.set_xscale("log", base=2)


def plot_loss_vs_length(rows: list[dict], block_size: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    draw_loss_vs_length(ax, rows)
    ax.set_xlabel("evaluation length / longitud de evaluación")
    ax.set_ylabel("mean loss (nats) / pérdida media")
    ax.set_title(f"Trained at {block_size} / entrenado a {block_size}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --- command line: `minimodel compare` --------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="runs/compare", help="output folder / carpeta de salida")
    parser.add_argument("--encodings", nargs="+", choices=list(ENCODINGS),
                        default=list(COURSE))
    parser.add_argument("--seeds", type=int, nargs="+", help="several seeds (default: --seed)")
    parser.add_argument("--factors", type=int, nargs="+", default=list(FACTORS))
    parser.add_argument("--sequences", type=int, default=16, help="evaluation sequences")
    parser.add_argument("--rope-scalings", nargs="+", default=[], metavar="SCALING",
                        help="also evaluate each RoPE model with these scalings, untrained "
                             "(linear ntk dynamic_ntk yarn llama3 longrope) / evaluar también "
                             "cada modelo RoPE con estos escalados, sin entrenar")
    parser.add_argument("--lang", choices=LANGUAGES, default=None, help="es | en")
    add_model_arguments(parser)
    parser.set_defaults(steps=DEFAULT_STEPS, threads=2)


def run(args: argparse.Namespace) -> int:
    if args.threads:
        torch.set_num_threads(args.threads)
    start = time.perf_counter()
    data = load_data(args.data)
    model_config, train_config = configs_from_args(args, data.vocab_size, "none")
    rows = compare(
        model_config,
        train_config,
        data,
        args.out,
        args.encodings,
        args.seeds or [args.seed],
        args.factors,
        args.sequences,
        args.device,
        scalings=args.rope_scalings,
    )
    print(summary(rows, model_config.block_size))
    for encoding in args.encodings:
        if ENCODINGS[encoding].hook.note:
            print(pick(*ENCODINGS[encoding].hook.note))
    minutes = (time.perf_counter() - start) / 60
    print(f"{minutes:.1f} min -> {Path(args.out) / 'results.csv'}, loss_vs_*.png")
    return 0
