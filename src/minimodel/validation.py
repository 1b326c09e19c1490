"""Argument checks shared by every encoding: clear, bilingual errors before any math runs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from minimodel.messages import bilingual


def require_int(name: str, value: object, minimum: int | None = None) -> None:
    """Raise ``TypeError`` unless ``value`` is an integer, ``ValueError`` if below ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            bilingual(
                f"{name} debe ser un entero (int); recibí {type(value).__name__}.",
                f"{name} must be an integer (int); got {type(value).__name__}.",
            )
        )
    if minimum is not None and value < minimum:
        raise ValueError(
            bilingual(
                f"{name} debe ser >= {minimum}; recibí {value}.",
                f"{name} must be >= {minimum}; got {value}.",
            )
        )


def require_even(name: str, value: int) -> None:
    """Raise ``ValueError`` unless ``value`` is a positive even integer (split into pairs)."""
    require_int(name, value, 2)
    if value % 2:
        raise ValueError(
            bilingual(
                f"{name} debe ser par para formar parejas de dimensiones; recibí {name}={value}.",
                f"{name} must be even to form pairs of dimensions; got {name}={value}.",
            )
        )


def require_tensor(name: str, x: object, shape: str, ndim: int | Sequence[int]) -> torch.Tensor:
    """Raise unless ``x`` is a floating-point tensor with ``ndim`` dimensions.

    ``shape`` is the expected shape as the docstring writes it, e.g. ``"(B, H, T, D)"``; it is
    quoted in the message so the student sees what was expected next to what arrived.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(
            bilingual(
                f"{name} debe ser un torch.Tensor de forma {shape}; recibí {type(x).__name__}.",
                f"{name} must be a torch.Tensor of shape {shape}; got {type(x).__name__}.",
            )
        )
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if x.dim() not in allowed or not x.is_floating_point():
        raise ValueError(
            bilingual(
                f"{name} debe ser un tensor de punto flotante de forma {shape}; "
                f"recibí forma {tuple(x.shape)} y dtype {x.dtype}.",
                f"{name} must be a floating-point tensor of shape {shape}; "
                f"got shape {tuple(x.shape)} and dtype {x.dtype}.",
            )
        )
    return x


def require_int_tensor(name: str, x: object, shape: str, ndim: int | Sequence[int]) -> torch.Tensor:
    """Raise unless ``x`` is an integer tensor (``int64``, ``int32``, ...) with ``ndim`` dimensions.

    Positions and relative distances are counts: a float tensor there usually means a bug (for
    instance ``torch.arange(T, dtype=torch.float16)`` cannot count past 2048 exactly).
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(
            bilingual(
                f"{name} debe ser un torch.Tensor de enteros de forma {shape}; "
                f"recibí {type(x).__name__}.",
                f"{name} must be a torch.Tensor of integers of shape {shape}; "
                f"got {type(x).__name__}.",
            )
        )
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if x.dim() not in allowed or x.is_floating_point() or x.is_complex() or x.dtype == torch.bool:
        raise ValueError(
            bilingual(
                f"{name} debe ser un tensor de enteros (p. ej. torch.long) de forma {shape}; "
                f"recibí forma {tuple(x.shape)} y dtype {x.dtype}.",
                f"{name} must be an integer tensor (e.g. torch.long) of shape {shape}; "
                f"got shape {tuple(x.shape)} and dtype {x.dtype}.",
            )
        )
    return x


def require_choice(name: str, value: object, choices: Sequence[str]) -> None:
    """Raise ``ValueError`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        options = ", ".join(repr(choice) for choice in choices)
        raise ValueError(
            bilingual(
                f"{name} debe ser uno de {options}; recibí {value!r}.",
                f"{name} must be one of {options}; got {value!r}.",
            )
        )


def require_above(name: str, value: object, bound: float) -> None:
    """Raise ``ValueError`` unless ``value`` is a real number (not a bool) above ``bound``."""
    number = isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
    if not number or not value > bound:
        raise ValueError(
            bilingual(
                f"{name} debe ser un número > {bound:g}; recibí {value!r}.",
                f"{name} must be a number > {bound:g}; got {value!r}.",
            )
        )
