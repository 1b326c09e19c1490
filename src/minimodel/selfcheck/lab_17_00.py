"""Visible checks for lab 17.00 (why position). Students may read these; the grader's differ."""

from __future__ import annotations

import numpy as np
import torch

from minimodel.selfcheck.compare import CheckFailure, CheckList, StudentModule, expect_array
from minimodel.selfcheck.contracts import broken
from minimodel.selfcheck.snapshots import Snapshots

checks = CheckList()
equivariance = StudentModule("equivariance")
TARGET = "permutation_equivariance_gap"
snap = Snapshots("17.00")


def _gap(layer, x, perm) -> float:
    return equivariance.permutation_equivariance_gap(layer, x, perm)


def _number(value: object, name: str) -> float:
    """The gap as a float, whatever kind of number it came as: as in the grader, its value is
    judged apart from its type, which has a check of its own (``returns_a_python_float``)."""
    numbers = (int, float, np.generic, np.ndarray, torch.Tensor)
    if isinstance(value, bool) or not isinstance(value, numbers) or (
            value.numel() if isinstance(value, torch.Tensor) else np.size(value)) != 1:
        raise CheckFailure(*broken(TARGET, "not-a-float", name, type(value).__name__))
    return float(value)


def _expect_stored(value: object, name: str, *, atol: float) -> None:
    """Fail unless ``value`` is within ``atol`` of the stored answer ``name`` (naming a classic
    mistake when it gives what that mistake gives)."""
    snap.expect(np.array(_number(value, name)), name, atol=atol, rtol=0.0)


def _expect_number(value: object, expected: float, *, name: str, atol: float = 1e-6) -> None:
    """Fail unless ``value`` is within ``atol`` of ``expected``."""
    expect_array(np.array(_number(value, name)), np.array(expected), name=name, atol=atol,
                 rtol=0.0)


def _sequence(B: int = 3, T: int = 6, d: int = 4) -> torch.Tensor:
    return torch.randn(B, T, d, generator=torch.Generator().manual_seed(0))


@checks.add(TARGET, "devuelve un float de Python", "returns a Python float")
def returns_a_python_float() -> None:
    value = _gap(lambda z: 2 * z + 1, _sequence(), torch.tensor([3, 0, 5, 1, 4, 2]))
    if not isinstance(value, float):
        code = "returns-tensor" if isinstance(value, torch.Tensor) else "not-a-float"
        raise CheckFailure(*broken(TARGET, code, TARGET, type(value).__name__))


@checks.add(TARGET, "una capa que no mira el orden da 0", "a layer blind to order gives 0")
def identity_is_equivariant() -> None:
    x, perm = _sequence(), torch.tensor([3, 0, 5, 1, 4, 2])
    value = _number(_gap(lambda z: 2 * z + 1, x, perm), "permutation_equivariance_gap(2x + 1)")
    if value > 1e-6:
        raise CheckFailure(
            f"Para f(x) = 2x + 1, que trata cada fila por separado, el desvío debe ser 0 y "
            f"devolviste {value:.4g}. Compara f(x[:, perm]) con f(x)[:, perm]: hay que permutar "
            "también la salida, y sobre el eje de las posiciones (dim 1), no el del lote.",
            f"For f(x) = 2x + 1, which treats each row on its own, the gap must be 0 and you "
            f"returned {value:.4g}. Compare f(x[:, perm]) with f(x)[:, perm]: the output must be "
            "permuted too, along the position axis (dim 1), not the batch axis.",
        )
    _expect_number(value, 0.0, name="permutation_equivariance_gap(2x + 1)")


@checks.add(TARGET, "mide una capa que suma su posición", "measures a layer that adds its position")
def position_ramp() -> None:
    x, perm = _sequence(), torch.tensor([3, 0, 5, 1, 4, 2])
    ramp = torch.arange(6, dtype=torch.float32)[:, None]  # row t gets + t
    # f(Px)[t] - (Pf(x))[t] = t - perm[t]: the largest |t - perm[t]| is |2 - 5| = 3.
    value = _gap(lambda z: z + ramp, x, perm)
    _expect_number(value, 3.0, name="permutation_equivariance_gap(x + t)", atol=1e-5)


@checks.add(TARGET, "usa perm y no su inversa", "uses perm, not its inverse")
def direction_of_perm() -> None:
    # four equal sequences: permuting the batch axis instead of the positions changes nothing
    x = torch.tensor([1.0, 2.0, 3.0, 4.0]).reshape(1, 4, 1).repeat(4, 1, 1)
    weights = torch.tensor([1.0, 10.0, 100.0, 1000.0])[:, None]  # f(z)[t] = w_t * z[t]
    perm = torch.tensor([1, 2, 3, 0])  # a cycle: its inverse [3, 0, 1, 2] is another permutation
    # |f(Px)[t] - (Pf(x))[t]| = x[perm[t]] * |w_t - w_perm[t]|: 18, 270, 3600, 999 -> 3600.
    # Reading perm the other way round gives 3996.
    value = _gap(lambda z: z * weights, x, perm)
    _expect_stored(value, "permutation_equivariance_gap(w_t x_t, [1, 2, 3, 0])", atol=1e-3)


@checks.add(TARGET, "atención sin posiciones: casi 0", "attention without positions: almost 0")
def attention_is_equivariant() -> None:
    torch.manual_seed(1)
    attention = torch.nn.MultiheadAttention(8, num_heads=2, batch_first=True)
    x, perm = torch.randn(2, 7, 8), torch.randperm(7)
    value = _gap(lambda z: attention(z, z, z, need_weights=False)[0], x, perm)
    _expect_number(value, 0.0, name="permutation_equivariance_gap(attention)", atol=1e-5)


@checks.add(TARGET, "atención con máscara causal: no equivariante",
            "causal attention: not equivariant")
def causal_attention_is_not() -> None:
    torch.manual_seed(2)
    attention = torch.nn.MultiheadAttention(8, num_heads=2, batch_first=True)
    mask = torch.ones(7, 7, dtype=torch.bool).triu(1)
    x, perm = torch.randn(2, 7, 8), torch.tensor([6, 5, 4, 3, 2, 1, 0])

    def causal(z: torch.Tensor) -> torch.Tensor:
        return attention(z, z, z, attn_mask=mask, need_weights=False)[0]

    value = _gap(causal, x, perm)
    _expect_stored(value, "permutation_equivariance_gap(causal attention, reversed)", atol=1e-5)
