"""Evaluating a Mini-GPT beyond its training length: loss per position, retrieval by depth.

A mean over a long window hides where a model breaks: an encoding that fails past position 128
still looks fine averaged over 256 tokens. So the loss is kept per position (averaged over
sequences), then summarised in buckets ``[0, T)``, ``[T, 2T)``, ``[2T, 4T)``, ``[4T, 8T)`` for a
model trained at length ``T``: the buckets and their means come from the student's
``doubling_buckets`` and ``bucket_means`` (``minimodel.positional.extrapolation``, lab 18.01),
as the model's encodings come from the student's files.
"""

from __future__ import annotations

import argparse
import copy
import math

import torch
import torch.nn.functional as F

from minimodel.checkpoint import load_model
from minimodel.data import load_data
from minimodel.device import DEVICES, autocast, resolve_device
from minimodel.hooks import student_function
from minimodel.messages import bilingual
from minimodel.model import GPT

FACTORS = (1, 2, 4, 8)
DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)


@torch.no_grad()
def token_losses(
    model: GPT, x: torch.Tensor, y: torch.Tensor, device, batch_size: int = 8
) -> tuple[torch.Tensor, torch.Tensor]:
    """Loss and correctness of every prediction, on the CPU.

    Args:
        x, y: inputs and targets ``(N, L)``; ``y = -1`` marks positions without a target.

    Returns:
        ``loss`` ``(N, L)`` float32 (NaN where there is no target) and ``correct`` ``(N, L)``
        bool (argmax equals the target).
    """
    device = torch.device(device)
    losses, correct = [], []
    for i in range(0, len(x), batch_size):
        xb, yb = x[i : i + batch_size].to(device), y[i : i + batch_size].to(device)
        with autocast(device):
            logits, _ = model(xb)
        logits = logits.float()
        loss = F.cross_entropy(logits.transpose(1, 2), yb.clamp(min=0), reduction="none")
        losses.append(loss.masked_fill(yb < 0, math.nan).cpu())
        correct.append((logits.argmax(-1) == yb).cpu())
    return torch.cat(losses), torch.cat(correct)


def mean_loss(model: GPT, data, length: int, n: int, device="cpu") -> float:
    """Mean validation loss over ``n`` deterministic sequences of ``length`` tokens."""
    x, y = data.eval_batch("val", n, length)
    return float(token_losses(model, x, y, device)[0].nanmean())


def allow_length(model: GPT, length: int, seed: int = 0) -> GPT:
    """A copy of ``model`` that accepts sequences of ``length`` tokens (the policy for tables).

    The encoding's hook decides (``Hook.allowing``): learned positions get a longer table whose
    rows past the trained ones are as initialised; other encodings, and any model that already
    accepts ``length``, are returned unchanged (sinusoidal's table covers ``max_len`` positions).
    """
    hook = model.hooks.allowing(length, seed)
    if hook is model.hooks:
        return model
    longer = copy.deepcopy(model)
    longer.hooks = hook
    return longer


SUMMARY = ("La evaluación por posición resume la pérdida",
           "Evaluating by position summarises the loss")


def buckets(block_size: int, length: int) -> list[tuple[int, int]]:
    """The doubling buckets ``[0, T), [T, 2T), [2T, 4T), ...`` of ``0 .. length - 1``: the
    student's ``doubling_buckets`` (lab 18.01)."""
    return student_function("extrapolation", "doubling_buckets", SUMMARY, block_size, length)


def bucket_losses(loss: torch.Tensor, block_size: int) -> dict[tuple[int, int], float]:
    """``{(start, end): mean loss}`` of ``loss`` ``(N, L)`` over ``buckets(block_size, L)``,
    NaN (no target) skipped: the student's ``bucket_means`` (lab 18.01)."""
    spans = buckets(block_size, loss.shape[-1])
    means = student_function("extrapolation", "bucket_means", SUMMARY, loss, spans)
    return dict(zip(spans, (float(m) for m in means), strict=True))


def evaluate_lengths(model: GPT, data, factors=FACTORS, n: int = 16, device="cpu") -> list[dict]:
    """Loss at ``factor x block_size`` for each factor, per position and per bucket.

    Returns:
        One dict per length: ``eval_length``, ``mean_loss`` (over every position), its standard
        error ``mean_loss_se`` (across the ``n`` sequences), ``buckets`` (``{(lo, hi): loss}``),
        ``per_position`` (``(L,)`` tensor) and, for tasks, ``accuracy`` on the answers.
    """
    T = model.config.block_size
    rows = []
    for factor in factors:
        length = factor * T
        x, y = data.eval_batch("val", n, length)
        loss, correct = token_losses(allow_length(model, length), x, y, device)
        per_sequence = loss.nanmean(dim=1)
        rows.append(
            {
                "eval_length": length,
                "mean_loss": float(loss.nanmean()),
                "mean_loss_se": float(per_sequence.std() / math.sqrt(n)) if n > 1 else math.nan,
                "buckets": bucket_losses(loss, T),
                "per_position": loss.nanmean(dim=0),
                "accuracy": float(correct[y >= 0].float().mean()),
            }
        )
    return rows


def retrieval_by_depth(
    model: GPT, task, factors=FACTORS, depths=DEPTHS, n: int = 32, device="cpu"
) -> list[dict]:
    """Passkey retrieval: fraction of sequences whose every digit is predicted exactly.

    With teacher forcing, "every digit right" is the same as greedy decoding writing the passkey.
    """
    if not hasattr(task, "n_digits"):
        raise ValueError(
            bilingual(
                "La recuperación por profundidad necesita un modelo entrenado con --data passkey.",
                "Retrieval by depth needs a model trained with --data passkey.",
            )
        )
    T = model.config.block_size
    rows = []
    for factor in factors:
        longer = allow_length(model, factor * T)
        for depth in depths:
            x, y = task.eval_batch("val", n, factor * T, depth=depth)
            _, correct = token_losses(longer, x, y, device)
            hit = (correct | (y < 0)).all(dim=1)
            accuracy = float(hit.float().mean())
            rows.append({"eval_length": factor * T, "depth": depth, "accuracy": accuracy})
    return rows


def format_table(rows: list[dict], block_size: int) -> str:
    """The rows of ``evaluate_lengths`` as a plain-text table (one line per length)."""
    longest = max(r["eval_length"] for r in rows)
    spans = buckets(block_size, longest)
    head = f"{'length':>7} {'mean loss':>14} " + " ".join(f"{f'[{a},{b})':>12}" for a, b in spans)
    lines = [head]
    for r in rows:
        cells = [f"{r['buckets'][s]:12.4f}" if s in r["buckets"] else f"{'':>12}" for s in spans]
        mean = f"{r['mean_loss']:.4f}±{r['mean_loss_se']:.4f}"
        lines.append(f"{r['eval_length']:>7} {mean:>14} " + " ".join(cells))
    return "\n".join(lines)


def format_retrieval(rows: list[dict]) -> str:
    """The rows of ``retrieval_by_depth`` as a table: one line per length, one column per depth."""
    depths = sorted({r["depth"] for r in rows})
    lines = [f"{'length':>7} " + " ".join(f"{f'depth {d:g}':>10}" for d in depths)]
    for length in sorted({r["eval_length"] for r in rows}):
        hits = {r["depth"]: r["accuracy"] for r in rows if r["eval_length"] == length}
        lines.append(f"{length:>7} " + " ".join(f"{hits[d]:10.2f}" for d in depths))
    return "\n".join(lines)


# --- command line: `minimodel evaluate` -------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkpoint", help="checkpoint.pt written by `minimodel train`")
    parser.add_argument("--factors", type=int, nargs="+", default=list(FACTORS))
    parser.add_argument("--sequences", type=int, default=16, help="sequences per length")
    parser.add_argument("--depths", type=float, nargs="+", default=list(DEPTHS))
    parser.add_argument("--device", choices=DEVICES, default="auto")


def run(args: argparse.Namespace) -> int:
    device = resolve_device(args.device)
    model, state = load_model(args.checkpoint, device)
    data = load_data(state["data"])
    T = model.config.block_size
    print(f"positional={model.config.positional} block_size={T} data={state['data']['name']}")
    rows = evaluate_lengths(model, data, args.factors, args.sequences, device)
    print(format_table(rows, T))
    if state["data"]["name"] not in ("stdlib", "text"):  # a task: accuracy on its answers
        print("accuracy: " + "  ".join(f"{r['eval_length']}: {r['accuracy']:.3f}" for r in rows))
    if hasattr(data, "n_digits"):
        n = 2 * args.sequences
        found = retrieval_by_depth(model, data, args.factors, args.depths, n, device)
        print(format_retrieval(found))
    return 0
