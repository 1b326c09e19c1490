"""Classic mistakes in equivariance.py (lesson 17.00): what a student who makes each one writes.

See ``grader/build/mistakes.py``.
"""

import torch

from grader.build.mistakes import mistake
from minimodel.positional.equivariance import permutation_equivariance_gap as right_gap


def _difference(layer, x: torch.Tensor, first: torch.Tensor, after: torch.Tensor | None,
                *, axis: int = 1) -> torch.Tensor:
    """``layer(x permuted by first) - layer(x) permuted by after`` (``None``: not permuted),
    the permutations taken along ``axis``, without gradients."""
    def permute(z: torch.Tensor, perm: torch.Tensor | None) -> torch.Tensor:
        return z if perm is None else z[perm] if axis == 0 else z[:, perm]

    with torch.no_grad():
        return layer(permute(x, first)) - permute(layer(x), after)


@mistake("permutation_equivariance_gap", "not-permuted",
         es="Compara f(x[:, perm]) con la salida permutada igual, f(x)[:, perm]: tu código la "
            "compara con f(x) sin permutar, y así ninguna capa parece equivariante.",
         en="Compare f(x[:, perm]) with the output permuted the same way, f(x)[:, perm]: your "
            "code compares it with f(x) unpermuted, and then no layer looks equivariant.")
def not_permuted(layer, x: torch.Tensor, perm: torch.Tensor) -> float:
    return _difference(layer, x, perm, None).abs().max().item()


@mistake("permutation_equivariance_gap", "inverse",
         es="Usas la permutación inversa: x[:, perm] pone en la fila t la fila perm[t] de x; "
            "permuta la salida igual, f(x)[:, perm], sin invertir perm.",
         en="You use the inverse permutation: x[:, perm] puts row perm[t] of x in row t; "
            "permute the output the same way, f(x)[:, perm], without inverting perm.")
def inverse(layer, x: torch.Tensor, perm: torch.Tensor) -> float:
    return _difference(layer, x, perm, torch.argsort(perm)).abs().max().item()


@mistake("permutation_equivariance_gap", "inverse-both",
         es="Permutas la entrada y la salida con la inversa de perm (perm.argsort()). "
            "x[:, perm] pone en la fila t la fila perm[t] de x: usa perm tal cual, "
            "x[:, perm] y f(x)[:, perm], sin invertirla.",
         en="You permute both the input and the output with the inverse of perm "
            "(perm.argsort()). x[:, perm] puts row perm[t] of x in row t: use perm as it is, "
            "x[:, perm] and f(x)[:, perm], without inverting it.")
def inverse_both(layer, x: torch.Tensor, perm: torch.Tensor) -> float:
    return right_gap(layer, x, torch.argsort(perm))


@mistake("permutation_equivariance_gap", "batch-axis",
         es="Las posiciones están en el eje 1: x[:, perm] y f(x)[:, perm]. Tu código permuta el "
            "eje 0 (el lote), que ninguna capa mezcla, y el desvío sale 0 (o falla si el lote es "
            "más corto que la secuencia).",
         en="Positions are along axis 1: x[:, perm] and f(x)[:, perm]. Your code permutes axis 0 "
            "(the batch), which no layer mixes, so the gap comes out 0 (or it fails when the "
            "batch is shorter than the sequence).")
def batch_axis(layer, x: torch.Tensor, perm: torch.Tensor) -> float:
    return _difference(layer, x, perm, perm, axis=0).abs().max().item()


@mistake("permutation_equivariance_gap", "no-abs",
         es="Falta el valor absoluto: el desvío es max |f(x[:, perm]) − f(x)[:, perm]|; sin abs, "
            "una diferencia negativa grande se pierde.",
         en="The absolute value is missing: the gap is max |f(x[:, perm]) − f(x)[:, perm]|; "
            "without abs, a large negative difference is lost.")
def no_abs(layer, x: torch.Tensor, perm: torch.Tensor) -> float:
    return _difference(layer, x, perm, perm).max().item()


@mistake("permutation_equivariance_gap", "mean",
         es="El desvío es el MÁXIMO de la diferencia absoluta, no su media: una sola entrada "
            "distinta basta para romper la equivarianza.",
         en="The gap is the MAXIMUM of the absolute difference, not its mean: a single different "
            "entry is enough to break equivariance.")
def mean(layer, x: torch.Tensor, perm: torch.Tensor) -> float:
    return _difference(layer, x, perm, perm).abs().mean().item()


@mistake("permutation_equivariance_gap", "norm",
         es="El desvío es el máximo de la diferencia absoluta, no su norma.",
         en="The gap is the maximum of the absolute difference, not its norm.")
def norm(layer, x: torch.Tensor, perm: torch.Tensor) -> float:
    return _difference(layer, x, perm, perm).norm().item()
