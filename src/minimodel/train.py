"""Training the Mini-GPT: AdamW, warmup then cosine decay, checkpoints you can resume from.

For a fixed seed, training on the CPU is deterministic: the weights are drawn from ``seed`` and
the batches from their own generator, seeded from ``seed`` too and saved in every checkpoint, so
a resumed run continues exactly where it stopped.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from minimodel.checkpoint import (
    CheckpointError,
    config_from_checkpoint,
    load_checkpoint,
    load_weights,
    save_checkpoint,
)
from minimodel.data import load_data
from minimodel.device import DEVICES, autocast, resolve_device
from minimodel.encodings import ENCODINGS
from minimodel.evaluate import mean_loss
from minimodel.messages import LANGUAGES, bilingual, pick
from minimodel.model import GPT, ROPE_CONVENTIONS, GPTConfig

CHECKPOINT = "checkpoint.pt"


@dataclass
class TrainConfig:
    """How to train. ``steps`` batches of ``batch_size`` sequences of ``block_size`` tokens."""

    steps: int = 1000
    batch_size: int = 16
    lr: float = 1e-3
    min_lr: float = 1e-4
    warmup: int = 100
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    seed: int = 0
    checkpoint_every: int = 250
    eval_sequences: int = 16


def learning_rate(step: int, config: TrainConfig) -> float:
    """Linear warmup to ``lr``, then cosine decay to ``min_lr`` at the last step."""
    if step < config.warmup:
        return config.lr * (step + 1) / config.warmup
    progress = (step - config.warmup) / max(1, config.steps - config.warmup)
    return config.min_lr + 0.5 * (config.lr - config.min_lr) * (1 + math.cos(math.pi * progress))


class Progress:
    """One status line on stderr: step, loss, tokens per second, elapsed and remaining time.

    On a terminal the line is rewritten in place; in a log file a line is written every tenth of
    the run.
    """

    def __init__(self, total: int, label: str = "", enabled: bool = True) -> None:
        self.total, self.label, self.enabled = total, label, enabled
        self.tty = sys.stderr.isatty()
        self.start = time.perf_counter()
        self.last_print = 0.0

    def update(self, step: int, loss: float, tokens_per_s: float) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        done = step == self.total
        every = max(1, self.total // 10)
        first = step == 1  # shown at once, so that a long run says at once that it runs
        if not first and (
            (self.tty and now - self.last_print < 0.2 and not done)
            or (not self.tty and step % every and not done)
        ):
            return
        self.last_print = now
        elapsed = now - self.start
        eta = elapsed / max(step, 1) * (self.total - step)
        left = _clock(eta) if step > 1 else "?"  # the first step also warms up: no estimate yet
        line = self.label + pick(
            f"paso {step}/{self.total} | pérdida {loss:.4f} | {tokens_per_s / 1000:.1f}k tok/s | "
            f"{_clock(elapsed)} transcurrido, faltan {left}",
            f"step {step}/{self.total} | loss {loss:.4f} | {tokens_per_s / 1000:.1f}k tok/s | "
            f"{_clock(elapsed)} elapsed, {left} left",
        )
        end = "\n" if done or not self.tty else ""
        print(("\r\033[K" if self.tty else "") + line, end=end, file=sys.stderr, flush=True)


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes}:{seconds:02d}"


def train(
    model_config: GPTConfig,
    train_config: TrainConfig,
    data,
    out: str | Path | None = None,
    device: str | torch.device = "cpu",
    resume: bool = False,
    progress: bool = True,
    label: str = "",
) -> dict:
    """Train a Mini-GPT on ``data`` (see ``minimodel.data``) and return it with its metrics.

    Args:
        model_config: the model; ``vocab_size`` must match the data's.
        train_config: the optimisation.
        data: a dataset from ``minimodel.data.load_data``.
        out: folder for ``checkpoint.pt`` (``None``: no checkpoints).
        device: ``cpu``, ``cuda`` or ``auto``.
        resume: continue from ``out/checkpoint.pt`` if it exists; the saved model, data and
            seed must match the ones asked for.
        progress: show the progress line.
        label: text in front of the progress line.

    Returns:
        Dict with ``model`` (in eval mode), ``train_loss`` (mean of the last 50 steps),
        ``val_loss`` (at ``block_size``), ``tokens_per_s``, ``seconds`` and ``step``.
    """
    device = resolve_device(device)
    if model_config.vocab_size != data.vocab_size:
        raise ValueError(
            bilingual(
                f"vocab_size={model_config.vocab_size} no coincide con el de los datos "
                f"({data.vocab_size}).",
                f"vocab_size={model_config.vocab_size} does not match the data's "
                f"({data.vocab_size}).",
            )
        )
    path = Path(out) / CHECKPOINT if out is not None else None
    torch.manual_seed(train_config.seed)
    model = GPT(model_config).to(device)
    optimizer = model.optimizer(train_config.lr, train_config.weight_decay)
    batches = torch.Generator().manual_seed(train_config.seed + 1)
    step, seconds, history = 0, 0.0, []
    if resume and path is not None and path.is_file():
        state = load_checkpoint(path)
        _check_same_run(state, model_config, train_config, data, path)
        load_weights(model, state, path)
        optimizer.load_state_dict(state["optimizer"])
        batches.set_state(state["batch_rng"])
        torch.set_rng_state(state["torch_rng"])
        step, seconds = state["step"], state["seconds"]
        history = list(state["loss_history"])

    def save() -> None:
        if path is not None:
            save_checkpoint(
                path,
                model,
                step=step,
                seconds=seconds,
                train_config=asdict(train_config),
                data=data.spec,
                vocab=data.vocab.chars if hasattr(data, "vocab") else None,
                optimizer=optimizer.state_dict(),
                batch_rng=batches.get_state(),
                torch_rng=torch.get_rng_state(),
                loss_history=history,
            )

    T, B = model_config.block_size, train_config.batch_size
    bar = Progress(train_config.steps, label, progress)
    model.train()
    tick = time.perf_counter()
    while step < train_config.steps:
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, train_config)
        x, y = data.batch("train", B, T, batches)
        x, y = x.to(device), y.to(device)
        with autocast(device):
            _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if train_config.grad_clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), train_config.grad_clip)
        optimizer.step()
        step += 1
        history.append(loss.item())
        now = time.perf_counter()
        seconds, tick = seconds + now - tick, now
        bar.update(step, history[-1], step * B * T / seconds)
        every = train_config.checkpoint_every or train_config.steps
        if path is not None and (step % every == 0 or step == train_config.steps):
            save()
            tick = time.perf_counter()  # saving is not training time
    model.eval()
    val_loss = mean_loss(model, data, T, train_config.eval_sequences, device)
    return {
        "model": model,
        "step": step,
        "train_loss": sum(history[-50:]) / max(1, len(history[-50:])),
        "val_loss": val_loss,
        "tokens_per_s": step * B * T / seconds if seconds else float("nan"),
        "seconds": seconds,
    }


def _check_same_run(state, model_config, train_config, data, path) -> None:
    """Resuming continues the same run: same model, data and seed, or a clear error."""
    saved = config_from_checkpoint(state, path)
    saved_train = state.get("train_config", {})
    problems = [
        f"{name}: {a!r} != {b!r}"
        for name, a, b in [
            *((k, v, getattr(model_config, k)) for k, v in saved.to_dict().items()),
            ("data", state.get("data"), data.spec),
            ("seed", saved_train.get("seed"), train_config.seed),
            ("batch_size", saved_train.get("batch_size"), train_config.batch_size),
        ]
        if a != b
    ]
    if problems:
        raise CheckpointError(
            bilingual(
                f"El punto de control {path} es de otro entrenamiento; no puedo reanudarlo con "
                f"estas opciones ({'; '.join(problems)}). Usa otra carpeta --out o las mismas "
                "opciones.",
                f"Checkpoint {path} belongs to another run; it cannot be resumed with these "
                f"options ({'; '.join(problems)}). Use another --out folder or the same options.",
            )
        )


# The lesson's run (19.01): 300 steps of the default model take about a minute on 2 CPU cores.
DEFAULT_STEPS = 300


# --- command line: `minimodel train` ----------------------------------------------------------
def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by `train` and `compare`: data, model size, RoPE, optimisation."""
    defaults, train_defaults = GPTConfig(), TrainConfig()
    group = parser.add_argument_group("data and model / datos y modelo")
    group.add_argument(
        "--data", default="stdlib", help="stdlib, copy, recall, passkey, or a UTF-8 text file"
    )
    group.add_argument("--block-size", type=int, default=defaults.block_size)
    group.add_argument("--layers", type=int, default=defaults.n_layer)
    group.add_argument("--heads", type=int, default=defaults.n_head)
    group.add_argument("--width", type=int, default=defaults.n_embd)
    group.add_argument("--dropout", type=float, default=defaults.dropout)
    group.add_argument("--rope-base", type=float, default=defaults.rope_base)
    group.add_argument("--rope-convention", choices=ROPE_CONVENTIONS, default="interleaved")
    group.add_argument("--rope-scaling", default=None, help="a scaling of positional.scaling")
    group.add_argument("--rope-factor", type=float, default=defaults.rope_scaling_factor)
    group = parser.add_argument_group("training / entrenamiento")
    group.add_argument("--steps", type=int, default=train_defaults.steps)
    group.add_argument("--batch-size", type=int, default=train_defaults.batch_size)
    group.add_argument("--lr", type=float, default=train_defaults.lr)
    group.add_argument("--min-lr", type=float, default=train_defaults.min_lr)
    group.add_argument("--warmup", type=int, default=train_defaults.warmup)
    group.add_argument("--weight-decay", type=float, default=train_defaults.weight_decay)
    group.add_argument("--seed", type=int, default=train_defaults.seed)
    group.add_argument("--device", choices=DEVICES, default="auto")
    group.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")


def configs_from_args(args, vocab_size: int, positional: str) -> tuple[GPTConfig, TrainConfig]:
    model_config = GPTConfig(
        vocab_size=vocab_size,
        block_size=args.block_size,
        n_layer=args.layers,
        n_head=args.heads,
        n_embd=args.width,
        dropout=args.dropout,
        positional=positional,
        rope_base=args.rope_base,
        rope_convention=args.rope_convention,
        rope_scaling=args.rope_scaling,
        rope_scaling_factor=args.rope_factor,
    )
    train_config = TrainConfig(
        steps=args.steps,
        batch_size=args.batch_size,
        lr=args.lr,
        min_lr=args.min_lr,
        warmup=args.warmup,
        weight_decay=args.weight_decay,
        seed=args.seed,
        checkpoint_every=getattr(args, "checkpoint_every", TrainConfig.checkpoint_every),
    )
    return model_config, train_config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--positional", choices=list(ENCODINGS), default=GPTConfig.positional)
    parser.add_argument(
        "--out",
        default=None,
        help="folder for checkpoint.pt / carpeta del punto de control "
        "(default: build/runs/<positional>)",
    )
    parser.add_argument("--resume", action="store_true", help="continue from --out/checkpoint.pt")
    parser.add_argument("--checkpoint-every", type=int, default=TrainConfig.checkpoint_every)
    parser.add_argument("--lang", choices=LANGUAGES, default=None, help="es | en")
    add_model_arguments(parser)
    parser.set_defaults(steps=DEFAULT_STEPS)


def describe(model_config: GPTConfig, train_config: TrainConfig, data_name: str, out) -> str:
    """The run's configuration in one line, in the reader's language."""
    model = (
        f"positional={model_config.positional} block_size={model_config.block_size} "
        f"layers={model_config.n_layer} heads={model_config.n_head} width={model_config.n_embd}"
    )
    run = f"steps={train_config.steps} batch_size={train_config.batch_size} lr={train_config.lr}"
    return pick(
        f"Entrenando un Mini-GPT · datos={data_name} {model} · {run} · {torch.get_num_threads()} "
        f"hilos · punto de control en {out}",
        f"Training a Mini-GPT · data={data_name} {model} · {run} · {torch.get_num_threads()} "
        f"threads · checkpoint in {out}",
    )


def run(args: argparse.Namespace) -> int:
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.out is None:
        args.out = str(Path("build") / "runs" / args.positional)
    path = Path(args.out) / CHECKPOINT
    if path.exists() and not args.resume:
        raise SystemExit(
            bilingual(
                f"Ya hay un punto de control en {path}. Usa --resume para continuarlo u otra "
                "carpeta --out para empezar de cero.",
                f"There is already a checkpoint at {path}. Use --resume to continue it or "
                "another --out folder to start from scratch.",
            )
        )
    data = load_data(args.data)
    model_config, train_config = configs_from_args(args, data.vocab_size, args.positional)
    print(describe(model_config, train_config, args.data, args.out), flush=True)
    result = train(model_config, train_config, data, args.out, args.device, resume=args.resume)
    print(
        f"positional={args.positional} params={result['model'].num_parameters()} "
        f"train_loss={result['train_loss']:.4f} val_loss={result['val_loss']:.4f} "
        f"tokens/s={result['tokens_per_s']:.0f} checkpoint={path}"
    )
    return 0
