"""Checkpoints: a Mini-GPT with everything needed to evaluate it, generate, or resume training.

A checkpoint is one ``torch.save`` file holding plain data only (numbers, strings, tensors), read
back with ``weights_only=True``: loading a checkpoint never runs code. It is written to a temporary
file first and renamed, so an interrupted save never leaves half a file behind. Anything wrong
with a file (missing, truncated, not ours, another model) raises ``CheckpointError`` with a
message in both languages.
"""

from __future__ import annotations

import os
from dataclasses import fields
from pathlib import Path

import torch

from minimodel.messages import bilingual
from minimodel.model import GPT, GPTConfig

FORMAT = "minimodel-checkpoint"
VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: corrupt, of another format, or for another model."""


def save_checkpoint(path: str | Path, model: GPT, **extra) -> None:
    """Write ``model`` (its config and weights) and ``extra`` plain data to ``path`` atomically.

    ``extra`` holds what training adds: ``step``, ``optimizer`` state, ``train_config``, ``data``
    (the dataset's spec), random-generator states, metrics.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {
        "format": FORMAT,
        "version": VERSION,
        "model_config": model.config.to_dict(),
        "model": model.state_dict(),
        **extra,
    }
    tmp = path.with_name(path.name + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict:
    """Read and check a checkpoint; returns its dict (see ``save_checkpoint``)."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(
            bilingual(f"No existe el punto de control {path}.", f"No checkpoint at {path}.")
        )
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as error:  # torch raises many kinds for a damaged file
        raise CheckpointError(
            bilingual(
                f"{path} no se puede leer como punto de control: está dañado, incompleto o no es "
                f"de minimodel ({type(error).__name__}). Vuelve a entrenar o usa otra copia.",
                f"{path} cannot be read as a checkpoint: it is damaged, truncated or not a "
                f"minimodel file ({type(error).__name__}). Train again or use another copy.",
            )
        ) from error
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise CheckpointError(
            bilingual(
                f"{path} no es un punto de control de minimodel.",
                f"{path} is not a minimodel checkpoint.",
            )
        )
    if state.get("version") != VERSION:
        raise CheckpointError(
            bilingual(
                f"{path} tiene la versión de formato {state.get('version')}; esta versión de "
                f"minimodel lee la {VERSION}.",
                f"{path} has format version {state.get('version')}; this minimodel reads "
                f"version {VERSION}.",
            )
        )
    return state


def config_from_checkpoint(state: dict, path: str | Path = "checkpoint") -> GPTConfig:
    """The ``GPTConfig`` saved in a checkpoint, with a clear error if it is not one we know."""
    saved = state.get("model_config")
    known = {f.name for f in fields(GPTConfig)}
    if not isinstance(saved, dict) or set(saved) - known:
        unknown = sorted(set(saved) - known) if isinstance(saved, dict) else saved
        raise CheckpointError(
            bilingual(
                f"La configuración del modelo en {path} no es válida (campos desconocidos: "
                f"{unknown}).",
                f"The model configuration in {path} is not valid (unknown fields: {unknown}).",
            )
        )
    try:
        return GPTConfig(**saved)
    except (TypeError, ValueError) as error:
        raise CheckpointError(
            bilingual(
                f"La configuración del modelo en {path} no es válida: {error}",
                f"The model configuration in {path} is not valid: {error}",
            )
        ) from error


def load_weights(model: GPT, state: dict, path: str | Path = "checkpoint") -> None:
    """Load a checkpoint's weights into ``model``; a mismatch names the differing tensors."""
    try:
        model.load_state_dict(state["model"])
    except (KeyError, RuntimeError) as error:
        detail = str(error).splitlines()[-1][:300] if str(error) else type(error).__name__
        raise CheckpointError(
            bilingual(
                f"Los pesos de {path} no corresponden a este modelo "
                f"(positional={model.config.positional!r}): {detail}",
                f"The weights in {path} do not fit this model "
                f"(positional={model.config.positional!r}): {detail}",
            )
        ) from error


def load_model(path: str | Path, device: str | torch.device = "cpu") -> tuple[GPT, dict]:
    """Rebuild the Mini-GPT saved at ``path`` (in eval mode, on ``device``) and its checkpoint."""
    state = load_checkpoint(path)
    model = GPT(config_from_checkpoint(state, path))
    load_weights(model, state, path)
    return model.to(device).eval(), state
